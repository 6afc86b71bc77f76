"""Matrix and vector products: dot, vdot, inner, outer / ger, mv, mm, batched/broadcast matmul,
bmm, addmm (nn.Linear), addmv, addr, addbmm, baddbmm, tensordot, kron, multi_dot, vecdot,
cross, matrix_power and ``gpugrad.linalg.vander``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import kernels
from ..._arguments import expect_tensors, not_tensor, type_name
from ..._backend import is_array, xp_of
from ..._exports import export, method_as_function, tensor_method
from ...amp._state import lower as _lower
from ...amp._state import state as _amp
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
from .._op import Op, broadcast_error
from .solvers import inv

# the C++ type names PyTorch's mm messages print
_CPP_NAMES = {"float16": "c10::Half", "int64": "long int", "int16": "short int",
              "int8": "signed char", "uint8": "unsigned char"}
# the kernel each product names when it has no bool implementation
_KERNELS = {"DotBackward0": "dot", "MvBackward0": "addmv_impl_cpu",
            "MmBackward0": "addmm_impl_cpu_", "AddmmBackward0": "addmm_impl_cpu_",
            "BmmBackward0": "bmm"}


def _cpp_name(dtype) -> str:
    return _CPP_NAMES.get(dtype.name, scalar_name(dtype))


def _same_dtype(x, w):
    if x.dtype != w.dtype:
        raise TypeError(f"expected m1 and m2 to have the same dtype, but got: {_cpp_name(x.dtype)} "
                        f"!= {_cpp_name(w.dtype)}")


def _no_bool(op, x):
    if x.dtype.kind == "b":
        raise NotImplementedError(f'"{_KERNELS[type(op).__name__]}" not implemented for \'Bool\'')


def _transposed(w) -> bool:
    """w is a transposed view of a C-contiguous matrix (``weight.t()`` in ``linear``)."""
    return not w.flags.c_contiguous and w.flags.f_contiguous


def _weight_grad(F, x, gy, w_t):
    """x.T @ gy. For a transposed weight it is computed as (gy.T @ x).T: the same product, laid
    out so that the parameter's own gradient (after TBackward0) is C-contiguous, which keeps
    the optimizer's elementwise update on contiguous memory."""
    if w_t and F.fast:
        return F.matmul(gy.T, x).T
    return F.matmul(F.swapaxes(x, 0, 1), gy)


class DotBackward0(Op):
    """y = sum(x * w)   (1-D . 1-D)"""
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "tensor")

    def forward(self, xp, x, w):
        if x.dtype != w.dtype:
            raise TypeError(f"dot : expected both vectors to have same dtype, but found "
                            f"{scalar_name(x.dtype).capitalize()} and "
                            f"{scalar_name(w.dtype).capitalize()}")
        _no_bool(self, x)
        if x.shape != w.shape:
            raise ValueError(f"inconsistent tensor size, expected tensor [{x.shape[0]}] and src "
                             f"[{w.shape[0]}] to have the same number of elements, but got "
                             f"{x.shape[0]} and {w.shape[0]} elements respectively")
        return xp.dot(x, w)

    def backward(self, F, gy, x, w):
        need = self.needs_input_grad
        return (gy * w if need[0] else None), (gy * x if need[1] else None)

    def bad_input(self, e, arrays, kw):
        return RuntimeError(str(e))


class MvBackward0(Op):
    """y = A @ v   (2-D @ 1-D)"""
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "vec")

    def forward(self, xp, a, v):
        if a.dtype != v.dtype:
            vn, an = scalar_name(v.dtype).capitalize(), scalar_name(a.dtype).capitalize()
            raise TypeError(f"addmv input tensors must have the same dtype, but got {vn}, {an}, "
                            f"and {vn}")
        _no_bool(self, a)
        if a.shape[1] != v.shape[0]:
            raise ValueError(f"size mismatch, got input ({a.shape[0]}), mat "
                             f"({a.shape[0]}x{a.shape[1]}), vec ({v.shape[0]})")
        return a @ v

    def backward(self, F, gy, a, v):
        ga = F.expand_dims(gy, (1,)) * F.expand_dims(v, (0,)) if self.needs_input_grad[0] else None
        gv = F.matmul(F.swapaxes(a, 0, 1), gy) if self.needs_input_grad[1] else None
        return ga, gv

    def bad_input(self, e, arrays, kw):
        return RuntimeError(str(e))


