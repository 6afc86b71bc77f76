"""``gpugrad run``: a rank that raises, or hangs, ends the whole job within the timeout, and the
launcher names the rank."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest
from mpi_jobs import ROOT, mpiexec

JOBS = pathlib.Path(__file__).resolve().parents[1] / "mpi_jobs.py"


def _run(n, env):
    mpiexec()
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]), **env)
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gpugrad", "run", "-n", str(n), "--timeout",
                           "50", str(JOBS), "raises"], env=e, capture_output=True, text=True,
                          timeout=60)
    return done, time.monotonic() - t0


@pytest.mark.parametrize("n", [2, 3])
def test_a_rank_that_raises_ends_the_job_naming_it(n):
    done, took = _run(n, {"TIMEOUT": "30"})
    assert done.returncode == 1, done.stderr
    assert "gpugrad run: rank 1 failed first with ValueError: rank one gives up" in done.stderr
    assert took < 20      # the others did not wait for their 30 s timeout


def test_a_rank_that_hangs_is_named_when_the_others_time_out():
    done, took = _run(3, {"TIMEOUT": "2", "HANG": "1"})
    assert done.returncode == 1, done.stderr
    assert "gpugrad run: rank 1 did not join a collective: rank(s) 0, 2 timed out" \
        in done.stderr, done.stderr
    assert "DistBackendError" in done.stderr and took < 30
