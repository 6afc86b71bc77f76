"""Extreme values along a dimension or of the whole tensor: max, min, amax, amin, aminmax,
argmax, argmin, median / nanmedian, kthvalue, mode, quantile / nanquantile.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._arguments import expect_tensor
from ..._backend import xp_of
from ..._bfloat16 import is_inexact
from ..._exports import export
from ...tensor import Tensor
from .._op import Op
from ..indexing.gather import _along, _Scatter
from .reduce import (
    _axes,
    _int_dim,
    _nonempty,
    _return_type,
    shared,
    values_indices,
)


class MaxBackward1(Op):
    """y = max(x)   (NOTE: ties, or the nans of a nan result, share the gradient evenly, as
    PyTorch)"""
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")
    pick = "max"

    def forward(self, xp, x):   # (an empty x is refused by _nonempty)
        return getattr(x, self.pick)()

    def backward(self, F, gy, x, y):
        return shared(F, gy, x, y, nan_hits=True)


class MinBackward1(MaxBackward1):
    """y = min(x)"""
    pick = "min"


class AmaxBackward0(Op):
    """y = max of x over dims (all when None)   (NOTE: tied maxima share the gradient evenly, as
    PyTorch; a nan maximum gives its slice nan gradients)"""
    __slots__ = ("axes", "keepdims")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")
    pick = "max"

    def forward(self, xp, x, axes=None, keepdims=False):
        self.axes, self.keepdims = axes, keepdims
        return getattr(x, self.pick)(axis=axes, keepdims=keepdims)

    def backward(self, F, gy, x, y):
        return shared(F, gy, x, y, self.axes, self.keepdims)


class AminBackward0(AmaxBackward0):
    """y = min of x over dims (all when None)"""
    __slots__ = ()
    pick = "min"


class MaxBackward0(Op):
    """values = max(x, dim); the gradient flows to the (first) arg-max"""
    __slots__ = ("onehot", "axis", "keepdims")
    temps = ("onehot",)

    def forward(self, xp, x, axis=0, keepdims=False, largest=True):
        idx = xp.argmax(x, axis=axis, keepdims=True) if largest else xp.argmin(
            x, axis=axis, keepdims=True)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        self.onehot = xp.arange(x.shape[axis]).reshape(shape) == idx
        self.axis, self.keepdims = axis, keepdims
        values = xp.take_along_axis(x, idx, axis=axis)
        if not keepdims:
            values, idx = values.squeeze(axis), idx.squeeze(axis)
        return values, idx

    def backward(self, F, grads):
        gy = grads[0]
        if not self.keepdims:
            gy = F.expand_dims(gy, (self.axis,))
        return F.where(self.onehot, gy, 0) if F.fast else gy * self.onehot


class MinBackward0(MaxBackward0):
    __slots__ = ()

    def forward(self, xp, x, axis=0, keepdims=False, largest=False):
        return MaxBackward0.forward(self, xp, x, axis, keepdims, largest=False)


for _cls in (MaxBackward0, MinBackward0):
    _cls.n_outputs = 2


def _max_min(full, per_dim, input, dim, keepdim, other):
    name = "max" if full is MaxBackward1 else "min"
    expect_tensor(input, name)
    if isinstance(dim, Tensor):  # max(a, b): elementwise
        other = dim
    if other is not None:
        from ..pointwise import minmax as pointwise
        return (pointwise.maximum if full is MaxBackward1 else pointwise.minimum)(input, other)
    if input.dtype.kind == "c":   # complex numbers have no order
        raise NotImplementedError(f'"{name}_{"all" if dim is None else "cpu"}" not implemented '
                                  f"for '{_COMPLEX_NAMES[input.dtype.name]}'")
    axis = _nonempty(name, input, dim)
    if dim is None:
        return full.apply(input)
    axis = axis[0] if axis else 0
    if input.ndim == 0:
        zero = xp_of(input._data).zeros((), np.int64)
        return values_indices(full.apply(input), Tensor._make(zero), name)
    values, idx = per_dim.apply(input, axis=axis, keepdims=keepdim)
    idx._rg, idx.grad_fn = False, None  # indices are not differentiable
    return values_indices(values, idx, name)


@export("max", method=True)
def max(input, dim=None, keepdim=False, *, other=None):
    return _max_min(MaxBackward1, MaxBackward0, input, dim, keepdim, other)


@export("min", method=True)
def min(input, dim=None, keepdim=False, *, other=None):
    return _max_min(MinBackward1, MinBackward0, input, dim, keepdim, other)


@export("amax", method=True)
def amax(input, dim=(), keepdim=False):
    return AmaxBackward0.apply(input, axes=_nonempty("amax", input, dim), keepdims=keepdim)


@export("amin", method=True)
def amin(input, dim=(), keepdim=False):
    return AminBackward0.apply(input, axes=_nonempty("amin", input, dim), keepdims=keepdim)


@export("argmax", method=True)
def argmax(input, dim=None, keepdim=False):
    return arg_extreme("argmax", input, dim, keepdim)


@export("argmin", method=True)
def argmin(input, dim=None, keepdim=False):
    return arg_extreme("argmin", input, dim, keepdim)


class MedianBackward0(Op):
    """y = the lower median of all entries of x (nan if one is nan)   (NOTE: tied entries, or
    the nans of a nan result, share the gradient evenly, as PyTorch)"""
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")
    ignore_nan = False

    def forward(self, xp, x):
        flat = x.reshape(-1)
        n = flat.size
        if n == 0:
            return _empty_median(xp, x.dtype)
        s = xp.sort(flat)   # nan last
        if x.dtype.kind != "f":
            return s[(n - 1) // 2]
        count = (~xp.isnan(flat)).sum()
        k = xp.maximum(count - 1, 0) // 2 if self.ignore_nan else \
            xp.where(count < n, n - 1, (n - 1) // 2)
        return xp.take(s, k)

    def backward(self, F, gy, x, y):
        return shared(F, gy, x, y, nan_hits=True)


class NanmedianBackward0(MedianBackward0):
    """y = the lower median of the entries of x that are not nan (nan if all are)"""
    ignore_nan = True


def _empty_median(xp, dtype):
    """The median of no entries: nan; for integers what PyTorch's cast of that nan gives (NOTE:
    the x86 conversion result, INT_MIN, narrowed to the dtype)."""
    if is_inexact(dtype):
        return xp.asarray(np.nan, dtype=dtype)
    return xp.asarray(np.asarray(np.iinfo(np.int64 if dtype.itemsize == 8 else np.int32).min)
                      .astype(dtype))


class MedianBackward1(_Scatter):
    """values of median(x, dim) (indices, kept dim, computed by the caller)"""
    __slots__ = ("dim", "keepdim")

    def forward(self, xp, x, dim=0, index=None, keepdim=False):
        self.shape, self.where = x.shape, _along(xp, index, dim)
        self.dim, self.keepdim = dim, keepdim
        y = x[self.where]
        return y if keepdim else y.squeeze(dim)

    def backward(self, F, gy):
        return _Scatter.backward(self, F, gy if self.keepdim else F.expand_dims(gy, self.dim))


class NanmedianBackward1(MedianBackward1):
    """values of nanmedian(x, dim)"""
    __slots__ = ()


_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def median_along(input, dim, keepdim, ignore_nan):
    """(values, indices) of median / nanmedian along dim, as PyTorch picks them: the lower
    median (of the entries that are not nan); for median the first nan of a slice holding one."""
    name = "nanmedian" if ignore_nan else "median"
    if input.dtype.kind in "bc":
        kind = _COMPLEX_NAMES.get(input.dtype.name, "Bool")
        raise NotImplementedError(f'"median_{"cpu" if dim is None else "out"}" not implemented '
                                  f"for '{kind}'")
    if dim is None:
        return (NanmedianBackward0 if ignore_nan else MedianBackward0).apply(input)
    if input.ndim == 0:
        _axes(dim, 0)
        return input.clone(), Tensor._make(xp_of(input._data).zeros((), np.int64))
    d = input._dim(dim)
    a = input._data
    n = a.shape[d]
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    xp = xp_of(a)
    order = xp.argsort(a, axis=d, kind="stable")   # nan last
    if a.dtype.kind == "f":
        nan = xp.isnan(a)
        count = (~nan).sum(axis=d, keepdims=True)
        k = xp.maximum(count - 1, 0) // 2 if ignore_nan else xp.full(count.shape, (n - 1) // 2)
        idx = xp.take_along_axis(order, k, axis=d)
        if not ignore_nan:
            idx = xp.where(count < n, xp.argmax(nan, axis=d, keepdims=True), idx)
    else:
        idx = xp.take(order, xp.asarray([(n - 1) // 2]), axis=d)
    cls = NanmedianBackward1 if ignore_nan else MedianBackward1
    values = cls.apply(input, dim=d, index=idx, keepdim=keepdim)
    return values, Tensor._make((idx if keepdim else idx.squeeze(d)).astype(np.int64))


@export("median", method=True)
def median(input, dim=None, keepdim=False):
    """The lower median (of all entries, or along ``dim`` with its indices); nan where a nan
    is."""
    if dim is None:
        return median_along(input, None, keepdim, False)
    return values_indices(*median_along(input, dim, keepdim, False), "median")


_AMINMAX = namedtuple("aminmax", ["min", "max"])
_AMINMAX.__module__ = "gpugrad.return_types"


def _pick(input, idx, dim, keepdim, name):
    """(input's entries at ``idx`` along dim, idx) as PyTorch's named pair, with gradient."""
    from ..indexing.gather import gather
    if input.ndim == 0:
        return values_indices(input.clone(), Tensor._make(idx.reshape(())), name)
    values = gather(input, dim, Tensor._make(idx))
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values_indices(values, Tensor._make(idx), name)


@export("kthvalue", method=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    d = input._dim(dim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    a = input._data.reshape(1) if input.ndim == 0 else input._data
    xp = xp_of(a)
    idx = xp.argsort(a, axis=d, kind="stable")
    idx = xp.take(idx, xp.asarray([k - 1]), axis=d)
    return _pick(input, idx, d, keepdim, "kthvalue")


@export("mode", method=True)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest on ties) and an index where it occurs
    (its last occurrence)."""
    d = input._dim(dim) if input.ndim else 0
    a = input._data.reshape(1) if input.ndim == 0 else input._data
    xp = xp_of(a)
    m = xp.moveaxis(a, d, -1)
    s = xp.sort(m, axis=-1)
    n = s.shape[-1]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    # count of each sorted entry's run: equal values are adjacent after sorting
    same = s[..., :, None] == s[..., None, :]
    counts = same.sum(axis=-1)
    best = xp.argmax(counts, axis=-1)   # first maximal run in sorted order: the smallest value
    value = xp.take_along_axis(s, best[..., None], axis=-1)
    hit = m == value
    last = n - 1 - xp.argmax(hit[..., ::-1], axis=-1)
    idx = xp.moveaxis(last[..., None], -1, d)
    return _pick(input, idx, d, keepdim, "mode")


@export("aminmax", method=True)
def aminmax(input, *, dim=None, keepdim=False):
    if input.numel() == 0 if dim is None else input.shape[input._dim(dim)] == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is None:
        lo, hi = amin(input), amax(input)
        if keepdim:
            lo, hi = lo.reshape((1,) * input.ndim), hi.reshape((1,) * input.ndim)
        return _AMINMAX(lo, hi)
    return _AMINMAX(amin(input, dim, keepdim), amax(input, dim, keepdim))


_NANMEDIAN = _return_type("nanmedian")


# -- quantiles and medians ------------------------------------------------------------------------
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    from ..indexing.gather import gather
    from ..pointwise.arithmetic import lerp
    from .sorting import sort
    name = "nanquantile()" if ignore_nan else "quantile()"
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name} input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name} input tensor must be non-empty")
    if interpolation not in _MODES:
        raise RuntimeError(f"{name} interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    xp = xp_of(input._data)
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name} q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name} q tensor must be same dtype as the input tensor")
        qs, scalar_q = q._data.reshape(-1), q.ndim == 0
    else:
        qs, scalar_q = xp.asarray([q], dtype=input.dtype), True
    if qs.size and not bool(((qs >= 0) & (qs <= 1)).all()):
        bad = q if scalar_q and not isinstance(q, Tensor) else None
        raise RuntimeError(f"{name} q must be in the range [0, 1] but got {bad}" if bad is not None
                           else f"{name} q values must be in the range [0, 1]")
    if dim is None:
        x, out_shape = input.reshape(-1), ((1,) * input.ndim if keepdim else ())
    else:
        d = input._dim(dim)
        x = input.movedim(d, -1) if input.ndim else input.reshape(1)
        out_shape = tuple(1 if i == d else n for i, n in enumerate(input.shape)) if keepdim \
            else tuple(n for i, n in enumerate(input.shape) if i != d)
    values = sort(x, -1).values                   # nan last
    n = values.shape[-1]
    nan = xp.isnan(values._data)
    last = n - 1
    if ignore_nan:
        count = (~nan).sum(axis=-1, keepdims=True)
        ranks = qs * (count - 1).astype(qs.dtype)
        ranks = xp.where(count == 0, last, ranks)      # all nan: read the (nan) last entry
    else:
        ranks = xp.where(nan.any(axis=-1, keepdims=True), last,
                         qs * qs.dtype.type(last) + xp.zeros(nan.shape[:-1] + (1,), qs.dtype))
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    below = xp.floor(ranks).astype(np.int64)
    above = xp.ceil(ranks).astype(np.int64)
    lo = gather(values, -1, Tensor._make(below))
    if interpolation in ("lower", "higher", "nearest"):
        y = lo
    else:
        hi = gather(values, -1, Tensor._make(above))
        w = xp.full(ranks.shape, 0.5, ranks.dtype) if interpolation == "midpoint" \
            else ranks - below
        y = lerp(lo, hi, Tensor._make(w.astype(input.dtype)))
    y = y.movedim(-1, 0)                          # (len(q), reduced dims...)
    y = y.reshape((-1,) + out_shape)
    return y[0] if scalar_q else y


