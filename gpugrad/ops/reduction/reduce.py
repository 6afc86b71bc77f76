"""Reductions: sum, mean, prod, var, std (and var_mean / std_mean), nansum / nanmean,
count_nonzero, logsumexp, the vector norm behind ``torch.norm``, and cov / corrcoef.
"""
from __future__ import annotations

import builtins
import math
import numbers
import operator
import warnings
from collections import namedtuple

import numpy as np

from ..._arguments import expect_tensor
from ..._backend import xp_of
from ..._bfloat16 import is_inexact
from ..._exports import export
from ...tensor import DEFAULT, Tensor, as_dim, scalar_name
from .._op import Op
from ..linalg.norms import _kind_name


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
    dims = (dim,) if dim.__class__ is int else tuple(dim) if isinstance(dim, (tuple, list)) \
        else (as_dim(dim),)
    if not dims:
        return tuple(range(ndim))
    n = builtins.max(ndim, 1)
    out = []
    for d in dims:
        if d.__class__ is not int:
            d = as_dim(d)
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
        if isinstance(dim, bool):
            raise TypeError
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
    if x.dtype == np.float16:   # NOTE: half precision accumulates in float32, as PyTorch's
        wide = x.astype(np.float32)
        return _moment(getattr(wide, fn.__name__), wide, axes, keepdims,
                       correction).astype(np.float16)
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


class LinalgVectorNormBackward0(Op):
    """y = (sum |x|^p)^(1/p)"""
    __slots__ = ("ord", "axes", "keepdims")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, ord=2, axes=None, keepdims=False):
        self.ord, self.axes, self.keepdims = ord, axes, keepdims
        if x.dtype == np.float16:   # NOTE: half precision accumulates in float32, as PyTorch's
            return self.forward(xp, x.astype(np.float32), ord, axes, keepdims).astype(x.dtype)
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


# -- public functions ---------------------------------------------------------------------------
def _float_input(name, x):
    if not is_inexact(x._data.dtype):
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: "
                           f"{scalar_name(x._data.dtype).capitalize()}")


def _cast(input, dtype, fn="mean"):
    if input.__class__ is not Tensor:
        expect_tensor(input, fn)
    return input if dtype is None else input.to(dtype)


def _widened(input, dtype):
    """The input of sum / prod: cast to dtype, or unsigned integers to int64 (PyTorch's result;
    numpy's would be uint64)."""
    if input.__class__ is not Tensor:
        expect_tensor(input, "sum")
    return _cast(input, np.int64 if dtype is None and input._data.dtype.kind == "u" else dtype)


@export("sum", method=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    input = _widened(input, dtype)
    y = SumBackward0.apply(input) if dim is None and not keepdim else SumBackward1.apply(
        input, axes=_axes(() if dim is None else dim, input.ndim), keepdims=keepdim)
    # numpy sums small integers as int64: an asked-for dtype is cast back (nothing to record)
    return y if dtype is None or y._data.dtype == input._data.dtype else y.to(input.dtype)


@export("mean", method=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    input = _cast(input, dtype)
    _float_input("mean", input)
    if dim is None and not keepdim:
        return MeanBackward0.apply(input)
    return MeanBackward1.apply(input, axes=_axes(() if dim is None else dim, input.ndim),
                               keepdims=keepdim)


@export("prod", method=True)
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
    if not is_inexact(input.dtype):
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


@export("var", method=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    axes, correction = _var_args("var", input, dim, unbiased, correction)
    return VarBackward0.apply(input, axes=axes, keepdims=keepdim, correction=correction)


@export("std", method=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    axes, correction = _var_args("std", input, dim, unbiased, correction)
    return StdBackward0.apply(input, axes=axes, keepdims=keepdim, correction=correction)


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


@export("norm", method=True)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None, *, out=None):
    return torch_norm(input, p, dim, keepdim, dtype, out)


@export("logsumexp", method=True)
def logsumexp(input, dim, keepdim=False):
    if input._data.dtype.kind in "biu":   # integers give the default float dtype (PyTorch)
        input = input.to(DEFAULT.float)
    return LogsumexpBackward0.apply(input, axes=_axes(dim, input.ndim), keepdims=keepdim)


class VarMeanBackward0(Op):
    """(var, mean) of x over dims: sum((x - m)^2) / (N - correction) and m"""
    __slots__ = ("axes", "keepdims", "correction")
    saves = (0,)
    saved_names = ("self",)
    root = False

    def forward(self, xp, x, axes=None, keepdims=False, correction=1):
        self.axes, self.keepdims, self.correction = axes, keepdims, correction
        fn = x.std if self.root else x.var
        return _moment(fn, x, axes, keepdims, correction), _mean(x, axes, keepdims)

    def backward(self, F, grads, x):
        axes = self.axes if self.axes is not None else tuple(range(x.ndim))
        n = math.prod(x.shape[a] for a in axes)
        gv, gm = grads
        gx = None
        if gv is not None:
            centred = x - F.mean(x, axis=axes, keepdims=True)
            scale = _inv(n - self.correction)
            if self.root:   # NOTE: zero gradient where the std is 0, as StdBackward0
                y = F.sqrt(F.sum(centred * centred, axis=axes, keepdims=True) * scale)
                safe = F.where(y == 0, 1, y) if F.fast else F.where(y == 0, F.ones_like(y), y)
                gx = _expand(F, gv, x.shape, axes, self.keepdims) / safe * (y != 0) * centred \
                    * scale
            else:
                gx = _expand(F, gv, x.shape, axes, self.keepdims) * centred * (2.0 * scale)
        if gm is not None:
            g = _expand(F, gm / max(n, 1), x.shape, axes, self.keepdims)
            gx = g if gx is None else gx + g
        return gx


class StdMeanBackward0(VarMeanBackward0):
    """(std, mean) of x over dims"""
    __slots__ = ()
    root = True


for _cls in (VarMeanBackward0, StdMeanBackward0):
    _cls.n_outputs = 2


def _moments(name, cls, input, dim, unbiased, keepdim, correction):
    axes, correction = _var_args(name, input, dim, unbiased, correction)
    return cls.apply(input, axes=axes, keepdims=keepdim, correction=correction)


@export("std_mean")
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("std_mean", StdMeanBackward0, input, dim, unbiased, keepdim, correction)


@export("var_mean")
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("var_mean", VarMeanBackward0, input, dim, unbiased, keepdim, correction)


def torch_norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """torch.norm: a vector norm over dim (every entry when None), except a string p other
    than 'fro', or 'fro' over more than two dims, which is linalg.matrix_norm's."""
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if not isinstance(p, (str, numbers.Real)) and p is not None:
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(p).__name__}")
    if isinstance(p, str) and (p != "fro" or dims is not None and len(dims) > 2):
        from ..linalg.norms import matrix_norm
        y = matrix_norm(input, p, tuple(range(input.ndim)) if dims is None else dims, keepdim,
                        dtype=dtype)
    else:
        input = input if dtype is None else input.to(dtype)
        if not is_inexact(input.dtype):
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                               f"as input. Got {scalar_name(input.dtype).capitalize()}")
        ord = 2.0 if p in ("fro", None) else float(p)
        y = LinalgVectorNormBackward0.apply(input, ord=ord, axes=_axes(dims, input.ndim),
                                            keepdims=keepdim)
    return y if out is None else out.copy_(y)


@export("count_nonzero", method=True)
def count_nonzero(input, dim=None):
    a = input._data
    xp = xp_of(a)
    return Tensor._make(xp.asarray(xp.count_nonzero(a, axis=dim), dtype=np.int64))


class NansumBackward0(Op):
    """y = sum of the entries of x that are not nan"""
    __slots__ = ("axes", "keepdims")
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, axes=None, keepdims=False):
        self.axes, self.keepdims = axes, keepdims
        return xp.asarray(xp.nansum(x, axis=axes, keepdims=keepdims))

    def backward(self, F, gy, x):
        g = _expand(F, gy, x.shape, self.axes, self.keepdims)
        return g * ~xp_of(_raw(x)).isnan(_raw(x))


