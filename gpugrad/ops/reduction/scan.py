"""Scans (cumulative reductions along a dimension): cumsum, cumprod, logcumsumexp, cummax,
cummin.
"""
from __future__ import annotations

import numpy as np

from ..._backend import xp_of
from ..._bfloat16 import is_inexact
from ..._exports import export, tensor_method
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
from .._op import Op
from .reduce import _return_type


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _rev_cumsum(F, a, axis):
    """The running sum from the other end along ``axis``."""
    return F.flip(F.cumsum(F.flip(a, axis), axis), axis)


def _cumprod(F, a, axis):
    return F.cumprod(a, axis=axis) if F.fast else cumprod(a, axis)


def _cumprod_grad_with_zeros(F, gy, x, axis):
    """d/dx_i of sum_j gy_j prod_{k<=j} x_k = sum_{j>=i} gy_j prod_{k<=j, k!=i} x_k, exact when x
    has zeros: row i of an n x n block is x with x_i replaced by 1, and its running product
    holds every prod_{k<=j, k!=i} x_k (O(n^2) memory, run only when x has a zero)."""
    xm, gm = F.swapaxes(x, axis, -1), F.swapaxes(gy, axis, -1)
    n, xr = xm.shape[-1], _raw(x)
    xp = xp_of(xr)
    eye = xp.eye(n, dtype=xr.dtype)
    rows = _cumprod(F, F.expand_dims(xm, -2) * (1 - eye) + eye, -1)
    later = xp.triu(xp.ones((n, n), dtype=xr.dtype))    # [i, j] = j >= i
    g = F.sum(F.expand_dims(gm, -2) * rows * later, axis=-1)
    return F.swapaxes(g, axis, -1)


class CumprodBackward0(Op):
    """y = running product of x along dim"""
    __slots__ = ("axis",)
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, dim=0):
        self.axis = dim
        return xp.cumprod(x, axis=dim)

    def backward(self, F, gy, x, y):
        if bool((_raw(x) != 0).all()):
            return _rev_cumsum(F, gy * y, self.axis) / x
        return _cumprod_grad_with_zeros(F, gy, x, self.axis)


def _logcumsumexp(xp, x, axis):
    if x.size == 0:
        return x.copy()
    try:   # exact over any range (numpy)
        return xp.logaddexp.accumulate(x, axis=axis)
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        pass
    # NOTE: shifted by the largest value of each slice; an entry more than ~700 below it
    # (in float64) underflows to -inf, where PyTorch's running logaddexp keeps it finite
    m = x.max(axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    return xp.log(xp.cumsum(xp.exp(x - m), axis=axis)) + m


def _rev_logcumsumexp(F, a, axis):
    """logcumsumexp from the other end along ``axis``."""
    a = F.flip(a, axis)
    s = _logcumsumexp(xp_of(a), a, axis) if F.fast else logcumsumexp(a, axis)
    return F.flip(s, axis)


class LogcumsumexpBackward0(Op):
    """y = log of the running sum of exp(x) along dim"""
    __slots__ = ("axis",)
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, dim=0):
        self.axis = dim
        return _logcumsumexp(xp, x, dim)

    def backward(self, F, gy, x, y):
        # gx_i = sum_{j>=i} gy_j exp(x_i - y_j), summed in log space for the positive and the
        # negative gy apart (as PyTorch), so no exp overflows however wide the range of x
        gr = _raw(gy)
        xp = xp_of(gr)
        gx = None
        for sign in (1, -1):
            hit = (gr * sign > 0).astype(gr.dtype)
            floor = xp.where(hit > 0, 0, xp.finfo(gr.dtype).min).astype(gr.dtype)   # ~log 0
            log_g = F.log(F.abs(gy) * hit + (1 - hit)) + floor
            part = F.exp(_rev_logcumsumexp(F, log_g - y, self.axis) + x)
            gx = part if gx is None else gx - part
        return gx


@export("cumprod", method=True, inplace=True)
def cumprod(input, dim, *, dtype=None):
    if dtype is None and input.dtype.kind in "biu":
        dtype = np.int64   # PyTorch accumulates integers and bools in int64
    if dtype is not None:
        input = input.to(dtype)
    return CumprodBackward0.apply(input, dim=input._dim(dim))


@export("logcumsumexp", method=True)
def logcumsumexp(input, dim):
    if not is_inexact(input.dtype):
        raise NotImplementedError(f"\"logcumsumexp\" not implemented for "
                                  f"'{scalar_name(input.dtype).capitalize()}'")
    return LogcumsumexpBackward0.apply(input, dim=input._dim(dim))


_CUMMAX, _CUMMIN = _return_type("cummax"), _return_type("cummin")


# -- running extremes -----------------------------------------------------------------------------
def _scan(xp, ufunc, a):
    """Running ``ufunc`` (maximum or minimum) along the last axis: numpy's accumulate, or a
    doubling scan (log2 n steps) where the array module has none."""
    if xp is np:
        return ufunc.accumulate(a, axis=-1)
    run, step, n = a, 1, a.shape[-1]
    while step < n:
        run = xp.concatenate([run[..., :step], ufunc(run[..., step:], run[..., :-step])], -1)
        step *= 2
    return run


def _cumext(input, dim, name):
    from ..indexing.gather import gather
    kind = _CUMMAX if name == "cummax" else _CUMMIN
    if input.ndim == 0:
        return kind(input.clone(), Tensor._make(xp_of(input._data).zeros((), dtype=np.int64)))
    d = input._dim(dim)
    a = input._data
    xp = xp_of(a)
    m = xp.moveaxis(a, d, -1)
    if m.shape[-1] == 0:
        return kind(input.clone(), Tensor._make(xp.zeros(a.shape, dtype=np.int64)))
    run = _scan(xp, xp.maximum if name == "cummax" else xp.minimum, m)
    # an entry equal to the running extreme (or nan) takes the index: ties go to the latest
    hit = (m == run) | (xp.isnan(m) if m.dtype.kind == "f" else False)
    pos = xp.where(hit, xp.arange(m.shape[-1]), 0)
    idx = xp.moveaxis(_scan(xp, xp.maximum, pos), -1, d).astype(np.int64)
    return kind(gather(input, d, Tensor._make(idx)), Tensor._make(idx))


@export("cummax", method=True)
def cummax(input, dim):
    return _cumext(input, dim, "cummax")


@export("cummin", method=True)
def cummin(input, dim):
    return _cumext(input, dim, "cummin")


class CumsumBackward0(Op):
    """y = running sum of x along dim"""
    __slots__ = ("axis",)

    def forward(self, xp, x, dim=0):
        self.axis = dim
        if x.dtype == np.float16:   # NOTE: half precision accumulates in float32, as PyTorch's
            return xp.cumsum(x, axis=dim, dtype=np.float32).astype(np.float16)
        return xp.cumsum(x, axis=dim, dtype=x.dtype)   # numpy would widen int32 to int64

    def backward(self, F, gy):   # the running sum from the other end
        g = F.flip(F.cumsum(F.flip(gy, self.axis), self.axis), self.axis)
        return g.copy() if F.fast else g


@export("cumsum", method=True)
def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.kind in "biu":   # integers and bool sum up in int64, as PyTorch
        input = input.to(np.int64)
    return CumsumBackward0.apply(input, dim=input._dim(dim))


OPS = [CumprodBackward0, LogcumsumexpBackward0, CumsumBackward0]


tensor_method("cumsum_")(lambda s, dim, *, dtype=None: inplace(s, lambda t: cumsum(t, dim)))