class MmBackward0(Op):
    """y = x @ w   (2-D @ 2-D)"""
    __slots__ = ("w_t",)
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "mat2")

    def forward(self, xp, x, w):
        _same_dtype(x, w)
        _no_bool(self, x)
        if x.shape[1] != w.shape[0]:
            raise ValueError(f"mat1 and mat2 shapes cannot be multiplied "
                             f"({x.shape[0]}x{x.shape[1]} and {w.shape[0]}x{w.shape[1]})")
        self.w_t = _transposed(w)
        return x @ w if xp is np else kernels.matmul(xp, x, w)

    def backward(self, F, gy, x, w):
        need = self.needs_input_grad
        gx = F.matmul(gy, F.swapaxes(w, 0, 1)) if need[0] else None
        gw = _weight_grad(F, x, gy, self.w_t) if need[1] else None
        return gx, gw

    def bad_input(self, e, arrays, kw):
        return RuntimeError(str(e))


class BmmBackward0(Op):
    """y = x @ w   (batched, batch dimensions broadcast)"""
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "mat2")
    broadcasts = True

    def forward(self, xp, x, w):
        if x.dtype != w.dtype:
            raise TypeError(f"expected scalar type {scalar_name(x.dtype).capitalize()} but found "
                            f"{scalar_name(w.dtype).capitalize()}")
        _no_bool(self, x)
        try:
            batch = math.prod(np.broadcast_shapes(x.shape[:-2], w.shape[:-2]))
        except ValueError as e:   # PyTorch names the batch dimensions alone
            raise broadcast_error(e, [np.broadcast_to(np.float32(0), a.shape[:-2])
                                      for a in (x, w)]) from None
        if x.shape[-1] != w.shape[-2]:
            # PyTorch folds the broadcast batch dimensions into one before its bmm
            raise ValueError(f"Expected size for first two dimensions of batch2 tensor to be: "
                             f"[{batch}, {x.shape[-1]}] but got: [{batch}, {w.shape[-2]}].")
        return xp.matmul(x, w)

    def backward(self, F, gy, x, w):
        need = self.needs_input_grad
        gx = F.matmul(gy, F.swapaxes(w, -1, -2)) if need[0] else None
        gw = F.matmul(F.swapaxes(x, -1, -2), gy) if need[1] else None
        return gx, gw

    def bad_input(self, e, arrays, kw):
        return RuntimeError(str(e))


class AddmmBackward0(Op):
    """y = b + x @ w"""
    __slots__ = ("w_t",)
    saves = (1, 2)
    reads_for = ((2,), (1,))
    saved_names = ("mat1", "mat2")
    broadcasts = True

    def forward(self, xp, b, x, w):
        _same_dtype(x, w)
        _no_bool(self, x)
        if x.shape[1] != w.shape[0]:
            raise ValueError(f"mat1 and mat2 shapes cannot be multiplied "
                             f"({x.shape[0]}x{x.shape[1]} and {w.shape[0]}x{w.shape[1]})")
        self.w_t = _transposed(w)
        y = x @ w if xp is np else kernels.matmul(xp, x, w)
        y += b
        return y

    def backward(self, F, gy, x, w):
        need = self.needs_input_grad
        gx = F.matmul(gy, F.swapaxes(w, 0, 1)) if need[1] else None
        gw = _weight_grad(F, x, gy, self.w_t) if need[2] else None
        return gy, gx, gw

    def bad_input(self, e, arrays, kw):
        b, x, w = arrays
        if "broadcast" in str(e):   # a bias that does not expand to the product's shape
            from ..shape.views import expand_error
            out = (x.shape[0], w.shape[1])
            error = expand_error(b, out)
            if error is not None:
                return error
            return RuntimeError(f"The bias of shape {list(b.shape)} does not expand to the "
                                f"product's shape {list(out)}")
        return RuntimeError(str(e))


