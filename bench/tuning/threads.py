"""Measure the CPU thresholds of gpugrad._parallel and autograd.fusion on this machine.

    python bench/tuning/threads.py [--threads N] [--rounds R] [--json FILE]

Prints, from medians of interleaved timings in one process:
- ``MIN_ELEMENTS``: the least power of two from which an elementwise op (tanh, mul, the
  sigmoid backward formula) split over N threads is at least 10 % faster than the whole call
  it replaces, at that size and every larger one measured (the constant in
  gpugrad/_parallel.py; None: at no size measured);
- ``BLOCK``: the block size (elements) that runs the fused backward region of the
  ``elementwise`` bench case fastest at 1e6 elements on N threads;
- ``CPU_MIN_ELEMENTS``: the least power of two from which that region, evaluated on numpy
  (the compiled CPU kernels off), runs faster fused than unfused (the constant in
  gpugrad/autograd/fusion.py);
- ``CPU_COMPILED_MIN_ELEMENTS``: the same for the region as a compiled loop (numba), from 2^10
  elements (None when numba is not installed);
- for the record, numexpr's time for the same tanh when numexpr is installed.

Timing on a shared machine is noisy: run it on a quiet one, and read the ratios, not the times.
"""
from __future__ import annotations

import argparse
import functools
import json
import statistics
import time

import numpy as np

import gpugrad
from gpugrad import _cpu_kernels, _parallel, kernels
from gpugrad.autograd import fusion

SIZES = [1 << e for e in range(12, 24)]


def timed(fn, rounds):
    fn()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def interleaved(fns: dict, rounds: int) -> dict:
    """Median seconds of each function, the functions alternating within every round."""
    samples: dict = {k: [] for k in fns}
    for f in fns.values():
        f()
    for r in range(rounds):
        for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            fn = fns[k]
            t0 = time.perf_counter()
            fn()
            samples[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in samples.items()}


def _ops(x, split, sigmoid_bwd):
    """Each op as (the whole call, the split call) on array ``x``."""
    return {"tanh": (lambda: np.tanh(x), lambda: split(np.tanh, (x,), np.tanh)),
            "mul": (lambda: x * x, lambda: split(np.multiply, (x, x), np.multiply)),
            "sigmoid_bwd": (lambda: sigmoid_bwd(x, x),
                            lambda: split(sigmoid_bwd, (x, x), into=True))}


