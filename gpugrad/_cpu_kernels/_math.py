"""float32 exp, tanh and sigmoid as straight-line arithmetic that LLVM vectorises.

numba compiles ``math.exp`` on a float32 to a call of the C library's scalar ``expf`` per
element (5-30 ns each here), where numpy's own loops run SIMD code (~0.5 ns). These functions
are the classic Cephes float32 algorithms, written with selects instead of branches and the
power of two built from the exponent bits, so a loop that calls them compiles to vector code:
``exp`` within 1 ulp of the exact value over its whole range, ``tanh`` and ``sigmoid`` within
3 (tests/test_cpu_kernels.py sweeps them against float64). Infinities and NaN come out as the
exact functions give them; results below float32's normal range flush to zero.

A loop that calls them is compiled with ``APPROXIMATE`` (``fastmath={"contract"}``): its
multiply-adds become fused multiply-adds, ~25 % faster here. Only contraction: no reordering,
no assumptions about NaN or infinity, and every element still runs the same instructions (the
vector body and the remainder contract alike), so a result does not depend on how a loop was
split over threads.
"""
from __future__ import annotations

import numpy as np
from numba import njit

f32, i32 = np.float32, np.int32
APPROXIMATE = dict(fastmath={"contract"})   # the flags of a loop that calls exp, tanh, sigmoid

_LOG2E = f32(1.4426950408889634)
_LN2_HI, _LN2_LO = f32(0.693359375), f32(-2.12194440e-4)   # ln 2 = hi + lo, hi exact in 9 bits
_ROUND = f32(12582912.0)   # 1.5 * 2^23: adding it rounds to an integer, kept in the low bits
_ROUND_BITS = i32(0x4B400000)
_EXP_MAX = f32(88.72283172607422)    # exp overflows above
_EXP_MIN = f32(-87.33654022216797)   # exp leaves the normal range below


@njit(inline="always", error_model="numpy")
def exp(x):
    """e^x (float32)."""
    y = min(max(x, _EXP_MIN), _EXP_MAX)
    t = y * _LOG2E + _ROUND             # n = round(x / ln 2), as t's low mantissa bits
    n = t - _ROUND
    r = y - n * _LN2_HI
    r = r - n * _LN2_LO                 # x = n ln 2 + r, |r| <= ln 2 / 2
    p = f32(1.9875691500e-4)
    p = p * r + f32(1.3981999507e-3)
    p = p * r + f32(8.3334519073e-3)
    p = p * r + f32(4.1665795894e-2)
    p = p * r + f32(1.6666665459e-1)
    p = p * r + f32(5.0000001201e-1)
    p = p * r * r + r + f32(1.0)       # e^r
    k = i32(f32(t).view(i32) - _ROUND_BITS)   # n, from t's bits
    h = k >> i32(1)                            # 2^n as 2^h 2^(n-h): both normal at n = 128
    s1 = i32((h + i32(127)) << i32(23))
    s2 = i32((k - h + i32(127)) << i32(23))
    e = p * s1.view(f32) * s2.view(f32)
    e = f32(0.0) if x < _EXP_MIN else e
    e = f32(np.inf) if x > _EXP_MAX else e
    return x if x != x else e


@njit(inline="always", error_model="numpy")
def tanh(x):
    """tanh(x) (float32): a polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) above."""
    a = abs(x)
    z = x * x
    small = ((((f32(-5.70498872745e-3) * z + f32(2.06390887954e-2)) * z
               - f32(5.37397155531e-2)) * z + f32(1.33314422036e-1)) * z
             - f32(3.33332819422e-1)) * z * x + x
    large = f32(1.0) - f32(2.0) / (exp(f32(2.0) * min(a, f32(40.0))) + f32(1.0))
    large = -large if x < f32(0.0) else large
    y = small if a < f32(0.625) else large
    y = x if a < f32(2.44140625e-4) else y   # tanh(x) rounds to x there (keeps -0.0)
    return x if x != x else y


@njit(inline="always", error_model="numpy")
def sigmoid(x):
    """1 / (1 + e^-x) (float32), from e^-|x| so that nothing overflows."""
    e = exp(-abs(x))
    s = f32(1.0) / (f32(1.0) + e)
    y = s if x >= f32(0.0) else e * s
    return x if x != x else y


@njit(inline="always", error_model="numpy")
def maximum(a, b):
    """numpy's maximum: a NaN on either side wins."""
    return a if (a != a or a > b) else b


@njit(inline="always", error_model="numpy")
def minimum(a, b):
    return a if (a != a or a < b) else b
