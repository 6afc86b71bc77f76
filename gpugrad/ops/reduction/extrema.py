"""Less common elementwise and shape functions: atan2, lerp, addcmul, addcdiv, masked_select,
and composites of other ops (ravel, movedim, meshgrid, broadcast_tensors); plus the
non-differentiable nonzero, isclose and count_nonzero."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from ._op import Op, broadcast_error, unbroadcast
from .reduce import _axes, _expand, _inv, _mean, _moment, shared, values_indices
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
    if dtype.kind in "fc":
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
    """The lower median (of all entries, or along ``dim`` with its indices); nan where a nan
    is."""
    if dim is None:
        return median_along(input, None, keepdim, False)
    return values_indices(*median_along(input, dim, keepdim, False), "median")


def _moments(name, cls, input, dim, unbiased, keepdim, correction):
    from .reduce import _var_args
    axes, correction = _var_args(name, input, dim, unbiased, correction)
    return cls.apply(input, axes=axes, keepdims=keepdim, correction=correction)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("std_mean", StdMeanBackward0, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments("var_mean", VarMeanBackward0, input, dim, unbiased, keepdim, correction)


def torch_norm(input, p="fro", dim=None, keepdim=False, dtype=None, out=None):
    """torch.norm: a vector norm over dim (every entry when None), except a string p other
    than 'fro', or 'fro' over more than two dims, which is linalg.matrix_norm's."""
    from .reduce import LinalgVectorNormBackward0
    dims = None if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if not isinstance(p, (str, numbers.Real)) and p is not None:
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(p).__name__}")
    if isinstance(p, str) and (p != "fro" or dims is not None and len(dims) > 2):
        from .matrix import matrix_norm
        y = matrix_norm(input, p, tuple(range(input.ndim)) if dims is None else dims, keepdim,
                        dtype=dtype)
    else:
        input = input if dtype is None else input.to(dtype)
        if input.dtype.kind not in "fc":
            raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                               f"as input. Got {scalar_name(input.dtype).capitalize()}")
        ord = 2.0 if p in ("fro", None) else float(p)
        y = LinalgVectorNormBackward0.apply(input, ord=ord, axes=_axes(dims, input.ndim),
                                            keepdims=keepdim)
    return y if out is None else out.copy_(y)


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
    from ._op import broadcast_error
    from .shape import expand
    try:
        full = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError as e:
        raise broadcast_error(e, [t._data for t in tensors]) from None
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
       MedianBackward0, MedianBackward1, NanmedianBackward0, NanmedianBackward1, VarMeanBackward0,
       StdMeanBackward0]