# -- public functions ---------------------------------------------------------------------------
def _floating(fn, x):
    if not is_inexact(x.dtype):
        raise RuntimeError(f"{fn}(): expected input to have floating point or complex dtype but "
                           f"got {scalar_name(x.dtype).capitalize()}")


@export("nansum", method=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return NansumBackward0.apply(input, axes=_axes(dim, input.ndim), keepdims=keepdim)


@export("nanmean", method=True)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    _floating("nanmean", input)
    a = input._data
    xp = xp_of(a)
    axes = _axes(dim, input.ndim)
    count = xp.asarray((~xp.isnan(a)).sum(axis=axes, keepdims=keepdim), dtype=a.dtype)
    return nansum(input, dim, keepdim) / count


# -- covariance -----------------------------------------------------------------------------------
@export("cov", method=True)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of input (observations in the columns):
    C = sum_k w_k (x_k - m)(x_k - m)^T / (sum w - correction ...), with numpy's weighting."""
    import warnings

    from ..linalg.products import mm
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if not is_inexact(x.dtype):
        from ..._creation import get_default_dtype
        x = x.to(get_default_dtype())
    n = x.shape[1]
    w = None
    for name, weights, kinds, kind_name in (("fweights", fweights, "iu", "integral"),
                                            ("aweights", aweights, "f", "floating point")):
        if weights is None:
            continue
        if weights.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {weights.ndim} dimensions")
        if weights.dtype.kind not in kinds:
            raise RuntimeError(f"cov(): expected {name} to have {kind_name} dtype but got "
                               f"{name} with {_kind_name(weights.dtype)} dtype")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {weights.numel()} != {n}")
        if bool((weights._data < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    if w is None:
        w_sum = n
        avg = x.mean(1)
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(_raw(norm) <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    xc = x - avg.unsqueeze(1)
    c = mm(xc, (xc if w is None else xc * w).t())
    return (c / norm).squeeze()


@export("corrcoef", method=True)
def corrcoef(input):
    """Pearson correlation coefficients: cov(input) scaled by the standard deviations, clipped
    to [-1, 1]."""
    from ..pointwise.minmax import clamp
    from ..pointwise.unary import sqrt
    c = cov(input)
    if c.ndim == 0:
        return c / c
    s = sqrt(c.diagonal())
    c = c / s.unsqueeze(1) / s.unsqueeze(0)
    return clamp(c, -1, 1)


OPS = [SumBackward0, SumBackward1, ProdBackward0, ProdBackward1, MeanBackward0, MeanBackward1,
       VarBackward0, StdBackward0, LinalgVectorNormBackward0, LogsumexpBackward0, VarMeanBackward0,
       StdMeanBackward0, NansumBackward0]
