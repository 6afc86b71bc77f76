"""Row-wise kernels: LayerNorm forward and backward, softmax and log_softmax forward and
backward over the last axis, for float32 C-contiguous arrays.

Each row is read once or twice and written once, where the references make ~8 numpy passes
and as many temporaries. The row statistics are float32 sums vectorised by letting LLVM
reassociate them (``fastmath={"reassoc"}``: the order is fixed by the compiled code, so a row
always gives the same sum); they differ from numpy's pairwise sums by rounding. Rows are
independent, so the forwards split them over the CPU's threads (``launch_rows``) with the same
result whatever the split; LayerNorm's backward sums weight and bias gradients over the rows
in row order, on one thread.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import _math, launch_rows

f32 = np.float32
_ROW = dict(nogil=True, error_model="numpy", fastmath={"reassoc", "contract"}, cache=True)
_JIT = dict(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})


def _rows(x, axes_from_end=1):
    """(rows, width) of a C-contiguous float32 array normalised over its last dimensions."""
    if x.__class__ is not np.ndarray or x.dtype != np.float32 or not x.flags.c_contiguous \
            or x.ndim < axes_from_end or not x.size:
        return None
    width = int(np.prod(x.shape[x.ndim - axes_from_end:]))
    return x.size // width, width


def _same(a, like) -> bool:
    return (a.__class__ is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous
            and a.shape == like.shape)


# -- LayerNorm ---------------------------------------------------------------------------------
@njit(**_ROW)
def _ln_row(x, w, b, y, width, eps):
    s = f32(0.0)
    for j in range(width):
        s += x[j]
    mean = s / f32(width)
    v = f32(0.0)
    for j in range(width):
        d = x[j] - mean
        v += d * d
    rstd = f32(1.0) / np.sqrt(v / f32(width) + eps)
    for j in range(width):
        y[j] = (x[j] - mean) * rstd * w[j] + b[j]
    return mean, rstd


@njit(**_JIT)
def _layer_norm(x, w, b, y, mean, rstd, eps, lo, hi):
    width = x.shape[1]
    for r in range(lo, hi):
        mean[r], rstd[r] = _ln_row(x[r], w, b, y[r], width, eps)


def layer_norm(x, w, b, k, eps):
    """(y, mean, rstd) of ``x`` normalised over its last ``k`` dimensions (mean and rstd with
    the reference's keepdims shape), or None."""
    shape = _rows(x, k)
    if shape is None:
        return None
    rows, width = shape
    w = np.ones(width, f32) if w is None else w
    b = np.zeros(width, f32) if b is None else b
    if w.dtype != f32 or b.dtype != f32 or w.size != width or b.size != width:
        return None
    y = np.empty_like(x)
    mean = np.empty(rows, f32)
    rstd = np.empty(rows, f32)
    launch_rows(_layer_norm, x.reshape(rows, width), (np.ascontiguousarray(w).reshape(-1),
                np.ascontiguousarray(b).reshape(-1), y.reshape(rows, width), mean, rstd,
                f32(eps)), rows, width)
    kept = x.shape[:x.ndim - k] + (1,) * k
    return y, mean.reshape(kept), rstd.reshape(kept)


@njit(**_ROW)
def _ln_bwd_row(x, gy, w, gx, gw, gb, mean, rstd, width):
    m1 = f32(0.0)
    m2 = f32(0.0)
    for j in range(width):
        xhat = (x[j] - mean) * rstd
        gh = gy[j] * w[j]
        m1 += gh
        m2 += gh * xhat
    m1 = m1 / f32(width)
    m2 = m2 / f32(width)
    for j in range(width):
        xhat = (x[j] - mean) * rstd
        g = gy[j]
        gx[j] = (g * w[j] - xhat * m2 - m1) * rstd
        gw[j] += g * xhat
        gb[j] += g


@njit(**_JIT)
def _layer_norm_bwd(x, gy, w, mean, rstd, gx, gw, gb):
    width = x.shape[1]
    for r in range(x.shape[0]):
        _ln_bwd_row(x[r], gy[r], w, gx[r], gw, gb, mean[r], rstd[r], width)


def layer_norm_bwd(x, gy, w, mean, rstd, k):
    """(gx, gw, gb) of layer_norm (gw, gb over the normalised shape), or None."""
    shape = _rows(x, k)
    if shape is None or not _same(gy, x):
        return None
    rows, width = shape
    w = np.ones(width, f32) if w is None else w
    if w.dtype != f32 or w.size != width or mean.dtype != f32 or rstd.dtype != f32:
        return None
    gx = np.empty_like(x)
    gw = np.zeros(width, f32)
    gb = np.zeros(width, f32)
    _layer_norm_bwd(x.reshape(rows, width), gy.reshape(rows, width),
                    np.ascontiguousarray(w).reshape(-1), mean.reshape(-1), rstd.reshape(-1),
                    gx.reshape(rows, width), gw, gb)
    normalized = x.shape[x.ndim - k:]
    return gx, gw.reshape(normalized), gb.reshape(normalized)


# -- softmax, log_softmax ----------------------------------------------------------------------
# The rows' maxima come from numpy (``x.max(axis=1)``): a running maximum is a chain of
# dependent compares that LLVM does not vectorise without assuming no NaN, ~7x numpy's time.
# Each kernel is a row function and a loop over rows: one generic loop taking the row function
# as an argument compiles, but numba does not cache it on disk, and recompiles it per process.
def _by_rows(kernel, a, b=None):
    """``kernel`` over the rows of ``a`` and, per row, ``b``'s row (b given: of a's shape) or
    a's maximum (b None); None when they do not fit."""
    shape = _rows(a)
    if shape is None or (b is not None and not _same(b, a)):
        return None
    rows, width = shape
    out = np.empty_like(a)
    a2 = a.reshape(rows, width)
    second = a2.max(axis=1) if b is None else b.reshape(rows, width)
    launch_rows(kernel, a2, (second, out.reshape(rows, width)), rows, width)
    return out


@njit(**_ROW)
def _softmax_row(x, m, y, width):
    s = f32(0.0)
    for j in range(width):
        e = _math.exp(x[j] - m)
        y[j] = e
        s += e
    for j in range(width):
        y[j] = y[j] / s


@njit(**_JIT)
def _softmax(x, m, y, lo, hi):
    for r in range(lo, hi):
        _softmax_row(x[r], m[r], y[r], x.shape[1])


def softmax(x):
    return _by_rows(_softmax, x)


@njit(**_ROW)
def _log_softmax_row(x, m, y, width):
    s = f32(0.0)
    for j in range(width):
        z = x[j] - m
        y[j] = z
        s += _math.exp(z)
    ls = np.log(s)
    for j in range(width):
        y[j] = y[j] - ls


@njit(**_JIT)
def _log_softmax(x, m, y, lo, hi):
    for r in range(lo, hi):
        _log_softmax_row(x[r], m[r], y[r], x.shape[1])


def log_softmax(x):
    return _by_rows(_log_softmax, x)


@njit(**_ROW)
def _softmax_bwd_row(y, gy, gx, width):
    s = f32(0.0)
    for j in range(width):
        s += gy[j] * y[j]
    for j in range(width):
        gx[j] = (gy[j] - s) * y[j]


@njit(**_JIT)
def _softmax_bwd(y, gy, gx, lo, hi):
    for r in range(lo, hi):
        _softmax_bwd_row(y[r], gy[r], gx[r], y.shape[1])


def softmax_bwd(y, gy):
    return _by_rows(_softmax_bwd, y, gy)


@njit(**_ROW)
def _log_softmax_bwd_row(y, gy, gx, width):
    s = f32(0.0)
    for j in range(width):
        s += gy[j]
    for j in range(width):
        gx[j] = gy[j] - _math.exp(y[j]) * s


@njit(**_JIT)
def _log_softmax_bwd(y, gy, gx, lo, hi):
    for r in range(lo, hi):
        _log_softmax_bwd_row(y[r], gy[r], gx[r], y.shape[1])


def log_softmax_bwd(y, gy):
    return _by_rows(_log_softmax_bwd, y, gy)
