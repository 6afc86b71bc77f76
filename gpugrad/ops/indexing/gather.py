"""Selecting, reordering and repeating: gather, index_select, masked_fill, flip, roll, cumsum,
tril/triu, sort/topk/argsort, repeat, narrow, outer.

Index arguments are checked on every device: a bad index is an error, never a wrapped read.
"""
from __future__ import annotations

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from ._op import Op, broadcast_error
from .reduce import _axes, _int_dim, values_indices


def _data(t):
    return t._data if isinstance(t, Tensor) else t


def _along(xp, index, dim):
    """The fancy index that reads ``index`` along ``dim`` and every other position as is."""
    n = index.ndim
    return tuple(index if d == dim else
                 xp.arange(s).reshape(tuple(s if k == d else 1 for k in range(n)))
                 for d, s in enumerate(index.shape))


def _check_bounds(index, size, dim, message=None):
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise IndexError(message or f"index {int(index[bad].ravel()[0])} is out of bounds for "
                                    f"dimension {dim} with size {size}")


class _Scatter(Op):
    """Ops whose gradient adds the output's gradient back at the positions they read."""
    __slots__ = ("shape", "where")
    temps = ("where",)

    def backward(self, F, gy):
        return F.index_add(self.shape, self.where, gy)


class GatherBackward0(_Scatter):
    """y[..., j, ...] = x[..., index[..., j, ...], ...] along dim"""
    __slots__ = ()

    def forward(self, xp, x, dim=0, index=None):
        self.shape, self.where = x.shape, _along(xp, index, dim)
        return x[self.where]


class SortBackward0(GatherBackward0):
    """values of sort(x, dim) (indices computed by the caller)"""
    __slots__ = ()


class TopkBackward0(GatherBackward0):
    """values of topk(x, k, dim) (indices computed by the caller)"""
    __slots__ = ()


