"""The host heap keeps freed op temporaries (gpugrad/_host_memory.py): on glibc, an op that
makes four megabyte arrays and frees them, again and again, stops page-faulting;
GPUGRAD_HEAP_TUNING=0 leaves glibc's defaults."""
import os
import subprocess
import sys

import pytest

from gpugrad import _host_memory

glibc = pytest.mark.skipif(not _host_memory.tuned, reason="the C library is not glibc")

FAULTS = """
import resource, numpy as np, gpugrad
x = np.ones(1 << 18, np.float32)
def op():
    a = x * 2; b = a + 1; c = b * a; d = c - b   # four megabytes live, all freed on return
    return float(d[0])
for _ in range(5):
    op()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(100):
    op()
print(gpugrad._host_memory.tuned, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _run(env):
    out = subprocess.run([sys.executable, "-c", FAULTS], capture_output=True, text=True,
                         env={**os.environ, **env}, timeout=120, check=True).stdout.split()
    return out[0] == "True", int(out[1])


@glibc
def test_freed_megabytes_are_reused_without_page_faults():
    tuned, faults = _run({"GPUGRAD_HEAP_TUNING": "1"})
    assert tuned and faults < 50


@glibc
def test_the_switch_keeps_glibcs_defaults():
    tuned, faults = _run({"GPUGRAD_HEAP_TUNING": "0"})
    assert not tuned and faults > 1000   # the ops fault their megabytes in again and again


def test_settings_are_applied_once():
    assert _host_memory.keep_freed_buffers() is _host_memory.tuned
