"""Reading positions named by an index: gather, index_select, take, nonzero, argwhere,
unravel_index.
"""
from __future__ import annotations

import math

import numpy as np

from ..._arguments import tensor_data
from ..._backend import xp_of
from ..._exports import export
from ...tensor import Tensor, scalar_name
from .._op import Op


def _data(t):
    return t._data if isinstance(t, Tensor) else t


def _along(xp, index, dim):
    """The fancy index that reads ``index`` along ``dim`` and every other position as is."""
    n = index.ndim
    return tuple(index if d == dim else
                 xp.arange(s).reshape(tuple(s if k == d else 1 for k in range(n)))
                 for d, s in enumerate(index.shape))


def _check_bounds(index, size, dim, message=None, kind=IndexError):
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise kind(message or f"index {int(index[bad].ravel()[0])} is out of bounds for "
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


class IndexSelectBackward0(_Scatter):
    """y = x.take(index, dim)"""
    __slots__ = ()

    def forward(self, xp, x, dim=0, index=None):
        self.shape, self.where = x.shape, (slice(None),) * dim + (index,)
        return xp.take(x, index, axis=dim)


# -- public functions ----------------------------------------------------------------------
def _index(index, fn, kinds="int32/int64"):
    a = tensor_data(index, fn)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"{fn}(): Expected dtype {kinds} for index")
    return a


@export("gather", method=True)
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
    _check_bounds(a, input.shape[dim], dim, kind=RuntimeError)
    return GatherBackward0.apply(input, dim=dim, index=a)


@export("index_select", method=True)
def index_select(input, dim, index):
    a = _index(index, "index_select", "int32 or int64")
    if a.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    dim = input._dim(dim)
    a = a.reshape(-1)
    _check_bounds(a, input.shape[dim], dim, "index out of range in self")
    return IndexSelectBackward0.apply(input, dim=dim, index=a)


# -- not differentiable ------------------------------------------------------------------------
@export("nonzero", "argwhere", method=True)
def nonzero(input, *, as_tuple=False):
    a = input._data
    xp = xp_of(a)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64, copy=False))
                     for i in xp.nonzero(a if a.ndim else a.reshape(1)))
    return Tensor._make(xp.argwhere(a).astype(np.int64, copy=False))


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


@export("take", method=True)
def take(input, index):
    """input read as a flat vector at ``index`` (negative positions count from the end)."""
    from ..shape.views import reshape
    from .getitem import getitem
    a = tensor_data(index, "take")
    if a.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{scalar_name(a.dtype).capitalize()}")
    n = input.numel()
    bad = (a < -n) | (a >= n)
    if a.size and bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(a[bad].ravel()[0])} on a "
                         f"tensor of {n} elements.")
    return getitem(reshape(input, -1), Tensor._make(a % max(n, 1)))


argwhere = nonzero


@export("unravel_index")
def unravel_index(indices, shape):
    """Flat indices into a tensor of ``shape`` as a tuple of coordinate tensors. As PyTorch,
    indices are taken modulo the number of elements (so -1 is the last one)."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if isinstance(indices, Tensor):
        a = indices._data
    else:
        a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got gpugrad.{a.dtype.name}")
    xp = xp_of(a)
    n = math.prod(shape)
    flat = a.astype(np.int64) % n if n else a.astype(np.int64)
    return tuple(Tensor._make(xp.asarray(c).astype(np.int64))
                 for c in xp.unravel_index(flat, shape))


OPS = [GatherBackward0, IndexSelectBackward0]
