"""Less common elementwise and shape functions: atan2, lerp, addcmul, addcdiv, masked_select,
and composites of other ops (ravel, movedim, meshgrid, broadcast_tensors); plus the
non-differentiable nonzero, isclose and count_nonzero."""
from __future__ import annotations

import warnings

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor
from ._op import Op, broadcast_error, unbroadcast
from .select import _along, _data, _Scatter


class Atan2Backward0(Op):
    """y = atan2(a, b), the angle of the point (b, a)"""
    elementwise = True
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, a, b):
        return xp.arctan2(a, b)

    def backward(self, F, gy, a, b):
        g = gy / (a * a + b * b)
        need = self.needs_input_grad
        return (g * b if need[0] else None), (-g * a if need[1] else None)


class LerpBackward0(Op):
    """y = start + weight (end - start), weight a number"""
    elementwise = True
    __slots__ = ("weight",)
    broadcasts = True

    def forward(self, xp, start, end, weight=0.5):
        self.weight = weight
        return start + weight * (end - start)

    def backward(self, F, gy):
        w = self.weight
        return gy * (1 - w), gy * w


class LerpBackward1(Op):
    """y = start + weight (end - start), weight a tensor"""
    elementwise = True
    saves = (0, 1, 2)
    saved_names = ("self", "end", "weight")
    broadcasts = True

    def forward(self, xp, start, end, weight):
        return start + weight * (end - start)

    def backward(self, F, gy, start, end, weight):
        need = self.needs_input_grad
        return ((gy * (1 - weight)) if need[0] else None, (gy * weight) if need[1] else None,
                (gy * (end - start)) if need[2] else None)


class AddcmulBackward0(Op):
    """y = x + value t1 t2"""
    elementwise = True
    __slots__ = ("value",)
    saves = (1, 2)
    saved_names = ("tensor1", "tensor2")
    broadcasts = True

    def forward(self, xp, x, t1, t2, value=1):
        self.value = value
        return x + value * t1 * t2

    def backward(self, F, gy, t1, t2):
        need, v = self.needs_input_grad, self.value
        return (gy if need[0] else None, (gy * v * t2) if need[1] else None,
                (gy * v * t1) if need[2] else None)


class AddcdivBackward0(Op):
    """y = x + value t1 / t2"""
    elementwise = True
    __slots__ = ("value",)
    saves = (1, 2)
    saved_names = ("tensor1", "tensor2")
    broadcasts = True

    def forward(self, xp, x, t1, t2, value=1):
        self.value = value
        return x + value * t1 / t2

    def backward(self, F, gy, t1, t2):
        need, v = self.needs_input_grad, self.value
        return (gy if need[0] else None, (gy * v / t2) if need[1] else None,
                (-gy * v * t1 / (t2 * t2)) if need[2] else None)


class MaskedSelectBackward0(Op):
    """y = the entries of x (broadcast against mask) where mask is true, in row-major order"""
    __slots__ = ("shape", "full", "where")
    temps = ("where",)

    def forward(self, xp, x, mask=None):
        full = np.broadcast_shapes(x.shape, mask.shape)
        self.shape, self.full = x.shape, full
        self.where = xp.nonzero(xp.broadcast_to(mask, full))
        return xp.broadcast_to(x, full)[self.where]

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw["mask"], arrays[0]])

    def backward(self, F, gy):
        return unbroadcast(F, F.index_add(self.full, self.where, gy), self.shape)


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


class MedianBackward0(Op):
    """y = the lower median of all entries of x"""
    __slots__ = ("shape", "where")
    temps = ("where",)

    def forward(self, xp, x):
        flat = x.reshape(-1)
        k = xp.argsort(flat, kind="stable")[(flat.size - 1) // 2]
        self.shape, self.where = x.shape, xp.unravel_index(k, x.shape)
        return flat[k]

    def backward(self, F, gy):
        return F.index_add(self.shape, self.where, gy)


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


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return TraceBackward0.apply(input)


def diag(input, diagonal=0):
    if input.ndim == 1:
        return DiagEmbedBackward0.apply(input, diagonal=diagonal)
    if input.ndim == 2:
        return DiagonalBackward0_copy.apply(input, diagonal=diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def median(input, dim=None, keepdim=False):
    """The lower median (of all entries, or along ``dim`` with its indices)."""
    if dim is None:
        return MedianBackward0.apply(input)
    from .reduce import values_indices
    from .select import _order
    d = input._dim(dim)
    n = input.shape[d] if input.ndim else 1
    pos = (slice(None),) * d + (slice((n - 1) // 2, (n - 1) // 2 + 1),)
    idx = _order(input, d, False)[pos]
    values = MedianBackward1.apply(input, dim=d, index=idx, keepdim=keepdim)
    return values_indices(values, Tensor._make(idx if keepdim else idx.squeeze(d)), "median")


def std_mean(input, dim=None, *, correction=1, keepdim=False):
    from .reduce import mean, std
    return std(input, dim, correction=correction, keepdim=keepdim), mean(
        input, dim, keepdim=keepdim) if dim is not None else mean(input)


def var_mean(input, dim=None, *, correction=1, keepdim=False):
    from .reduce import mean, var
    return var(input, dim, correction=correction, keepdim=keepdim), mean(
        input, dim, keepdim=keepdim) if dim is not None else mean(input)


def atan2(input, other):
    return Atan2Backward0.apply(input, other)


arctan2 = atan2


def lerp(input, end, weight):
    if isinstance(weight, Tensor):
        return LerpBackward1.apply(input, end, weight)
    return LerpBackward0.apply(input, end, weight=float(weight))


def addcmul(input, tensor1, tensor2, *, value=1):
    return AddcmulBackward0.apply(input, tensor1, tensor2, value=value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    if _data(tensor1).dtype.kind in "iub" and _data(tensor2).dtype.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return AddcdivBackward0.apply(input, tensor1, tensor2, value=value)


def masked_select(input, mask):
    m = _data(mask)
    if m.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return MaskedSelectBackward0.apply(input, mask=m)


def ravel(input):
    from .shape import reshape
    return reshape(input, -1)


def movedim(input, source, destination):
    from .shape import permute
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src, dst = [input._dim(d) for d in src], [input._dim(d) for d in dst]
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output i holds tensor i expanded along the others' dimensions."""
    from .shape import expand, reshape
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("gpugrad.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        axis = {0: 1, 1: 0}.get(i, i) if swap else i
        shape = [1] * len(tensors)
        shape[axis] = -1
        out.append(expand(reshape(t, *shape), *sizes))
    return tuple(out)


def broadcast_tensors(*tensors):
    from .shape import expand
    full = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == full else expand(t, *full) for t in tensors)


# -- not differentiable ------------------------------------------------------------------------
def nonzero(input, *, as_tuple=False):
    a = input._data
    xp = xp_of(a)
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64, copy=False))
                     for i in xp.nonzero(a if a.ndim else a.reshape(1)))
    return Tensor._make(xp.argwhere(a).astype(np.int64, copy=False))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input._data
    return Tensor._make(xp_of(a).isclose(a, _data(other), rtol, atol, equal_nan))


def count_nonzero(input, dim=None):
    a = input._data
    xp = xp_of(a)
    return Tensor._make(xp.asarray(xp.count_nonzero(a, axis=dim), dtype=np.int64))


OPS = [Atan2Backward0, LerpBackward0, LerpBackward1, AddcmulBackward0, AddcdivBackward0,
       MaskedSelectBackward0, TraceBackward0, DiagEmbedBackward0, DiagonalBackward0_copy,
       MedianBackward0, MedianBackward1]