@export("matmul", method=True)
def matmul(input, other):
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        expect_tensors("matmul", ("input", "other"), input, other, arrays=True)
    if _amp.active:
        input, other = _lower(input, other)
    from ..shape.views import squeeze, unsqueeze
    a, b = input.ndim, other.ndim
    if a == 0 or b == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {a}D "
                           f"and {b}D")
    if a == 1 and b == 1:
        return DotBackward0.apply(input, other)
    if a == 2 and b == 1:
        return MvBackward0.apply(input, other)
    if a == 2 and b == 2:
        return MmBackward0.apply(input, other)
    if a == 1:
        return squeeze(matmul(unsqueeze(input, 0), other), -2)
    if b == 1:
        if input.shape[-1] != other.shape[0]:   # PyTorch's mv over the folded batch
            rows = math.prod(input.shape[:-1])
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x"
                               f"{input.shape[-1]}), vec ({other.shape[0]})")
        return squeeze(matmul(input, unsqueeze(other, -1)), -1)
    if b == 2:  # batch @ matrix: one GEMM over the folded batch, as PyTorch does
        return _fold_batch(input, lambda x2: MmBackward0.apply(x2, other), other.shape[1])
    return BmmBackward0.apply(input, other)


def _fold_batch(input, matrix_op, cols):
    """``matrix_op`` on ``input`` seen as one (batch * rows, k) matrix, unfolded again
    (ViewBackward0 -> the op -> UnsafeViewBackward0, PyTorch's graph for these calls)."""
    from ..shape.views import UnsafeViewBackward0, reshape
    lead = input.shape[:-1]
    y = matrix_op(reshape(input, -1, input.shape[-1]))
    return UnsafeViewBackward0.apply(y, shape=tuple(lead) + (cols,))


@export("mm", method=True)
def mm(input, mat2):
    expect_tensors("mm", ("input", "mat2"), input, mat2, arrays=True)
    if _amp.active:
        input, mat2 = _lower(input, mat2)
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError("self must be a matrix" if input.ndim != 2 else "mat2 must be a matrix")
    return MmBackward0.apply(input, mat2)


@export("mv", method=True)
def mv(input, vec):
    expect_tensors("mv", ("input", "vec"), input, vec, arrays=True)
    if input.ndim == 0:   # PyTorch's error for a 0-d input, read as a missing dimension
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if _amp.active:
        input, vec = _lower(input, vec)
    return MvBackward0.apply(input, vec)


@export("dot", method=True)
def dot(input, other):
    expect_tensors("dot", ("input", "tensor"), input, other, arrays=True)
    if _amp.active:
        input, other = _lower(input, other)
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    return DotBackward0.apply(input, other)


