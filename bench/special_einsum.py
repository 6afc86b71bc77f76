"""Special functions, the exact GELU backward and a three-operand einsum, each timed against its
reference in the same run (SciPy for the special functions, PyTorch for GELU and einsum), on the
CPU. Run: python bench/special_einsum.py [--n 100000] [--repeat 5]

The ratio column (gpugrad / reference) is what compares across runs and commits: both sides are
measured in one process, interleaved.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.special as sp

import gpugrad

try:
    import torch
except ImportError:
    torch = None


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def special_cases(n):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 40.0, n)
    u = rng.uniform(-0.99, 0.99, n)
    s = gpugrad.special
    t = gpugrad.tensor
    return [
        ("i0", lambda: gpugrad.i0(t(x)), lambda: sp.i0(x)),
        ("i0e", lambda: s.i0e(t(x)), lambda: sp.i0e(x)),
        ("i1", lambda: s.i1(t(x)), lambda: sp.i1(x)),
        ("i1e", lambda: s.i1e(t(x)), lambda: sp.i1e(x)),
        ("bessel_j0", lambda: s.bessel_j0(t(x)), lambda: sp.j0(x)),
        ("bessel_y1", lambda: s.bessel_y1(t(x)), lambda: sp.y1(x)),
        ("modified_bessel_k0", lambda: s.modified_bessel_k0(t(x)), lambda: sp.k0(x)),
        ("scaled_modified_bessel_k1", lambda: s.scaled_modified_bessel_k1(t(x)),
         lambda: sp.k1e(x)),
        ("lgamma", lambda: gpugrad.lgamma(t(x)), lambda: sp.gammaln(x)),
        ("digamma", lambda: gpugrad.digamma(t(x)), lambda: sp.psi(x)),
        ("polygamma(2)", lambda: gpugrad.polygamma(2, t(x)), lambda: sp.polygamma(2, x)),
        ("erf", lambda: gpugrad.erf(t(u)), lambda: sp.erf(u)),
        ("erfinv", lambda: gpugrad.erfinv(t(u)), lambda: sp.erfinv(u)),
        ("erfcx", lambda: s.erfcx(t(x)), lambda: sp.erfcx(x)),
        ("zeta", lambda: s.zeta(t(x + 1), t(x)), lambda: sp.zeta(x + 1, x)),
        ("gammainc", lambda: s.gammainc(t(x), t(x)), lambda: sp.gammainc(x, x)),
    ]


def graph_cases(n):
    """Forward + backward, gpugrad against PyTorch."""
    if torch is None:
        return []
    rng = np.random.default_rng(1)
    xg = rng.standard_normal(n)
    a, b, c = (rng.standard_normal(s) for s in ((2048, 16), (16, 2048), (2048, 16)))

    def gelu(lib):
        x = lib.tensor(xg, requires_grad=True)
        lib.nn.functional.gelu(x).sum().backward()

    def chain(lib):
        ts = [lib.tensor(m, requires_grad=True) for m in (a, b, c)]
        lib.einsum("ij,jk,kl->il", *ts).sum().backward()

    return [("gelu exact fwd+bwd", lambda: gelu(gpugrad), lambda: gelu(torch)),
            ("einsum ij,jk,kl fwd+bwd", lambda: chain(gpugrad), lambda: chain(torch))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'case':28s} {'gpugrad ms':>11s} {'reference ms':>13s} {'ratio':>7s}")
    for name, ours, ref in special_cases(args.n) + graph_cases(args.n):
        t_ours, t_ref = best(ours, args.repeat), best(ref, args.repeat)
        print(f"{name:28s} {t_ours * 1e3:11.2f} {t_ref * 1e3:13.2f} {t_ours / t_ref:7.1f}")


if __name__ == "__main__":
    main()
