"""Reductions (sum, mean, var, std, max, min, norm, logsumexp) and softmax / log_softmax."""
from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections import namedtuple

import numpy as np

from .. import kernels
from .._backend import xp_of
from ..amp._state import state as _amp
from ..amp._state import upper as _upper
from ..tensor import DEFAULT, Tensor, scalar_name
from ._op import Op


def _return_type(name):
    """PyTorch's ``torch.return_types.<name>``: a (values, indices) named tuple, printed so."""
    base = namedtuple(name, ["values", "indices"])

    def __repr__(self):
        return f"gpugrad.return_types.{name}(\nvalues={self.values!r},\nindices={self.indices!r})"
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__,
                                "__module__": "gpugrad.return_types"})


RETURN_TYPES = {n: _return_type(n)
                for n in ("max", "min", "sort", "topk", "median", "kthvalue", "mode")}


def values_indices(values, indices, name="max"):
    return RETURN_TYPES[name](values, indices)


def _axes(dim, ndim):
    """``dim`` (int, sequence or None) as a sorted tuple of non-negative axes, or None. An empty
    sequence names every axis, as PyTorch's reductions read it."""
    if dim is None:
        return None
    if isinstance(dim, Tensor):
        dim = dim.tolist()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if not dims:
        return tuple(range(ndim))
    n = builtins.max(ndim, 1)
    out = []
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}]"
                             f", but got {d})")
        if d % n in out:
            raise RuntimeError(f"dim {d % n} appears multiple times in the list of dims")
        out.append(d % n)
    return tuple(sorted(out)) if ndim else ()


def _int_dim(name, dim, message=None):
    """``dim`` as an int, or PyTorch's TypeError for a tuple or list where one int is taken."""
    try:
        return operator.index(dim)
    except TypeError:
        raise TypeError(message or f"{name}(): argument 'dim' (position 2) must be int, not "
                                   f"{type(dim).__name__}") from None


def _expand(F, g, shape, axes, keepdims):
    """Broadcast a reduced gradient back over the reduced axes."""
    if axes is None:
        return F.broadcast_to(g, shape)
    if not keepdims and axes:
        g = F.expand_dims(g, axes)
    return F.broadcast_to(g, shape)


class SumBackward0(Op):
    """y = sum(x)"""
    __slots__ = ("shape",)

    def forward(self, xp, x):
        self.shape = x.shape
        return x.sum()

    def backward(self, F, gy):
        return F.broadcast_to(gy, self.shape)


class SumBackward1(Op):
    """y = sum(x, dim, keepdim)"""
    __slots__ = ("shape", "axes", "keepdims")

    def forward(self, xp, x, axes=None, keepdims=False):
        self.shape, self.axes, self.keepdims = x.shape, axes, keepdims
        return x.sum(axis=axes, keepdims=keepdims)

    def backward(self, F, gy):
        return _expand(F, gy, self.shape, self.axes, self.keepdims)


class MeanBackward0(Op):
    """y = mean(x)"""
    __slots__ = ("shape",)

    def forward(self, xp, x):
        self.shape = x.shape
        return _mean(x)

    def backward(self, F, gy):
        return F.broadcast_to(gy / builtins.max(math.prod(self.shape), 1), self.shape)


class MeanBackward1(Op):
    """y = mean(x, dim, keepdim)"""
    __slots__ = ("shape", "axes", "keepdims")

    def forward(self, xp, x, axes=None, keepdims=False):
        self.shape, self.axes, self.keepdims = x.shape, axes, keepdims
        return _mean(x, axes, keepdims)

    def backward(self, F, gy):
        n = math.prod(self.shape[a] for a in self.axes)
        return _expand(F, gy / builtins.max(n, 1), self.shape, self.axes, self.keepdims)


def _mean(x, axes=None, keepdims=False):
    if x.size:
        return x.mean(axis=axes, keepdims=keepdims)
    with np.errstate(invalid="ignore"):   # NOTE: nan over no entries, without a warning (PyTorch)
        return x.sum(axis=axes, keepdims=keepdims) / x.dtype.type(0)