class EmbeddingBackward0(_Scatter):
    """y = weight[indices]   (rows at padding_idx get no gradient; with scale_grad_by_freq a
    row's gradient is divided by how often the mini-batch reads it)"""
    __slots__ = ("padding_idx", "freq")

    def forward(self, xp, weight, indices=None, padding_idx=None, scale_grad_by_freq=False):
        self.shape, self.where, self.padding_idx = weight.shape, (indices,), padding_idx
        self.freq = scale_grad_by_freq
        return weight[indices]

    def backward(self, F, gy):
        g = F.index_add(self.shape, self.where, gy)
        if self.padding_idx is not None or self.freq:
            xp = xp_of(self.where[0])
            keep = xp.ones((self.shape[0], 1), dtype=gy.dtype)
            if self.freq:
                counts = xp.bincount(self.where[0].reshape(-1), minlength=self.shape[0])
                keep = keep / xp.maximum(counts, 1).astype(gy.dtype)[:, None]
            if self.padding_idx is not None:
                keep[self.padding_idx] = 0
            g = g * (keep if F.fast else Tensor._make(keep))
        return g


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rescale in place (outside autograd) each row of ``weight`` read by ``indices`` whose
    norm_type-norm exceeds max_norm to norm max_norm (as PyTorch: by max_norm / (norm + 1e-7))."""
    w = weight._data
    xp = xp_of(w)
    rows = xp.unique(_data(indices).reshape(-1))
    picked = w[rows]
    p = float(norm_type)
    a = xp.abs(picked)
    norm = (a.max(axis=1) if p == float("inf") else (a > 0).sum(axis=1).astype(w.dtype)
            if p == 0 else (a ** p).sum(axis=1) ** (1 / p))
    scale = xp.where(norm > max_norm, max_norm / (norm + 1e-7), 1).astype(w.dtype)
    w[rows] = picked * scale[:, None]
    weight._version_box().v += 1
    return weight


class IndexSelectBackward0(_Scatter):
    """y = x.take(index, dim)"""
    __slots__ = ()

    def forward(self, xp, x, dim=0, index=None):
        self.shape, self.where = x.shape, (slice(None),) * dim + (index,)
        return xp.take(x, index, axis=dim)


class MaskedFillBackward0(Op):
    """y = value where mask else x   (value a number)"""
    __slots__ = ("keep",)
    temps = ("keep",)

    def forward(self, xp, x, mask=None, value=0):
        m = xp.broadcast_to(mask, x.shape)
        self.keep = (~m).astype(x.dtype)
        return xp.where(m, xp.asarray(value, dtype=x.dtype), x)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw["mask"], arrays[0]])

    def backward(self, F, gy):
        return gy * self.keep


class MaskedFillBackward1(Op):
    """y = value where mask else x   (value a 0-d tensor)"""
    __slots__ = ("keep",)
    temps = ("keep",)

    def forward(self, xp, x, value, mask=None):
        m = xp.broadcast_to(mask, x.shape)
        self.keep = (~m).astype(x.dtype)
        return xp.where(m, value.astype(x.dtype), x)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw["mask"], arrays[0]])

    def backward(self, F, gy):
        need = self.needs_input_grad
        gx = gy * self.keep if need[0] else None
        gv = F.sum(gy * (1 - self.keep)) if need[1] else None
        return gx, gv


class FlipBackward0(Op):
    """y = x reversed along dims"""
    __slots__ = ("axes",)

    def forward(self, xp, x, dims=()):
        self.axes = dims
        return xp.flip(x, dims).copy()   # a new array, as PyTorch's flip gives

    def backward(self, F, gy):
        g = F.flip(gy, self.axes)
        return g.copy() if F.fast else g   # a fresh array, not a view of gy


class RollBackward0(Op):
    """y = x rolled by shifts along dims (the flattened x when dims is None)"""
    __slots__ = ("shifts", "axes")

    def forward(self, xp, x, shifts=0, dims=None):
        self.shifts, self.axes = shifts, dims
        return xp.roll(x, shifts, dims)

    def backward(self, F, gy):
        back = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return F.roll(gy, back, self.axes)


class CumsumBackward0(Op):
    """y = running sum of x along dim"""
    __slots__ = ("axis",)

    def forward(self, xp, x, dim=0):
        self.axis = dim
        return xp.cumsum(x, axis=dim, dtype=x.dtype)   # numpy would widen int32 to int64

    def backward(self, F, gy):   # the running sum from the other end
        g = F.flip(F.cumsum(F.flip(gy, self.axis), self.axis), self.axis)
        return g.copy() if F.fast else g


class TrilBackward0(Op):
    """y = x with the entries above diagonal k of its last two dims set to 0"""
    __slots__ = ("k",)

    def forward(self, xp, x, diagonal=0):
        self.k = diagonal
        return xp.tril(x, diagonal)

    def backward(self, F, gy):
        return F.tril(gy, self.k)


class TriuBackward0(Op):
    """y = x with the entries below diagonal k of its last two dims set to 0"""
    __slots__ = ("k",)

    def forward(self, xp, x, diagonal=0):
        self.k = diagonal
        return xp.triu(x, diagonal)

    def backward(self, F, gy):
        return F.triu(gy, self.k)


class RepeatBackward0(Op):
    """y = x tiled sizes[d] times along each dim (leading dims added for extra sizes)"""
    __slots__ = ("shape", "sizes")

    def forward(self, xp, x, sizes=()):
        self.shape, self.sizes = x.shape, sizes
        return xp.tile(x, sizes)

    def backward(self, F, gy):
        full = (1,) * (len(self.sizes) - len(self.shape)) + tuple(self.shape)
        split = tuple(v for pair in zip(self.sizes, full) for v in pair)
        g = F.sum(F.reshape(gy, split), tuple(range(0, len(split), 2)))
        return F.reshape(g, self.shape)


# -- public functions ----------------------------------------------------------------------
def _index(index, fn, kinds="int32/int64"):
    a = _data(index)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype {kinds} for index")
    return a


def gather(input, dim, index, *, sparse_grad=False):
    a = _index(index, "gather")
    dim = input._dim(dim)
    if a.ndim != max(input.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d, (n, m) in enumerate(zip(a.shape, input.shape)):
        if d != dim and n > m:
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{list(a.shape)} to be no larger than self "
                               f"{list(input.shape)} apart from dimension {dim}")
    _check_bounds(a, input.shape[dim], dim)
    return GatherBackward0.apply(input, dim=dim, index=a)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    a = _data(input)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type() if isinstance(input, Tensor) else a.dtype} instead "
                           f"(while checking arguments for embedding)")
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported by gpugrad")
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0 and padding_idx >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += n
    _check_bounds(a, weight.shape[0], 0, "index out of range in self")
    if max_norm is not None:
        embedding_renorm_(weight, a, max_norm, norm_type)
    return EmbeddingBackward0.apply(weight, indices=a, padding_idx=padding_idx,
                                    scale_grad_by_freq=bool(scale_grad_by_freq))


def index_select(input, dim, index):
    a = _index(index, "index_select", "int32 or int64")
    if a.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = input._dim(dim)
    a = a.reshape(-1)
    _check_bounds(a, input.shape[dim], dim, "index out of range in self")
    return IndexSelectBackward0.apply(input, dim=dim, index=a)


def masked_fill(input, mask, value):
    m = _data(mask)
    if m.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_name(m.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        # the 0-d tensor stays a tensor input (PyTorch's MaskedFillBackward1 overload): no
        # host read of its value, and its gradient or tangent is there when one is asked for
        return MaskedFillBackward1.apply(input, value, mask=m)
    return MaskedFillBackward0.apply(input, mask=m, value=value)


def _dims(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(input._dim(d) for d in dims)


def flip(input, dims):
    return FlipBackward0.apply(input, dims=_dims(input, dims))


def roll(input, shifts, dims=None):
    if dims is None:
        return RollBackward0.apply(input, shifts=shifts, dims=None)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = _dims(input, dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    return RollBackward0.apply(input, shifts=shifts, dims=dims)


def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.kind in "biu":   # integers and bool sum up in int64, as PyTorch
        input = input.to(np.int64)
    return CumsumBackward0.apply(input, dim=input._dim(dim))


def _matrix(input, fn):
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")


def tril(input, diagonal=0):
    _matrix(input, "tril")
    return TrilBackward0.apply(input, diagonal=diagonal)


def triu(input, diagonal=0):
    _matrix(input, "triu")
    return TriuBackward0.apply(input, diagonal=diagonal)


def _order(input, dim, descending):
    """Indices that sort ``input`` along ``dim``, stable (equal values keep their order) and nan
    counted as the largest value, as PyTorch's sort."""
    xp = xp_of(input._data)
    a = input._data
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable")   # nan last
    # descending, stably, without negating (bool, unsigned, the smallest int): sort the reversed
    # array ascending, reverse that order and map it back
    n = a.shape[dim]
    back = xp.flip(xp.argsort(xp.flip(a, dim), axis=dim, kind="stable"), dim)
    return n - 1 - back