def min_elements(threads, rounds, log):
    """Threaded over whole, per op and size: ``_parallel.elementwise`` against the call it
    replaces (the forward of tanh and mul as their ufuncs, the sigmoid backward formula)."""
    sigmoid_bwd = functools.partial(kernels.sigmoid_bwd.kernel.ref, np)
    old = _parallel.MIN_ELEMENTS
    _parallel.MIN_ELEMENTS = _parallel.BLOCK
    gpugrad.set_num_threads(threads)
    split = _parallel.elementwise
    rows = []
    try:
        for n in (n for n in SIZES if n > 2 * _parallel.BLOCK):
            x = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
            ratios = {}
            for name, (whole, threaded) in _ops(x, split, sigmoid_bwd).items():
                m = interleaved({"whole": whole, "threaded": threaded}, rounds)
                ratios[name] = m["threaded"] / m["whole"]
            rows.append((n, ratios))
            log(f"  n={n:>9}  " + "  ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    finally:
        _parallel.MIN_ELEMENTS = old
    best = None
    for n, ratios in reversed(rows):
        if max(ratios.values()) > 0.9:
            break
        best = n
    return best, rows


def region_step(n):
    x = gpugrad.tensor(np.random.default_rng(0).standard_normal(n, dtype=np.float32),
                       requires_grad=True)

    def step():
        (gpugrad.tanh(x) * gpugrad.sigmoid(x) + gpugrad.relu(x)).sum().backward()
        x.grad = None
    return step


def block(threads, rounds, log):
    gpugrad.set_num_threads(threads)
    old = _parallel.BLOCK, _parallel.MIN_ELEMENTS, fusion.CPU_MIN_ELEMENTS
    step = region_step(10 ** 6)
    out = {}
    _cpu_kernels.set_enabled(False)   # the numpy evaluation's blocks
    try:
        for e in range(11, 18):
            _parallel.BLOCK = _parallel.MIN_ELEMENTS = fusion.CPU_MIN_ELEMENTS = 1 << e
            out[1 << e] = timed(step, rounds)
            log(f"  block={1 << e:>7}  {out[1 << e] * 1e3:.2f} ms")
    finally:
        _parallel.BLOCK, _parallel.MIN_ELEMENTS, fusion.CPU_MIN_ELEMENTS = old
        _cpu_kernels.set_enabled(True)
    return min(out, key=out.get), out


def _least_paying(rows, bound=0.95):
    """The least size from which every measured ratio is at most ``bound`` (None: none)."""
    best = None
    for n, r in reversed(rows):
        if r > bound:
            break
        best = n
    return best


def cpu_min(threads, rounds, log, compiled=False):
    """fused / unfused for the elementwise step per size: the region evaluated on numpy by
    blocks (``compiled=False``) or as a compiled loop."""
    gpugrad.set_num_threads(threads)
    old = (fusion.CPU_MIN_ELEMENTS, fusion.CPU_COMPILED_MIN_ELEMENTS, _parallel.MIN_ELEMENTS)
    if compiled:
        fusion.CPU_COMPILED_MIN_ELEMENTS = 0
        sizes = [1 << e for e in range(10, 21)]
    else:
        fusion.CPU_MIN_ELEMENTS = _parallel.MIN_ELEMENTS = _parallel.BLOCK
        fusion.CPU_COMPILED_MIN_ELEMENTS = 1 << 62
        sizes = [n for n in SIZES if n > 2 * _parallel.BLOCK]
    _cpu_kernels.set_enabled(compiled)
    rows = []
    try:
        for n in sizes:
            step = region_step(n)

            def unfused(step=step):
                with fusion.using("off"):
                    step()
            m = interleaved({"fused": step, "unfused": unfused}, rounds)
            rows.append((n, m["fused"] / m["unfused"]))
            log(f"  n={n:>9}  fused/unfused {rows[-1][1]:.2f}")
    finally:
        (fusion.CPU_MIN_ELEMENTS, fusion.CPU_COMPILED_MIN_ELEMENTS,
         _parallel.MIN_ELEMENTS) = old
        _cpu_kernels.set_enabled(True)
    return _least_paying(rows), rows


def numexpr_tanh(rounds):
    try:
        import numexpr
    except ImportError:
        return None
    x = np.random.default_rng(0).standard_normal(10 ** 6, dtype=np.float32)
    return {"numpy": timed(lambda: np.tanh(x), rounds),
            "numexpr": timed(lambda: numexpr.evaluate("tanh(x)", local_dict={"x": x}), rounds)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=gpugrad.get_num_threads())
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--json", help="write the measurements here")
    a = p.parse_args(argv)

    def log(s):
        print(s, flush=True)
    log(f"threads {a.threads}; MIN_ELEMENTS: threaded / one thread, per op")
    m, m_rows = min_elements(a.threads, a.rounds, log)
    log("BLOCK: the elementwise step at 1e6, fused")
    b, b_rows = block(a.threads, a.rounds, log)
    log("CPU_MIN_ELEMENTS: the elementwise step, fused on numpy / unfused")
    c, c_rows = cpu_min(a.threads, a.rounds, log)
    k, k_rows = None, []
    if _cpu_kernels.get("sigmoid") is not None:   # numba imports here
        log("CPU_COMPILED_MIN_ELEMENTS: the elementwise step, fused compiled / unfused")
        k, k_rows = cpu_min(a.threads, a.rounds, log, compiled=True)
    ne = numexpr_tanh(a.rounds)
    if ne:
        log(f"tanh 1e6 float32: numpy {ne['numpy'] * 1e3:.3f} ms, numexpr "
            f"{ne['numexpr'] * 1e3:.3f} ms")
    log(f"\nMIN_ELEMENTS = {m}\nBLOCK = {b}\nCPU_MIN_ELEMENTS = {c}\n"
        f"CPU_COMPILED_MIN_ELEMENTS = {k}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"threads": a.threads, "MIN_ELEMENTS": m, "BLOCK": b,
                       "CPU_MIN_ELEMENTS": c, "CPU_COMPILED_MIN_ELEMENTS": k,
                       "min_elements": m_rows, "block": b_rows, "cpu_min": c_rows,
                       "cpu_compiled_min": k_rows, "numexpr_tanh": ne}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
