"""Array-level numerics of the gamma, error-function, incomplete-gamma, zeta and I0/I1 families of
``gpugrad.special``: ``scipy.special`` on numpy arrays and ``cupyx.scipy.special`` on CuPy arrays
(the libraries that own these functions: vectorised and accurate to double precision), computed
in float64, with PyTorch's values at the poles and edges put on top where the libraries differ.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _backend
from ...tensor import Tensor

_SQRT_PI = math.sqrt(math.pi)


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _lib(xp):
    return _backend.special_functions(xp)


def _wide(xp, x):
    """x as float64 (every function here is evaluated in double precision)."""
    return xp.asarray(x, dtype=np.float64)


def _back(y, like):
    return y.astype(like.dtype, copy=False) if like.dtype != y.dtype else y


# -- the gamma family -----------------------------------------------------------------------------
def lgamma_array(xp, x):
    """log |Gamma(x)|"""
    x = _wide(xp, x)
    return xp.where(xp.isinf(x), xp.inf, _lib(xp).gammaln(x))


def digamma_array(xp, x):
    """d/dx log Gamma(x); PyTorch: -inf at 0, nan at the negative integers"""
    x = _wide(xp, x)
    y = _lib(xp).psi(x)
    return xp.where(x == 0, -xp.inf, xp.where((x < 0) & (x == xp.floor(x)), xp.nan, y))


def polygamma_array(xp, n, x):
    """The n-th derivative of digamma; PyTorch: +-inf at the poles (x <= 0 whole), 0 at inf"""
    if n == 0:
        return digamma_array(xp, x)
    x = _wide(xp, x)
    y = _lib(xp).polygamma(n, x)
    sign = 1.0 if n % 2 else -1.0
    y = xp.where((x <= 0) & (x == xp.floor(x)), sign * xp.inf, y)
    return xp.where(x == xp.inf, 0.0, xp.where(xp.isnan(x) | (x == -xp.inf), xp.nan, y))


def _igamma_edges(xp, a, x, y, lower):
    """PyTorch's (Cephes') values off the interior: nan for negative arguments, a = 0 or
    x = 0, and the infinities."""
    one, zero = (1.0, 0.0) if lower else (0.0, 1.0)
    y = xp.where(xp.isinf(x), one, y)
    y = xp.where(xp.isinf(a), xp.where(xp.isinf(x), xp.nan, zero), y)
    y = xp.where(x == 0, zero, y)
    y = xp.where(a == 0, xp.where(x > 0, one, xp.nan), y)
    return xp.where((a < 0) | (x < 0) | xp.isnan(a) | xp.isnan(x), xp.nan, y)


def igamma_array(xp, a, x):
    """P(a, x), the regularised lower incomplete gamma function."""
    a, x = xp.broadcast_arrays(_wide(xp, a), _wide(xp, x))
    return _igamma_edges(xp, a, x, _lib(xp).gammainc(a, x), True)


def igammac_array(xp, a, x):
    """Q(a, x) = 1 - P(a, x), the regularised upper incomplete gamma function."""
    a, x = xp.broadcast_arrays(_wide(xp, a), _wide(xp, x))
    return _igamma_edges(xp, a, x, _lib(xp).gammaincc(a, x), False)


def zeta_array(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s; PyTorch: inf at s = 1 and at the poles
    (q <= 0 whole), nan for s < 1 and for q < 0 with s not whole"""
    s, q = xp.broadcast_arrays(_wide(xp, s), _wide(xp, q))
    total = _lib(xp).zeta(s, q)
    pole = (q <= 0) & (q == xp.floor(q))
    total = xp.where(pole, xp.inf, total)
    total = xp.where((q < 0) & ~pole & (s != xp.floor(s)), xp.nan, total)
    total = xp.where(s < 1, xp.nan, total)
    return xp.where(s == 1, xp.inf, total)


# -- the error-function family --------------------------------------------------------------------
def erfc_array(xp, x):
    """1 - erf(x), accurate in its tail."""
    return _back(_lib(xp).erfc(x), x)


def erfcx_array(xp, x):
    """exp(x^2) erfc(x)"""
    return _lib(xp).erfcx(_wide(xp, x))


def erfinv_array(xp, x):
    return _lib(xp).erfinv(_wide(xp, x))


def ndtri_array(xp, p):
    """The inverse of the standard normal CDF."""
    return _lib(xp).ndtri(_wide(xp, p))


def log_ndtr_array(xp, x):
    """log of the standard normal CDF"""
    x = _wide(xp, x)
    lo = xp.log(0.5 * erfc_array(xp, -x / math.sqrt(2)))
    hi = xp.log1p(-0.5 * erfc_array(xp, x / math.sqrt(2)))
    return xp.where(x > 0, hi, lo)


# -- I0 and I1 ------------------------------------------------------------------------------------
def i0_array(xp, x):
    return _lib(xp).i0(_wide(xp, x))


def i1_array(xp, x):
    return _lib(xp).i1(_wide(xp, x))


OPS: list = []
