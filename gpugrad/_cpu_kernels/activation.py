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


# -- the activations' backward formulas (kernels.relu_bwd and the rest) -------------------------
# One pass each, where the references make two to ~20 (gelu_bwd recomputes the gate). The
# arithmetic ones repeat the reference's operations in order (their bits, float32 and float64);
# those with tanh/exp are float32 only. A gradient expanded from one value (a sum's) is read
# through its zero stride.
def _flat(*arrays):
    """1-D views of arrays of one shape, each C-contiguous or one value expanded; else None."""
    shape = next(a.shape for a in arrays if a.__class__ is np.ndarray)
    out = []
    for a in arrays:
        if a.__class__ is not np.ndarray or a.shape != shape or not a.ndim or not (
                a.flags.c_contiguous or not any(a.strides)):
            return None
        out.append(a.reshape(-1))
    return out


def _pointwise(loop, arrays, scalars, dtypes):
    flat = _flat(*arrays)
    if flat is None or arrays[1].dtype != arrays[0].dtype or arrays[0].dtype not in dtypes:
        return None
    out = np.empty(arrays[0].shape, arrays[0].dtype)
    t = arrays[0].dtype.type
    launch(loop, flat, [t(s) for s in scalars], [out.reshape(-1)], out.size)
    return out


_EXACT = dict(cache=True, nogil=True, error_model="numpy")
_BOTH = (np.dtype(np.float32), np.dtype(np.float64))
_F32 = (np.dtype(np.float32),)


# (``one`` and ``zero`` come in as the dtype's numbers: the loops serve float32 and float64)
@njit(**_EXACT)
def _relu_bwd(y, gy, one, zero, out, n):
    for i in range(n):
        out[i] = gy[i] * (one if y[i] != zero else zero)


def relu_bwd(y, gy):
    return _pointwise(_relu_bwd, (y, gy), (1, 0), _BOTH)


@njit(**_EXACT)
def _leaky_relu_bwd(x, gy, keep, slope, zero, out, n):
    for i in range(n):
        m = keep if x[i] > zero else zero
        out[i] = (m + slope) * gy[i]


def leaky_relu_bwd(x, gy, slope):
    return _pointwise(_leaky_relu_bwd, (x, gy), (1 - slope, slope, 0), _BOTH)


@njit(**_EXACT)
def _sigmoid_bwd(y, gy, one, out, n):
    for i in range(n):
        v = y[i]
        out[i] = (one - v) * v * gy[i]


def sigmoid_bwd(y, gy):
    return _pointwise(_sigmoid_bwd, (y, gy), (1,), _BOTH)


@njit(**_EXACT)
def _tanh_bwd(y, gy, one, out, n):
    for i in range(n):
        v = y[i]
        out[i] = (one - v * v) * gy[i]


def tanh_bwd(y, gy):
    return _pointwise(_tanh_bwd, (y, gy), (1,), _BOTH)


@njit(**_JIT)
def _silu_bwd(x, gy, out, n):
    for i in range(n):
        v = x[i]
        s = f32(0.5) * _math.tanh(f32(0.5) * v) + f32(0.5)
        out[i] = gy[i] * s * (f32(1.0) + v * (f32(1.0) - s))


def silu_bwd(x, gy):
    return _pointwise(_silu_bwd, (x, gy), (), _F32)


_K = f32(math.sqrt(2 / math.pi))
_C, _C3 = f32(0.044715), f32(3 * 0.044715)


@njit(**_JIT)
def _gelu_bwd_tanh(x, gy, out, n):
    for i in range(n):
        v = x[i]
        th = _math.tanh(_K * (v + _C * v * v * v))
        out[i] = gy[i] * (f32(0.5) * (f32(1.0) + th) + f32(0.5) * v * (f32(1.0) - th * th)
                          * _K * (f32(1.0) + _C3 * v * v))


@njit(**_JIT)
def _gelu_bwd_exact(x, gy, out, n):
    for i in range(n):
        v = x[i]
        out[i] = gy[i] * (_gate(v) + v * _math.exp(v * v * f32(-0.5)) * _INV_SQRT_2PI)


def gelu_bwd(x, gy, tanh_approx):
    return _pointwise(_gelu_bwd_tanh if tanh_approx else _gelu_bwd_exact, (x, gy), (), _F32)
