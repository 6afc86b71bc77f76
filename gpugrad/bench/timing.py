"""Timing and peak memory of the cases: interleaved medians, cold and warm figures."""
from __future__ import annotations

import gc
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import gpugrad

from .. import _backend
from .. import cuda as gcuda
from .cases import Impl, _torch, cases, has_cuda


# -- timing ------------------------------------------------------------------------------------
def sync_fn(impl):
    """What makes the host wait for the device (None on the CPU)."""
    if impl.device == "cpu":
        return None
    return _torch().cuda.synchronize if impl.lib == "torch" else gcuda.synchronize


def _events(impl):
    """(make a timing event, elapsed seconds between two) for a CUDA implementation."""
    if impl.device == "cpu":
        return None
    if impl.lib == "torch":
        cuda = _torch().cuda
        return (lambda: cuda.Event(enable_timing=True)), (lambda a, b: a.elapsed_time(b) / 1e3)
    cp = _backend.cupy_module()
    return cp.cuda.Event, (lambda a, b: cp.cuda.get_elapsed_time(a, b) / 1e3)


class Clock:
    """Seconds per call of ``step`` over ``number`` calls: wall clock (perf_counter, the device
    synchronized before start and stop) and, on a GPU, CUDA-event time."""

    def __init__(self, impl):
        self.sync, self.events = sync_fn(impl), _events(impl)

    def __call__(self, step, number=1):
        sync, ev = self.sync, self.events
        if sync:
            sync()
        if ev:
            e0, e1 = ev[0](), ev[0]()
            e0.record()
        t0 = time.perf_counter()
        for _ in range(number):
            step()
        if ev:
            e1.record()
        if sync:
            sync()
        wall = (time.perf_counter() - t0) / number
        return wall, (ev[1](e0, e1) / number if ev else None)


@dataclass
class Settings:
    repeat: int = 21          # samples per implementation (fewer past max_case_s)
    min_time: float = 0.005   # seconds per sample: fast steps are called ``number`` times
    max_case_s: float = 1.5   # stop sampling a case after this long (once min_repeat are in)
    min_repeat: int = 5


QUICK = Settings()
FULL = Settings(repeat=41, min_time=0.02, max_case_s=20.0, min_repeat=9)


def _compiled() -> float:
    """Seconds spent compiling CUDA so far: the kernels of kernels/ and the fused regions."""
    from .. import _cuda_kernels
    from ..autograd import fusion
    return (sum(getattr(_cuda_kernels, "COMPILE_SECONDS", {}).values())
            + fusion.stats["compile_seconds"])


def _err(e) -> str:
    return f"{type(e).__name__}: {e}"[:300]


def measure(case, impls, settings=QUICK) -> dict:
    """Time ``case`` on each implementation: the cold first call, then interleaved samples."""
    entries, runs = {}, []
    for impl in impls:
        e = entries[impl.key] = {"lib": impl.lib, "device": impl.device, "label": impl.label}
        try:
            step, clock = case.make(impl, case), Clock(impl)
            compiled = _compiled() if impl.device == "cuda" else 0.0
            e["cold_s"] = clock(step)[0]
            if impl.device == "cuda" and impl.lib == "gpugrad":
                e["compile_s"] = _compiled() - compiled
            warm = clock(step)[0]
            number = max(1, min(10 ** 6, math.ceil(settings.min_time / max(warm, 1e-9))))
            for attr in ("nbytes", "note"):
                if hasattr(step, attr):
                    e[attr] = getattr(step, attr)
            runs.append((step, clock, number, e, []))
        except Exception as ex:
            e["error"] = _err(ex)
    start = time.perf_counter()
    for r in range(settings.repeat):
        for run in runs if r % 2 == 0 else runs[::-1]:   # interleaved, alternating order
            step, clock, number, e, samples = run
            if "error" not in e:
                try:
                    samples.append(clock(step, number))
                except Exception as ex:
                    e["error"] = _err(ex)
        if r + 1 >= settings.min_repeat and time.perf_counter() - start > settings.max_case_s:
            break
    for _, _, number, e, samples in runs:
        if samples and "error" not in e:
            wall = [w for w, _ in samples]
            e.update(median_s=statistics.median(wall), min_s=min(wall), number=number,
                     samples_s=wall)
            if samples[0][1] is not None:
                e["gpu_median_s"] = statistics.median(g for _, g in samples)
            if "nbytes" in e:
                e["gbps"] = e["nbytes"] / e.get("gpu_median_s", e["median_s"]) / 1e9
    del runs
    _free()
    return entries