@export("quantile", method=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles along dim (of all entries when dim is None); nan if a slice has nan."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@export("nanquantile", method=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile of the entries that are not nan (nan for a slice of nan only)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


@export("nanmedian", method=True)
def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the entries that are not nan (with indices when dim is given); nan
    where all are."""
    if dim is None:
        return median_along(input, None, keepdim, True)
    return _NANMEDIAN(*median_along(input, dim, keepdim, True))


def arg_extreme(name, input, dim, keepdim):
    """argmax / argmin: the first index of the extreme (of a nan, as the largest and smallest)."""
    x = expect_tensor(input, name)._data
    xp = xp_of(x)
    if x.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if x.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        r = getattr(xp, name)(x.reshape(-1)).reshape((1,) * x.ndim if keepdim else ())
        return Tensor._make(xp.asarray(r, dtype=np.int64))
    axis = _axes(_int_dim(name, dim), x.ndim)
    if not x.ndim:
        return Tensor._make(xp.zeros((), np.int64))
    if x.shape[axis[0]] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {axis[0]} to have non-zero size.")
    r = getattr(xp, name)(x, axis=axis[0], keepdims=keepdim)
    return Tensor._make(xp.asarray(r, dtype=np.int64))


OPS = [MaxBackward1, MinBackward1, AmaxBackward0, AminBackward0, MaxBackward0, MinBackward0,
       MedianBackward0, MedianBackward1, NanmedianBackward0, NanmedianBackward1]
