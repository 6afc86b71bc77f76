"""Variants of the row-wise log_softmax kernels, checked and timed side by side on one GPU.

    python bench/tuning/row_variants.py            (needs CuPy and a GPU)

Each ``<kernel>_<variant>.cu`` here is a complete source with the same entries as
``kernels/<kernel>.cu``. For every variant: the result against the numpy reference at row
lengths around each strategy switch, then GB/s (the bytes the kernel must move: inputs read once,
output written once, over CUDA-event time, median of 30) beside a device-to-device copy of the
same bytes. Notes on what was tried and measured: NOTES.md beside this file.
"""
from __future__ import annotations

import functools
import statistics
import sys
from pathlib import Path

import cupy as cp
import numpy as np

from gpugrad import kernels

HERE = Path(__file__).resolve().parent
THREADS = 256
COLS = (1, 7, 31, 32, 33, 1000, 1024, 1025, 4097)
SIZES = ((10_000, 1000), (100_000, 1000), (1_000_000, 10))   # (rows, cols)


def launcher(path, entry):
    fn = cp.RawModule(code=path.read_text(), options=("--std=c++17",)).get_function(entry)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]

    def run(*arrays, cols):
        out = cp.empty_like(arrays[0])
        n = arrays[0].size
        grid = max(1, min(-(-n // THREADS), 32 * sms))
        fn((grid,), (THREADS,), (*arrays, out, np.int64(cols), np.int64(n)))
        return out
    return run


def inputs(rows, cols, dtype, rng):
    z = rng.standard_normal((rows, cols)).astype(dtype)
    y = (z - np.log(np.exp(z.astype(np.float64)).sum(axis=1, keepdims=True))).astype(dtype)
    return z, y, rng.standard_normal((rows, cols)).astype(dtype)


@functools.lru_cache(maxsize=None)
def device_inputs(rows, cols):
    z = cp.random.standard_normal((rows, cols), dtype=cp.float32)
    y = z - cp.log(cp.exp(z).sum(axis=1, keepdims=True))
    return z, y, cp.random.standard_normal((rows, cols), dtype=cp.float32)


def time_ms(f, reps=30):
    f()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        f()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b))
    return statistics.median(ts)


def main():
    rng = np.random.default_rng(0)
    rows_out = []
    for kernel, n_in in (("log_softmax", 1), ("log_softmax_bwd", 2)):
        ref = kernels.REGISTRY[kernel].ref
        for path in sorted(HERE.glob(f"{kernel}_*.cu")):
            if kernel == "log_softmax" and path.stem.startswith("log_softmax_bwd"):
                continue
            variant = path.stem[len(kernel) + 1:]
            ok = True
            for dtype in (np.float32, np.float64):
                run = launcher(path, f"{kernel}_{'float' if dtype == np.float32 else 'double'}")
                for cols in COLS:
                    z, y, g = inputs(max(1, 100_000 // cols), cols, dtype, rng)
                    args = (z,) if n_in == 1 else (y, g)
                    want = ref(np, *args)
                    got = cp.asnumpy(run(*map(cp.asarray, args), cols=cols))
                    tol = 1e-5 if dtype == np.float32 else 1e-11
                    if not np.allclose(got, want, rtol=tol, atol=tol):
                        ok = False
                        print(f"MISMATCH {kernel} {variant} {np.dtype(dtype).name} cols={cols}: "
                              f"max err {np.abs(got - want).max():.3g}")
            run = launcher(path, f"{kernel}_float")
            for rows, cols in SIZES:
                z, y, g = device_inputs(rows, cols)
                args = (z,) if n_in == 1 else (y, g)
                nbytes = z.nbytes * (n_in + 1)
                ms = time_ms(functools.partial(run, *args, cols=cols))
                src = cp.random.standard_normal(nbytes // 8, dtype=cp.float32)
                dst = cp.empty_like(src)
                copy_ms = time_ms(functools.partial(cp.copyto, dst, src))
                rows_out.append((kernel, variant, ok, rows, cols, nbytes / ms / 1e6,
                                 src.nbytes * 2 / copy_ms / 1e6))
    print(f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}")
    print(f"{'kernel':16} {'variant':14} {'ok':3} {'rows x cols':>14} {'GB/s':>7} "
          f"{'copy':>7} {'/copy':>6}")
    for k, v, ok, r, c, gbs, copy in rows_out:
        print(f"{k:16} {v:14} {'yes' if ok else 'NO':3} {f'{r}x{c}':>14} {gbs:7.0f} "
              f"{copy:7.0f} {gbs / copy:6.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
