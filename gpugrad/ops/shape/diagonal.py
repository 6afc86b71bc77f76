"""Diagonals of matrices: diag, diag_embed, diagflat, trace, fill_diagonal_ and
``gpugrad.linalg.diagonal`` (the diagonal view itself: views.py).
"""
from __future__ import annotations

from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor import Tensor
from .._op import Op


class TraceBackward0(Op):
    """y = sum of the main diagonal of a matrix"""
    __slots__ = ("eye",)
    temps = ("eye",)

    def forward(self, xp, x):
        self.eye = xp.eye(*x.shape, dtype=x.dtype)
        return xp.trace(x)

    def backward(self, F, gy):
        return gy * self.eye


def _diagonal_index(xp, rows, cols, offset):
    """(row indices, column indices) of diagonal ``offset`` of a rows x cols matrix."""
    n = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    i = xp.arange(n)
    return (i, i + offset) if offset >= 0 else (i - offset, i)


class DiagEmbedBackward0(Op):
    """y = the square matrix with vector x on diagonal ``offset``, zeros elsewhere"""
    __slots__ = ("where",)
    temps = ("where",)

    def forward(self, xp, v, diagonal=0):
        n = v.shape[0] + abs(diagonal)
        self.where = _diagonal_index(xp, n, n, diagonal)
        y = xp.zeros((n, n), dtype=v.dtype)
        y[self.where] = v
        return y

    def backward(self, F, gy):
        return gy[self.where]


class DiagonalBackward0_copy(Op):  # noqa: N801  (PyTorch's node name)
    """y = diagonal ``offset`` of matrix x, as a new vector"""
    __slots__ = ("shape", "where")
    temps = ("where",)

    def forward(self, xp, x, diagonal=0):
        self.shape, self.where = x.shape, _diagonal_index(xp, *x.shape, diagonal)
        return x[self.where]

    def backward(self, F, gy):
        return F.index_add(self.shape, self.where, gy)


@export("trace", method=True)
def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return TraceBackward0.apply(input)


@export("diag", method=True)
def diag(input, diagonal=0):
    if input.ndim == 1:
        return DiagEmbedBackward0.apply(input, diagonal=diagonal)
    if input.ndim == 2:
        return DiagonalBackward0_copy.apply(input, diagonal=diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


# -- in-place fills ---------------------------------------------------------------------------
@tensor_method("fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    from ...tensor_inplace import inplace
    shape = self.shape
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(shape)
    xp = xp_of(self._data)
    if self.ndim == 2 and wrap and shape[0] > shape[1] + 1:
        rows = xp.arange(0, shape[0])
        rows = rows[rows % (shape[1] + 1) != shape[1]]
        where = (rows, (rows - rows // (shape[1] + 1) * (shape[1] + 1)))
    else:
        i = xp.arange(n)
        where = (i,) * self.ndim
    mask = xp.zeros(shape, dtype=bool)
    mask[where] = True

    def compute(t):
        from ..pointwise.minmax import where as _where
        return _where(Tensor._make(mask), fill_value, t)
    return inplace(self, compute, raw=lambda a: a.__setitem__(where, fill_value))


# -- flattened diagonals --------------------------------------------------------------------------
@export("diagflat", method=True)
def diagflat(input, offset=0):
    """The flattened input on the offset-th diagonal of a square matrix."""
    return diag(input.reshape(-1), offset)


@export("diag_embed", method=True)
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """y with y[..., i, i + offset] = x[..., i]: the last dim of x on a diagonal of the
    (dim1, dim2) matrices, zeros elsewhere."""
    from ..._creation import zeros
    from .views import movedim
    n = input.shape[-1] if input.ndim else 1
    m = n + abs(offset)
    ndim = input.ndim + 1
    d1, d2 = (d + ndim if d < 0 else d for d in (dim1, dim2))
    if not (0 <= d1 < ndim and 0 <= d2 < ndim):
        bad = dim1 if not 0 <= d1 < ndim else dim2
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {bad})")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    y = zeros(*input.shape[:-1], m, m, dtype=input.dtype, device=input.device)
    xp = xp_of(input._data)
    i = xp.arange(n)
    rows, cols = i + max(-offset, 0), i + max(offset, 0)
    y[..., rows, cols] = input
    return movedim(y, (-2, -1), (d1, d2))


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .views import diagonal
    return diagonal(A, offset, dim1, dim2)


OPS = [TraceBackward0, DiagEmbedBackward0, DiagonalBackward0_copy]
