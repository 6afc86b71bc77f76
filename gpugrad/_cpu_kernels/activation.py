"""Activations whose numpy references take several passes: sigmoid (four), the exact GELU's
gate Phi(x) (~17: a degree-6 polynomial under a tanh, ``kernels.gelu_cdf``) and its backward
from the kept gate (six). Each is one loop here, split over the CPU's threads when large
(``launch``); float32 only (``_math``'s exp and tanh), within a few ulp of the references.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import kernels
from . import _math, launch

f32 = np.float32
_JIT = dict(cache=True, nogil=True, error_model="numpy", **_math.APPROXIMATE)
_Y = tuple(f32(c) for c in kernels._GELU_Y)   # the gate's fitted polynomial (kernels.py)
_INV_SQRT_2PI = f32(1 / math.sqrt(2 * math.pi))


def _contiguous32(*arrays) -> bool:
    return all(a.__class__ is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous
               and a.ndim for a in arrays)


@njit(**_JIT)
def _sigmoid(x, out, n):
    for i in range(n):
        out[i] = _math.sigmoid(x[i])


def sigmoid(x):
    if not _contiguous32(x):
        return None
    out = np.empty_like(x)
    launch(_sigmoid, [x.reshape(-1)], [], [out.reshape(-1)], x.size)
    return out


@njit(inline="always", error_model="numpy", **_math.APPROXIMATE)
def _gate(x):
    """Phi(x) = (1 + tanh(z P(z^2))) / 2, z = x clipped to [-6, 6]: kernels._gelu_cdf32's
    operations, in its order."""
    z = min(max(x, f32(-6.0)), f32(6.0))
    t = z * z
    y = t * _Y[6] + _Y[5]
    y = y * t + _Y[4]
    y = y * t + _Y[3]
    y = y * t + _Y[2]
    y = y * t + _Y[1]
    y = y * t + _Y[0]
    y = y * z
    g = _math.tanh(y) * f32(0.5) + f32(0.5)
    return x if x != x else g


@njit(**_JIT)
def _gelu_cdf(x, out, n):
    for i in range(n):
        out[i] = _gate(x[i])


def gelu_cdf(x):
    if not _contiguous32(x):
        return None
    out = np.empty_like(x)
    launch(_gelu_cdf, [x.reshape(-1)], [], [out.reshape(-1)], x.size)
    return out


@njit(**_JIT)
def _gelu_bwd_cdf(x, cdf, gy, out, n):
    for i in range(n):
        v = x[i]
        out[i] = gy[i] * (_math.exp(v * v * f32(-0.5)) * _INV_SQRT_2PI * v + cdf[i])


def gelu_bwd_cdf(x, cdf, gy):
    if not _contiguous32(x, cdf, gy) or not x.shape == cdf.shape == gy.shape:
        return None
    out = np.empty_like(x)
    launch(_gelu_bwd_cdf, [x.reshape(-1), cdf.reshape(-1), gy.reshape(-1)], [],
           [out.reshape(-1)], x.size)
    return out
