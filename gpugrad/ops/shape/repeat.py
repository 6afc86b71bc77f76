"""Repeating a tensor: repeat, tile, repeat_interleave."""
from __future__ import annotations

import numpy as np

from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor import Tensor
from .._op import Op


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


@export("repeat_interleave", method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    from ..indexing.getitem import getitem
    if repeats is None:   # repeat_interleave(repeats): the positions, each repeated
        repeats, input = input, None
    r = _raw(repeats)
    if input is None:
        xp = xp_of(r)
        return Tensor._make(xp.repeat(xp.arange(r.shape[0]), r))
    xp = xp_of(input._data)
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = input._dim(dim)
    n = input.shape[d] if input.ndim else 1
    r = xp.asarray(r, dtype=np.int64)
    if bool((r < 0).any()):
        raise RuntimeError("Repeats must be non-negative")
    if r.ndim == 1 and r.shape[0] != 1 and r.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.shape[0]} and input.size(0) = {n}")
    where = xp.repeat(xp.arange(n), r.reshape(-1) if r.ndim else int(r))
    if input.ndim == 0:
        input = input.reshape(1)
    return getitem(input, (slice(None),) * d + (Tensor._make(where),))


@export("tile", method=True)
def tile(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


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


@tensor_method("repeat")
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


OPS = [RepeatBackward0]
