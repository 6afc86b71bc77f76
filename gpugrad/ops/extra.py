"""Less common elementwise and shape functions: atan2, lerp, addcmul, addcdiv, masked_select,
and composites of other ops (ravel, movedim, meshgrid, broadcast_tensors); plus the
non-differentiable nonzero, isclose and count_nonzero."""
from __future__ import annotations

import warnings

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor
from ._op import Op, broadcast_error, unbroadcast
from .select import _data


class Atan2Backward0(Op):
    """y = atan2(a, b), the angle of the point (b, a)"""
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
       MaskedSelectBackward0]
