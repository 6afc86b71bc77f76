"""Linear algebra beyond products (``gpugrad.linalg``): inv, det, slogdet, solve, cholesky,
cross, svdvals and the norms; logdet, kron, matrix_power, multi_dot, vecdot, addmv, baddbmm and
vdot as compositions.

Inputs are batches of matrices (the last two dimensions). Backward formulas that need an
inverse or a solve call ``_inv`` / ``_solve``: the array module's routine on plain backward, the
recorded op under ``create_graph=True``, so their gradients are differentiable again.
"""
from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from ._op import Op


class LinAlgError(RuntimeError):
    """A matrix the routine cannot handle (singular, not positive-definite), as PyTorch's
    ``torch.linalg.LinAlgError``."""


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _mT(F, a):  # noqa: N802
    return F.swapaxes(a, -1, -2)


def _inv(F, a):
    return F.linalg.inv(a) if F.fast else inv(a)


def _solve(F, a, b):
    return _solve_arrays(xp_of(a), a, b) if F.fast else solve(a, b)


def _solve_arrays(xp, a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                           xp.broadcast_to(b, batch + b.shape[-2:]))


def _batches(a):
    return a.reshape((-1,) + a.shape[-2:])


def _where(a, b):
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _zero_pivot(xp, m):
    """1-based position of the first zero pivot of the LU factorisation of ``m`` with partial
    pivoting (LAPACK's ``info``), or 0. Runs only to name the culprit in an error."""
    u = m.astype(np.float64 if m.dtype.kind != "c" else np.complex128)
    for k in range(u.shape[-1]):
        p = k + int(xp.argmax(xp.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        if p != k:
            u[[k, p]] = u[[p, k]]
        u[k + 1:] -= (u[k + 1:, k] / u[k, k])[:, None] * u[k]
    return 0


def _raise_singular(xp, a, fn):
    for b, m in enumerate(_batches(a)):
        k = _zero_pivot(xp, m)
        if k:
            raise LinAlgError(f"{fn}: {_where(a, b)}The diagonal element {k} is zero, the "
                              f"inversion could not be completed because the input matrix is "
                              f"singular.")


def _solved(xp, a, compute, on_singular, failed=None):
    """``compute()``, where ``on_singular()`` raises the error naming the culprit when the
    routine fails: numpy raises; CuPy does not, so its result is checked (``failed(y)``:
    non-finite values by default)."""
    try:
        y = compute()
    except np.linalg.LinAlgError as e:
        on_singular()
        raise LinAlgError(str(e)) from None   # a failure the check above did not pin down
    if xp is not np and bool(xp.isfinite(a).all()) and (
            failed(y) if failed is not None else not bool(xp.isfinite(y).all())):
        on_singular()
    return y


def _inverse(xp, a):
    return _solved(xp, a, lambda: xp.linalg.inv(a), lambda: _raise_singular(xp, a, "linalg.inv"))


class LinalgInvExBackward0(Op):
    """Y = A^-1"""
    saves_output = True
    saved_names = ("inverse",)

    def forward(self, xp, a):
        return _inverse(xp, a)

    def backward(self, F, gy, y):
        yt = _mT(F, y)
        return -F.matmul(F.matmul(yt, gy), yt)


def _cofactors(xp, a):
    """d det(A) / dA for any A, singular ones included: det(U) det(V) U diag(prod_{j!=i} s_j) V^T
    from A = U diag(s) V^T."""
    u, s, vh = xp.linalg.svd(a)
    n = s.shape[-1]
    others = xp.where(xp.eye(n, dtype=bool), 1, s[..., None, :]).prod(axis=-1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    return xp.matmul(u * others[..., None, :], vh) * xp.asarray(sign)[..., None, None]


class LinalgDetBackward0(Op):
    """y = det(A)"""
    saves = (0,)
    saves_output = True
    saved_names = ("A", "result")

    def forward(self, xp, a):
        return xp.asarray(xp.linalg.det(a))

    def backward(self, F, gy, a, y):
        g = F.expand_dims(gy, (-2, -1))
        if bool((_raw(y) != 0).all()):
            return g * F.expand_dims(y, (-2, -1)) * _mT(F, _inv(F, a))
        if not F.fast:
            raise NotImplementedError("double backward through det of a singular matrix is not "
                                      "supported by gpugrad")
        return g * _cofactors(xp_of(a), a)


class LinalgSlogdetBackward0(Op):
    """(sign, log|det(A)|); only log|det| is differentiable"""
    saves = (0,)
    saved_names = ("A",)

    def forward(self, xp, a):
        sign, logabs = xp.linalg.slogdet(a)
        return xp.asarray(sign), xp.asarray(logabs)

    def backward(self, F, grads, a):
        g = grads[1]
        return None if g is None else F.expand_dims(g, (-2, -1)) * _mT(F, _inv(F, a))


LinalgSlogdetBackward0.n_outputs = 2


class LinalgSolveExBackward0(Op):
    """X = A^-1 B   (B a batch of matrices; batch dimensions broadcast)"""
    saves = (0,)
    saves_output = True
    saved_names = ("A", "result")
    broadcasts = True

    def forward(self, xp, a, b):
        def singular():
            for k, m in enumerate(_batches(a)):
                if _zero_pivot(xp, m):
                    raise LinAlgError(f"torch.linalg.solve: {_where(a, k)}The solver failed "
                                      f"because the input matrix is singular.")
        return _solved(xp, a, lambda: _solve_arrays(xp, a, b), singular)

    def backward(self, F, gy, a, y):
        gb = _solve(F, _mT(F, a), gy)
        ga = -F.matmul(gb, _mT(F, y)) if self.needs_input_grad[0] else None
        return ga, gb


def _not_positive_definite(xp, m):
    """1-based order of the first leading minor of ``m`` that is not positive-definite, or 0
    (Cholesky-Banachiewicz on the lower triangle, as LAPACK reads it)."""
    n = m.shape[-1]
    low = xp.zeros(m.shape, dtype=np.float64 if m.dtype.kind != "c" else np.complex128)
    for j in range(n):
        d = m[j, j] - (low[j, :j] * low[j, :j]).sum()
        if not d > 0:
            return j + 1
        low[j, j] = d ** 0.5
        low[j + 1:, j] = (m[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
    return 0


def _cholesky(xp, a):
    def not_pd():
        for b, m in enumerate(_batches(a)):
            k = _not_positive_definite(xp, m)
            if k:
                raise LinAlgError(f"linalg.cholesky: {_where(a, b)}The factorization could not "
                                  f"be completed because the input is not positive-definite "
                                  f"(the leading minor of order {k} is not positive-definite).")
    # a failed factorisation leaves the failing (non-positive) pivot on the diagonal
    return _solved(xp, a, lambda: xp.linalg.cholesky(a), not_pd, lambda low: not bool(
        (xp.diagonal(low, axis1=-2, axis2=-1) > 0).all()))


class LinalgCholeskyExBackward0(Op):
    """L = cholesky(A), A = L L^T (U = L^T for upper=True)"""
    __slots__ = ("upper",)
    saves_output = True
    saved_names = ("L",)

    def forward(self, xp, a, upper=False):
        self.upper = upper
        low = _cholesky(xp, a)
        return xp.ascontiguousarray(xp.swapaxes(low, -1, -2)) if upper else low

    def backward(self, F, gy, y):
        low, gl = (_mT(F, y), _mT(F, gy)) if self.upper else (y, gy)
        inv_low = _inv(F, low)
        n, yr = y.shape[-1], _raw(y)
        half_diag = 1 - 0.5 * xp_of(yr).eye(n, dtype=yr.dtype)
        phi = F.tril(F.matmul(_mT(F, low), gl), 0) * half_diag
        ga = F.matmul(F.matmul(_mT(F, inv_low), phi), inv_low)
        return (ga + _mT(F, ga)) * 0.5   # symmetric, as A is


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


class LinalgSvdBackward0(Op):
    """S = the singular values of A, descending (svdvals); gA = U diag(gS) Vh"""
    __slots__ = ("u", "vh")
    saves = (0,)
    saved_names = ("A",)
    temps = ("u", "vh")

    def forward(self, xp, a):
        self.u, s, self.vh = xp.linalg.svd(a, full_matrices=False)
        return s

    def backward(self, F, gs, a):
        if F.fast:
            return F.matmul(self.u * gs[..., None, :], self.vh)
        # under create_graph, U and Vh as differentiable functions of A (decomp.py's full SVD)
        from .decomp import svd
        u, _, vh = svd(a, full_matrices=False)
        return F.matmul(u * F.expand_dims(gs, -2), vh)


# -- checks -------------------------------------------------------------------------------------
def _matrices(fn, a, square=True):
    if a.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype).capitalize()}")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


# -- public functions ---------------------------------------------------------------------------
def inv(A):
    _matrices("linalg.inv", A)
    return LinalgInvExBackward0.apply(A)


inverse = inv


def det(A):
    _matrices("linalg.det", A)
    return LinalgDetBackward0.apply(A)


SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
SlogdetResult.__module__ = "gpugrad.return_types"


def slogdet(A):
    _matrices("linalg.slogdet", A)
    sign, logabsdet = LinalgSlogdetBackward0.apply(A)
    sign._rg, sign.grad_fn = False, None   # the sign is not differentiable
    return SlogdetResult(sign, logabsdet)


def logdet(A):
    """log det(A): nan for a negative determinant, -inf for a singular A (as PyTorch)."""
    from .pointwise import log
    sign, logabsdet = slogdet(A)
    return logabsdet + log(sign)


def solve(A, B, *, left=True):
    from .shape import squeeze, unsqueeze
    _matrices("linalg.solve", A)
    if B.dtype != A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {scalar_name(A.dtype).capitalize()} and B of type "
                           f"{scalar_name(B.dtype).capitalize()} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if not left:   # X A = B  <=>  A^T X^T = B^T
        if vector:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"XA = B ({A.shape[-2]}x{A.shape[-1]} and {B.shape[-1]}x1)")
        return solve(A.mT, B.mT).mT
    b = unsqueeze(B, -1) if vector else B
    n = A.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    x = LinalgSolveExBackward0.apply(A, b)
    return squeeze(x, -1) if vector else x


def cholesky(A, *, upper=False):
    _matrices("linalg.cholesky", A)
    return LinalgCholeskyExBackward0.apply(A, upper=upper)


def linalg_cross(input, other, *, dim=-1):
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    axis = input._dim(dim)
    if input.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[axis]} and {other.shape[axis]}")
    return LinalgCrossBackward0.apply(input, other, dim=axis)


def cross(input, other, dim=None):
    if dim is None:
        warnings.warn("Using gpugrad.cross without specifying the dim arg is deprecated. Please "
                      "either pass the dim explicitly or simply use gpugrad.linalg.cross.",
                      UserWarning, stacklevel=2)
        dim = next((d for d, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return linalg_cross(input, other, dim=dim)


def svdvals(A):
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return LinalgSvdBackward0.apply(A)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    from .reduce import LinalgVectorNormBackward0, _axes
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        "str")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {scalar_name(x.dtype).capitalize()}")
    axes = _axes(dim, x.ndim)
    if ord == -math.inf:   # the smallest magnitude, as a composition
        from .reduce import amin
        axes = tuple(range(x.ndim)) if axes is None else axes
        rest = [d for d in range(x.ndim) if d not in axes]
        flat = x.abs().permute(*rest, *axes).reshape(*(x.shape[d] for d in rest), -1)
        y = amin(flat, -1) if flat.ndim else flat
        return y.reshape(*(1 if d in axes else n for d, n in enumerate(x.shape))) if keepdim else y
    return LinalgVectorNormBackward0.apply(x, ord=float(ord), axes=axes, keepdims=keepdim)


def _two_dims(fn, A, dim):
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = (A._dim(d) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dims[0]}, {dims[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    from .reduce import amax, amin
    from .reduce import sum as sum_
    from .shape import unsqueeze
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = _two_dims("linalg.matrix_norm", A, dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        y = sum_(s, -1) if ord == "nuc" else (amax if ord == 2 else amin)(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                y = unsqueeze(y, d)
        return y
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
    pick = amax if ord > 0 else amin
    y = pick(sum_(A.abs(), inner, keepdim=True), outer, keepdim=True)
    return y if keepdim else y.squeeze((d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = (0,) if A.ndim == 1 else (-2, -1)
    if len(dim) == 1:
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim, keepdim, dtype=dtype)


def matrix_power(A, n):
    from .linalg import matmul
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


def kron(input, other):
    """Kronecker product: a (..., i, ...) x b (..., j, ...) -> (..., i * nj + j, ...)"""
    from .shape import UnsafeViewBackward0
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    a = UnsafeViewBackward0.apply(input, shape=tuple(v for s in a_shape for v in (s, 1)))
    b = UnsafeViewBackward0.apply(other, shape=tuple(v for s in b_shape for v in (1, s)))
    return UnsafeViewBackward0.apply(a * b, shape=tuple(p * q for p, q in zip(a_shape, b_shape)))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    from .linalg import mv
    y = mv(mat, vec)
    return (input if beta == 1 else input * beta) + (y if alpha == 1 else y * alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    from .linalg import bmm
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3
                           else "batch2 must be a 3D tensor")
    y = bmm(batch1, batch2)
    return (input if beta == 1 else input * beta) + (y if alpha == 1 else y * alpha)


def multi_dot(tensors):
    """A chain of matrix products (1-D ends as a row and a column vector), left to right."""
    from .linalg import matmul
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    y = tensors[0]
    for m in tensors[1:]:
        y = matmul(y, m)
    return y


def vecdot(x, y, *, dim=-1):
    from .reduce import sum as sum_
    return sum_(x * y, dim)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .misc import diagonal
    return diagonal(A, offset, dim1, dim2)


def vdot(input, other):
    from .linalg import dot
    return dot(input, other)   # real tensors: the conjugate is the tensor itself


OPS = [LinalgInvExBackward0, LinalgDetBackward0, LinalgSlogdetBackward0, LinalgSolveExBackward0,
       LinalgCholeskyExBackward0, LinalgCrossBackward0, LinalgSvdBackward0]
