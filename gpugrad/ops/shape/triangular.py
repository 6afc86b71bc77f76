"""Triangles of matrices: tril, triu, and the index builders tril_indices / triu_indices."""
from __future__ import annotations

import numpy as np

from ... import _backend
from ..._exports import export, tensor_method
from ...tensor import scalar_name
from ...tensor_inplace import inplace
from .._op import Op


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


def _matrix(input, fn):
    if input.ndim < 2:
        raise RuntimeError(f"{fn}: input tensor must have at least 2 dimensions")


@export("tril", method=True)
def tril(input, diagonal=0):
    _matrix(input, "tril")
    return TrilBackward0.apply(input, diagonal=diagonal)


@export("triu", method=True)
def triu(input, diagonal=0):
    _matrix(input, "triu")
    return TriuBackward0.apply(input, diagonal=diagonal)


def _kind(dtype):
    return scalar_name(dtype).capitalize()


# -- index builders -------------------------------------------------------------------------------
def _tri_indices(lower, row, col, offset, dtype, device, requires_grad):
    from ..._creation import _finish, as_dtype
    d = as_dtype(dtype) or np.dtype(np.int64)
    name = "tril_indices" if lower else "triu_indices"
    if d.kind not in "iu":
        raise NotImplementedError(f'"{name}" not implemented for \'{_kind(d)}\'')
    for what, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{what} must be non-negative, got{n}")

    def make(xp):
        f = xp.tril_indices if lower else xp.triu_indices
        r, c = f(row, offset, col)
        return xp.stack([r, c]).astype(d)
    return _finish(_backend.on_device(device, make), requires_grad)


@export("tril_indices")
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The (row, column) indices of the lower triangle of a row x col matrix, as a 2 x N
    tensor in row-major order (offset: which diagonal bounds it)."""
    return _tri_indices(True, row, col, offset, dtype, device, requires_grad)


@export("triu_indices")
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The (row, column) indices of the upper triangle of a row x col matrix (2 x N)."""
    return _tri_indices(False, row, col, offset, dtype, device, requires_grad)


OPS = [TrilBackward0, TriuBackward0]


tensor_method("tril_")(lambda s, diagonal=0: inplace(s, lambda t: tril(t, diagonal)))
tensor_method("triu_")(lambda s, diagonal=0: inplace(s, lambda t: triu(t, diagonal)))