def _scalar(input, dim):
    """A 0-d input's sort, topk, argsort: dim must be 0 or -1; its order is index 0."""
    _axes(dim, 0)
    return xp_of(input._data).zeros((), dtype=np.int64)


def sort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return values_indices(input.clone(), Tensor._make(_scalar(input, dim)), "sort")
    dim = input._dim(dim)
    idx = _order(input, dim, descending)
    return values_indices(SortBackward0.apply(input, dim=dim, index=idx), Tensor._make(idx),
                          "sort")


def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return Tensor._make(_scalar(input, dim))
    return Tensor._make(_order(input, input._dim(dim), descending))


def topk(input, k, dim=-1, largest=True, sorted=True):
    if input.ndim == 0:
        if not 0 <= k <= 1:
            raise RuntimeError("selected index k out of range")
        return values_indices(input.clone(), Tensor._make(_scalar(input, dim)), "topk")
    dim = input._dim(dim)
    if not 0 <= k <= input.shape[dim]:
        raise RuntimeError("selected index k out of range")
    idx = _order(input, dim, largest)
    idx = idx[(slice(None),) * dim + (slice(0, k),)]
    return values_indices(TopkBackward0.apply(input, dim=dim, index=idx), Tensor._make(idx),
                          "topk")


def arg_extreme(name, input, dim, keepdim):
    """argmax / argmin: the first index of the extreme (of a nan, as the largest and smallest)."""
    x = input._data
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


def repeat(input, *sizes):
    sizes = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], int) else sizes
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    out = [int(s) * n for s, n in zip(sizes, shape)]
    if any(n < 0 for n in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(n for n in out if n < 0)}: {out}")
    return RepeatBackward0.apply(input, sizes=tuple(int(s) for s in sizes))


def narrow(input, dim, start, length):
    from .index import getitem
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = input._dim(dim)
    size = input.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    start += size if start < 0 else 0
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return getitem(input, (slice(None),) * dim + (slice(start, start + length),))


def outer(input, vec2):
    from .shape import reshape
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return reshape(input, (-1, 1)) * vec2   # PyTorch's graph: MulBackward0 over ViewBackward0


OPS = [GatherBackward0, EmbeddingBackward0, SortBackward0, TopkBackward0, IndexSelectBackward0,
       MaskedFillBackward0, MaskedFillBackward1, FlipBackward0, RollBackward0, CumsumBackward0,
       TrilBackward0, TriuBackward0, RepeatBackward0]