class ProdBackward0(Op):
    """y = prod(x) (all elements, or along ``axis``: ProdBackward1)"""
    __slots__ = ("axis", "keepdims")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, axis=None, keepdims=False):
        self.axis, self.keepdims = axis, keepdims
        return x.prod(axis=axis, keepdims=keepdims)

    def backward(self, F, gy, x, y):
        axis = self.axis
        g = _expand(F, gy, x.shape, None if axis is None else (axis,), self.keepdims)
        if not F.fast:  # differentiable form; assumes no zero in x (others: y / x)
            yb = _expand(F, y, x.shape, None if axis is None else (axis,), self.keepdims)
            return g * yb / x
        # product of all the other elements: exclusive cumulative products from both sides,
        # exact when x holds zeros (where y / x is not)
        xp = F.xp
        flat = x.reshape(-1) if axis is None else xp.moveaxis(x, axis, -1)
        ones = xp.ones(flat.shape[:-1] + (1,), dtype=x.dtype)
        left = xp.concatenate([ones, xp.cumprod(flat[..., :-1], axis=-1)], axis=-1)
        right = xp.flip(xp.cumprod(xp.flip(flat[..., 1:], -1), axis=-1), -1)
        right = xp.concatenate([right, ones], axis=-1)
        others = left * right
        others = others.reshape(x.shape) if axis is None else xp.moveaxis(others, -1, axis)
        return g * others


class ProdBackward1(ProdBackward0):
    __slots__ = ()


class VarBackward0(Op):
    """y = sum((x - mean)^2) / (N - correction)"""
    __slots__ = ("axes", "keepdims", "correction")
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, axes=None, keepdims=False, correction=1):
        self.axes, self.keepdims, self.correction = axes, keepdims, correction
        return _moment(x.var, x, axes, keepdims, correction)

    def backward(self, F, gy, x):
        axes = self.axes if self.axes is not None else tuple(range(x.ndim))
        n = math.prod(x.shape[a] for a in axes)
        centred = x - F.mean(x, axis=axes, keepdims=True)
        g = _expand(F, gy, x.shape, axes, self.keepdims)
        return g * centred * (2.0 * _inv(n - self.correction))


class StdBackward0(Op):
    """y = sqrt(var(x))"""
    __slots__ = ("axes", "keepdims", "correction")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, axes=None, keepdims=False, correction=1):
        self.axes, self.keepdims, self.correction = axes, keepdims, correction
        return _moment(x.std, x, axes, keepdims, correction)

    def backward(self, F, gy, x, y):
        axes = self.axes if self.axes is not None else tuple(range(x.ndim))
        n = math.prod(x.shape[a] for a in axes)
        centred = x - F.mean(x, axis=axes, keepdims=True)
        # NOTE: zero gradient where the std is 0 (a constant input), as PyTorch
        safe = F.where(y == 0, 1, y) if F.fast else F.where(y == 0, F.ones_like(y), y)
        g = _expand(F, gy / safe * (y != 0), x.shape, axes, self.keepdims)
        return g * centred * _inv(n - self.correction)


def _moment(fn, x, axes, keepdims, correction):
    """x.var or x.std; inf or nan, quietly, where N - correction <= 0 (the public function
    gave PyTorch's warning)."""
    n = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    if n - correction > 0:
        return fn(axis=axes, keepdims=keepdims, ddof=correction)
    with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(axis=axes, keepdims=keepdims, ddof=correction)


def _inv(dof):
    """1 / dof with C's float semantics at 0 (inf: the gradient becomes nan, as PyTorch's)."""
    return 1.0 / dof if dof else math.inf


def shared(F, gy, x, y, axes=None, keepdims=False, nan_hits=False):
    """``gy`` split evenly between the entries of ``x`` equal to their slice's ``y`` (``axes``
    reduced; all when None). With ``nan_hits`` a nan ``y`` is shared by its slice's nans (max(),
    median()); without, such a slice gets nan, as amax's ``grad / count * mask`` gives."""
    xr, yr = _raw(x), _raw(y)
    xp = xp_of(xr)
    yb = yr if axes is None or keepdims else xp.expand_dims(yr, axes)
    hit = xr == yb
    if nan_hits and xr.dtype.kind in "fc":
        hit = hit | (xp.isnan(xr) & xp.isnan(yb))
    hit = hit.astype(xr.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = xp.asarray(hit / hit.sum(axis=axes, keepdims=True))   # numpy: 0-d / 0-d is a scalar
    g = _expand(F, gy, xr.shape, axes, keepdims)
    return g * (w if F.fast else Tensor._make(w))


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


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


class LinalgVectorNormBackward0(Op):
    """y = (sum |x|^p)^(1/p)"""
    __slots__ = ("ord", "axes", "keepdims")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, ord=2, axes=None, keepdims=False):
        self.ord, self.axes, self.keepdims = ord, axes, keepdims
        a = xp.abs(x)
        if ord == 2:
            return xp.sqrt((x * x).sum(axis=axes, keepdims=keepdims))
        if ord == 1:
            return a.sum(axis=axes, keepdims=keepdims)
        if ord == math.inf:
            return a.max(axis=axes, keepdims=keepdims)
        if ord == -math.inf:
            return a.min(axis=axes, keepdims=keepdims)
        if ord == 0:
            return (a != 0).sum(axis=axes, keepdims=keepdims).astype(x.dtype)
        return (a ** ord).sum(axis=axes, keepdims=keepdims) ** (1.0 / ord)

    def backward(self, F, gy, x, y):
        p = self.ord
        g = _expand(F, gy, x.shape, self.axes, self.keepdims)
        yb = _expand(F, y, x.shape, self.axes, self.keepdims)
        if p == 2:
            # NOTE: the subgradient at x == 0 is taken as 0 (y == 0 there), as PyTorch
            safe = F.where(yb == 0, 1, yb) if F.fast else F.where(yb == 0, F.ones_like(yb), yb)
            return g * x / safe
        if p == 1:
            return g * F.sign(x)
        if abs(p) == math.inf:
            hit = F.abs(x) == yb
            n = F.sum(hit, axis=self.axes, keepdims=True) if F.fast else F.sum(
                hit * 1.0, axis=self.axes, keepdims=True)
            return g * F.sign(x) * hit / n
        if p == 0:
            return g * 0
        return g * F.sign(x) * F.abs(x) ** (p - 1) / yb ** (p - 1)