def _free():
    gc.collect()
    if has_cuda():
        _backend.cupy_module().get_default_memory_pool().free_all_blocks()
    t = sys.modules.get("torch")
    if t is not None and t.cuda.is_available():
        t.cuda.empty_cache()


# -- peak memory -------------------------------------------------------------------------------
def _status_bytes(key):
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.M).group(1)) * 1024


def _rss_peak(step):
    """Peak resident memory above the start while ``step`` runs (Linux), else None."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")                     # resets VmHWM to the current RSS
        base = _status_bytes("VmRSS")
        step()
        return _status_bytes("VmHWM") - base
    except (OSError, AttributeError):
        return None


def _traced_peak(step):
    import tracemalloc
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def peak_here(case, impl) -> dict:
    """Peak memory one warm step of ``case`` needs beyond its inputs and parameters."""
    step, sync = case.make(impl, case), sync_fn(impl)
    step()
    if hasattr(step, "clear"):
        step.clear()
    if sync:
        sync()
    gc.collect()
    if impl.device == "cuda":
        mem = _torch().cuda if impl.lib == "torch" else gcuda
        mem.reset_peak_memory_stats()
        base = mem.memory_allocated()
        step()
        sync()
        return {"peak_bytes": mem.max_memory_allocated() - base,
                "method": f"{'torch' if impl.lib == 'torch' else 'gpugrad'}.cuda allocator"}
    out = {}
    rss = _rss_peak(step)
    if rss is not None:
        out.update(peak_bytes=rss, method="RSS high-water mark, large blocks mmapped")
    if impl.lib != "torch":   # tracemalloc sees numpy's allocations, not PyTorch's
        out["traced_peak_bytes"] = _traced_peak(step)
        out.setdefault("peak_bytes", out["traced_peak_bytes"])
        out.setdefault("method", "tracemalloc")
    return out


def _memory_child(case_id, keys):
    """Runs in a fresh process: glibc's malloc is told to mmap (and so return to the OS) every
    block over 64 kB, which makes the RSS high-water mark count what numpy and PyTorch hold."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 * 1024)   # M_MMAP_THRESHOLD (fixed: no dynamic raise)
        libc.mallopt(-1, 64 * 1024)   # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass
    case = next(c for c in cases("full", has_cuda()) + cases("quick", has_cuda())
                if c.id == case_id)
    out = {}
    for key in keys:
        try:
            out[key] = peak_here(case, Impl(*key.split("-", 1)))
        except Exception as e:
            out[key] = {"error": _err(e)}
    print(json.dumps(out))


def measure_memory(case, impls) -> dict:
    """Peak memory of each implementation, measured in one fresh Python process per case."""
    entries = {i.key: {"lib": i.lib, "device": i.device, "label": i.label} for i in impls}
    root = str(Path(gpugrad.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    code = (f"from gpugrad.bench.timing import _memory_child; "
            f"_memory_child({case.id!r}, {[i.key for i in impls]!r})")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=600)
        found = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {}
        for key, e in entries.items():
            why = (p.stderr.strip().splitlines() or ["no result"])[-1][-300:]
            e.update(found.get(key, {"error": why}))
    except (subprocess.SubprocessError, ValueError, IndexError) as ex:
        for e in entries.values():
            e["error"] = _err(ex)
    return entries