@export("bmm", method=True)
def bmm(input, mat2):
    expect_tensors("bmm", ("input", "mat2"), input, mat2, arrays=True)
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[0] != input.shape[0] or mat2.shape[1] != input.shape[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    if _amp.active:
        input, mat2 = _lower(input, mat2)
    return BmmBackward0.apply(input, mat2)


@export("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if _amp.active:
        input, mat1, mat2 = _lower(input, mat1, mat2)
    if beta != 1 or alpha != 1:
        return input * beta + matmul(mat1, mat2) * alpha
    return AddmmBackward0.apply(input, mat1, mat2)


def linear(input, weight, bias=None):
    """y = input @ weight.T + bias   (the op behind nn.Linear: AddmmBackward0 for 2-D input)"""
    from ..shape.views import t
    if _amp.active:
        input, weight, bias = _lower(input, weight, bias)
    try:
        two = input.ndim == 2 and weight.ndim
    except AttributeError:   # not tensors: PyTorch's error naming the argument
        expect_tensors("linear", ("input", "weight"), input, weight)
        raise
    if bias is not None and not isinstance(bias, Tensor):
        raise not_tensor("linear", "bias", bias)
    if two and bias is not None:
        return AddmmBackward0.apply(bias, input, t(weight))
    if input.ndim > 2 and bias is not None:  # ViewBackward0 over AddmmBackward0, as PyTorch
        from ..shape.views import reshape
        lead = input.shape[:-1]
        y = AddmmBackward0.apply(bias, reshape(input, -1, input.shape[-1]), t(weight))
        return reshape(y, *lead, weight.shape[0])
    y = matmul(input, t(weight))
    return y + bias if bias is not None else y


@export("outer", "ger", method=True)
def outer(input, vec2):
    from ..shape.views import reshape
    expect_tensors("outer", ("input", "vec2"), input, vec2, arrays=True)
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return reshape(input, (-1, 1)) * vec2   # PyTorch's graph: MulBackward0 over ViewBackward0


ger = outer


@export("inner", method=True)
def inner(input, other):
    """sum over the last dims: out[i..., j...] = sum_k a[i..., k] b[j..., k]"""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, dims=([-1], [-1]))


@export("addbmm", method=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]   (beta = 0 ignores input, nan and
    all)"""
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3
                           else "batch2 must be a 3D tensor")
    return _add_scaled(input, bmm(batch1, batch2).sum(0), beta, alpha)


@export("addr", method=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)"""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    return _add_scaled(input, outer(vec1, vec2), beta, alpha)


def _add_scaled(input, y, beta, alpha):
    y = y if alpha == 1 else y * alpha
    if beta == 0:
        from ..shape.views import broadcast_shapes
        return y.expand(*broadcast_shapes(input.shape, y.shape)).contiguous()
    return (input if beta == 1 else input * beta) + y


# -- tensordot ----------------------------------------------------------------------------------
@export("tensordot")
def tensordot(a, b, dims=2, out=None):
    """sum over the paired dims of a and b: a's other dims, then b's other dims."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da, db = [a._dim(d) for d in da], [b._dim(d) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    left = a.permute(*(fa + da)).reshape(-1, k)
    right = b.permute(*(db + fb)).reshape(k, -1)
    return mm(left, right).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


def _cross(F, a, b, axis):
    """a x b along ``axis`` (of length 3), written with rolls so it serves arrays and tensors"""
    return (F.roll(a, -1, axis) * F.roll(b, -2, axis) - F.roll(a, -2, axis) * F.roll(b, -1, axis))


class LinalgCrossBackward0(Op):
    """y = a x b along dim (length 3)"""
    __slots__ = ("axis",)
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, a, b, dim=-1):
        self.axis = dim
        return _cross(xp, a, b, dim)

    def backward(self, F, gy, a, b):
        need = self.needs_input_grad
        return (_cross(F, b, gy, self.axis) if need[0] else None,
                _cross(F, gy, a, self.axis) if need[1] else None)


def linalg_cross(input, other, *, dim=-1):
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    axis = input._dim(dim)
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[axis]} and {other.shape[axis]}")
    return LinalgCrossBackward0.apply(input, other, dim=axis)


@export("cross")
def cross(input, other, dim=None):
    expect_tensors("cross", ("input", "other"), input, other, arrays=True)
    if dim is None:
        warnings.warn("Using gpugrad.cross without specifying the dim arg is deprecated. Please "
                      "either pass the dim explicitly or simply use gpugrad.linalg.cross.",
                      UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


@export("matrix_power", method=True)
def matrix_power(A, n):
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if n == 0:
        eye = xp_of(A._data).eye(A.shape[-1], dtype=A._data.dtype)
        return A * 0 + eye
    if n < 0:
        A, n = inv(A), -n
        if n == 1:
            return A
    if n == 1:
        return A.clone()
    result = z = None
    while n:   # binary powering, as PyTorch
        z = A if z is None else matmul(z, z)
        if n & 1:
            result = z if result is None else matmul(result, z)
        n >>= 1
    return result


@export("kron", method=True)
def kron(input, other):
    """Kronecker product: a (..., i, ...) x b (..., j, ...) -> (..., i * nj + j, ...)"""
    from ..shape.views import UnsafeViewBackward0
    expect_tensors("kron", ("input", "other"), input, other, arrays=True)
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a = UnsafeViewBackward0.apply(input, shape=tuple(v for s in a_shape for v in (s, 1)))
    b = UnsafeViewBackward0.apply(other, shape=tuple(v for s in b_shape for v in (1, s)))
    return UnsafeViewBackward0.apply(a * b, shape=tuple(p * q for p, q in zip(a_shape, b_shape)))


@export("addmv", method=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    y = mv(mat, vec)
    return (input if beta == 1 else input * beta) + (y if alpha == 1 else y * alpha)


@export("baddbmm", method=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3
                           else "batch2 must be a 3D tensor")
    y = bmm(batch1, batch2)
    return (input if beta == 1 else input * beta) + (y if alpha == 1 else y * alpha)


def multi_dot(tensors):
    """A chain of matrix products (1-D ends as a row and a column vector), left to right."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    y = tensors[0]
    for m in tensors[1:]:
        y = matmul(y, m)
    return y


def vecdot(x, y, *, dim=-1):
    from ..reduction.reduce import sum as sum_
    return sum_(x * y, dim)


@export("vdot", method=True)
def vdot(input, other):
    return dot(input, other)   # real tensors: the conjugate is the tensor itself


def vander(x, *, N=None):  # noqa: N803
    """[1, x, x^2, ..., x^(N-1)] along a new last dimension (N defaults to x.shape[-1])."""
    from ..._creation import ones_like
    from ..reduction.scan import cumprod
    from ..shape.joining import cat
    n = N if N is not None else (x.shape[-1] if x.ndim else 1)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    col = x.unsqueeze(-1)
    powers = cumprod(col.expand(*x.shape, n - 1), -1)
    return cat([ones_like(col), powers], -1)


OPS = [DotBackward0, MvBackward0, MmBackward0, BmmBackward0, AddmmBackward0, LinalgCrossBackward0]


# -- Tensor methods -------------------------------------------------------------------------------
def _matmul_operand(s, o):
    """The other operand of ``@``: a tensor, or an array taken as one (as PyTorch takes a
    numpy array there); anything else is Python's TypeError for the operator."""
    if isinstance(o, Tensor):
        return o
    if is_array(o) and not isinstance(o, np.generic):
        return Tensor._make(o)
    raise TypeError(f"unsupported operand type(s) for @: 'Tensor' and '{type_name(o)}'")


tensor_method("__matmul__")(lambda s, o: matmul(s, _matmul_operand(s, o)))
tensor_method("__rmatmul__")(lambda s, o: matmul(_matmul_operand(s, o), s))
tensor_method("cross")(lambda s, other, dim=None: cross(s, other, dim))
tensor_method("addmm")(lambda s, mat1, mat2, *, beta=1, alpha=1: addmm(
    s, mat1, mat2, beta=beta, alpha=alpha))
for _name, _fn in (("addmm_", addmm), ("addbmm_", addbmm), ("addr_", addr),
                   ("baddbmm_", baddbmm), ("addmv_", addmv)):
    tensor_method(_name)(lambda s, a, b, *, beta=1, alpha=1, _fn=_fn: inplace(
        s, lambda t, u, v: _fn(t, u, v, beta=beta, alpha=alpha), a, b))
method_as_function("addmv_")
