"""Where the host time of one benchmark step goes: cProfile over warm steps of a ``gpugrad bench``
case, and, when PyTorch is importable, how many device kernels each implementation launches.

    python bench/profile_case.py mlp_large --device cuda --steps 50
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

from gpugrad.bench import cases as all_cases
from gpugrad.bench.timing import sync_fn


def find(case_id):
    for c in all_cases("full", gpu=True):
        if c.id == case_id:
            return c
    sys.exit(f"no case {case_id!r}; see `gpugrad bench --full --list`")


def kernel_count(step, device):
    """Device kernels one step launches, from PyTorch's profiler (CUPTI sees CuPy's launches)."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        return None
    if device != "cuda" or not torch.cuda.is_available():
        return None
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type.name == "CUDA"]
    names = {}
    for e in kernels:
        names[e.name[:60]] = names.get(e.name[:60], 0) + 1
    return len(kernels), sorted(names.items(), key=lambda kv: -kv[1])[:12]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("case")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--top", type=int, default=30)
    a = p.parse_args()
    case = find(a.case)
    for impl in case.impls((a.device,)):
        step, sync = case.make(impl, case), sync_fn(impl) or (lambda: None)
        for _ in range(3):
            step()
        sync()
        t0 = time.perf_counter()
        for _ in range(a.steps):
            step()
        sync()
        print(f"\n=== {case.id} {impl.label}: {(time.perf_counter() - t0) / a.steps * 1e6:.0f} us"
              " per step")
        counted = kernel_count(step, a.device)
        if counted:
            print(f"kernels per step: {counted[0]}  " +
                  ", ".join(f"{n} x{k}" for n, k in counted[1]))
        if impl.lib != "gpugrad":
            continue
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(a.steps):
            step()
        sync()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(a.top)


if __name__ == "__main__":
    main()