class LogsumexpBackward0(Op):
    """y = log(sum(exp(x)))   (computed stably around the max)"""
    __slots__ = ("axes", "keepdims")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, axes=None, keepdims=False):
        self.axes, self.keepdims = axes, keepdims
        m = x.max(axis=axes, keepdims=True) if x.size else xp.zeros((1,) * x.ndim, x.dtype)
        m = xp.where(xp.isfinite(m), m, 0)
        with np.errstate(divide="ignore"):   # log(0) = -inf: a slice of -inf, or no entries
            y = xp.log(xp.exp(x - m).sum(axis=axes, keepdims=True)) + m
        return y if keepdims else y.squeeze(axis=axes)

    def backward(self, F, gy, x, y):
        g = _expand(F, gy, x.shape, self.axes, self.keepdims)
        yb = _expand(F, y, x.shape, self.axes, self.keepdims)
        return g * F.exp(x - yb)


class SoftmaxBackward0(Op):
    """y = exp(x) / sum(exp(x), dim)"""
    __slots__ = ("axis",)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x, axis=-1):
        self.axis = axis
        e = xp.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def backward(self, F, gy, y):
        return y * (gy - F.sum(gy * y, axis=self.axis, keepdims=True))


class LogSoftmaxBackward0(Op):
    """y = x - logsumexp(x, dim)"""
    __slots__ = ("axis",)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x, axis=-1):
        self.axis = axis
        if x.ndim and axis % x.ndim == x.ndim - 1:   # rows: one kernel on the GPU
            return kernels.log_softmax(x)
        z = x - x.max(axis=axis, keepdims=True)
        return z - xp.log(xp.exp(z).sum(axis=axis, keepdims=True))

    def backward(self, F, gy, y):
        if F.fast and y.ndim and self.axis % y.ndim == y.ndim - 1:
            return kernels.log_softmax_bwd(y, gy)
        return gy - F.exp(y) * F.sum(gy, axis=self.axis, keepdims=True)


# -- public functions ---------------------------------------------------------------------------
def _float_input(name, x):
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{scalar_name(x._data.dtype).capitalize()}")


def _cast(input, dtype):
    return input if dtype is None else input.to(dtype)


def _widened(input, dtype):
    """The input of sum / prod: cast to dtype, or unsigned integers to int64 (PyTorch's result;
    numpy's would be uint64)."""
    return _cast(input, np.int64 if dtype is None and input._data.dtype.kind == "u" else dtype)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    input = _widened(input, dtype)
    y = SumBackward0.apply(input) if dim is None and not keepdim else SumBackward1.apply(
        input, axes=_axes(() if dim is None else dim, input.ndim), keepdims=keepdim)
    # numpy sums small integers as int64: an asked-for dtype is cast back (nothing to record)
    return y if dtype is None or y._data.dtype == input._data.dtype else y.to(input.dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    input = _cast(input, dtype)
    _float_input("mean", input)
    if dim is None and not keepdim:
        return MeanBackward0.apply(input)
    return MeanBackward1.apply(input, axes=_axes(() if dim is None else dim, input.ndim),
                               keepdims=keepdim)


def prod(input, dim=None, keepdim=None, *, dtype=None):
    input = _widened(input, dtype)
    if dim is None:
        return ProdBackward0.apply(input)
    # PyTorch's message: one overload is left when keepdim is given, two when not
    axis = _axes(_int_dim("prod", dim, None if keepdim is not None else (
        f"prod() received an invalid combination of arguments - got (Tensor, "
        f"{type(dim).__name__}), but expected one of:\n * (Tensor input, *, torch.dtype dtype = "
        f"None)\n * (Tensor input, int dim, bool keepdim = False, *, torch.dtype dtype = None, "
        f"Tensor out = None)\n")), input.ndim)
    return ProdBackward1.apply(input, axis=axis[0] if axis else None, keepdims=bool(keepdim))


def _var_args(name, input, dim, unbiased, correction):
    """(axes, correction) of var, std, var_mean, std_mean; PyTorch's dtype error, and its warning
    where N - correction <= 0."""
    if isinstance(dim, bool):  # var(x, False): the old positional ``unbiased``
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments - got both "
                        f"unbiased and correction")
    if input.dtype.kind not in "fc":
        raise RuntimeError(f"{'std and var' if name in ('std', 'var') else name} only support "
                           f"floating point and complex dtypes")
    axes = _axes(dim, input.ndim)
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    n = input.numel() if axes is None else math.prod(input.shape[a] for a in axes)
    if n - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      f"than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    return axes, correction


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    axes, correction = _var_args("var", input, dim, unbiased, correction)
    return VarBackward0.apply(input, axes=axes, keepdims=keepdim, correction=correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    axes, correction = _var_args("std", input, dim, unbiased, correction)
    return StdBackward0.apply(input, axes=axes, keepdims=keepdim, correction=correction)


def _max_min(full, per_dim, input, dim, keepdim, other):
    name = "max" if full is MaxBackward1 else "min"
    if isinstance(dim, Tensor):  # max(a, b): elementwise
        other = dim
    if other is not None:
        from . import pointwise
        return (pointwise.maximum if full is MaxBackward1 else pointwise.minimum)(input, other)
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


def max(input, dim=None, keepdim=False, *, other=None):
    return _max_min(MaxBackward1, MaxBackward0, input, dim, keepdim, other)


def min(input, dim=None, keepdim=False, *, other=None):
    return _max_min(MinBackward1, MinBackward0, input, dim, keepdim, other)


def _nonempty(name, input, dim):
    """The axes of a max / min / amax / amin; PyTorch's errors where it reduces no entries."""
    axes = _axes(dim, input.ndim)
    if input.numel() == 0:
        if dim is None or not isinstance(dim, (int, Tensor)) and len(dim) == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f"argument.")
        empty = [a for a in axes if input.shape[a] == 0]
        if empty:
            raise IndexError(f"{name}(): Expected reduction dim {empty[0]} to have non-zero "
                             f"size.")
    return axes


def amax(input, dim=(), keepdim=False):
    return AmaxBackward0.apply(input, axes=_nonempty("amax", input, dim), keepdims=keepdim)


def amin(input, dim=(), keepdim=False):
    return AminBackward0.apply(input, axes=_nonempty("amin", input, dim), keepdims=keepdim)


def argmax(input, dim=None, keepdim=False):
    from .select import arg_extreme
    return arg_extreme("argmax", input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    from .select import arg_extreme
    return arg_extreme("argmin", input, dim, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    from .extra import torch_norm
    return torch_norm(input, p, dim, keepdim, dtype, out)


def logsumexp(input, dim, keepdim=False):
    if input._data.dtype.kind in "biu":   # integers give the default float dtype (PyTorch)
        input = input.to(DEFAULT.float)
    return LogsumexpBackward0.apply(input, axes=_axes(dim, input.ndim), keepdims=keepdim)


def _softmax_input(name, input, dim, dtype):
    """(input, axis): the input upcast under autocast or cast to dtype; PyTorch's error for an
    integer or bool input without a dtype."""
    if _amp.active:
        input, = _upper(input)
    input = _cast(input, dtype)
    axis = _axes(-1 if dim is None else dim, input.ndim)[0] if input.ndim else 0
    if input._data.dtype.kind in "biu":
        last = "lastdim_" if axis == builtins.max(input.ndim - 1, 0) else ""
        raise NotImplementedError(f'"{name}_{last}kernel_impl" not implemented for '
                                  f"'{scalar_name(input.dtype).capitalize()}'")
    return input, axis


def softmax(input, dim=None, dtype=None):
    input, axis = _softmax_input("softmax", input, dim, dtype)
    return SoftmaxBackward0.apply(input, axis=axis)


def log_softmax(input, dim=None, dtype=None):
    input, axis = _softmax_input("log_softmax", input, dim, dtype)
    return LogSoftmaxBackward0.apply(input, axis=axis)


OPS = [SumBackward0, SumBackward1, ProdBackward0, ProdBackward1, MeanBackward0, MeanBackward1,
       VarBackward0, StdBackward0, MaxBackward1, MinBackward1, AmaxBackward0, AminBackward0,
       MaxBackward0, MinBackward0, LinalgVectorNormBackward0, LogsumexpBackward0,
       SoftmaxBackward0, LogSoftmaxBackward0]
