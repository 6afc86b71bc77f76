"""Triangular solves and the LU factorisation of ``gpugrad.linalg``: solve_triangular,
lu_factor(_ex), lu and lu_solve.

Both routines are written here on the array module (substitution, and elimination with partial
pivoting, each a loop over one dimension vectorised over the batch), so they serve numpy and CuPy
alike, batched, and return PyTorch's inf/nan for a zero diagonal rather than raising.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._backend import xp_of
from ...tensor import Tensor, scalar_name
from .._op import Op
from .solvers import _mT, _raw

LuFactorResult = namedtuple("linalg_lu_factor", ["LU", "pivots"])
LuFactorExResult = namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LuResult = namedtuple("linalg_lu", ["P", "L", "U"])
for _t in (LuFactorResult, LuFactorExResult, LuResult):
    _t.__module__ = "gpugrad.return_types"


# -- array routines -----------------------------------------------------------------------------
def _batch_shape(a, b):
    return np.broadcast_shapes(a.shape[:-2], b.shape[:-2])


def _substitute(xp, a, b, upper, unit):
    """X with A X = B for triangular A (only its `upper` or lower triangle is read; its diagonal
    is taken as ones when `unit`): back or forward substitution, one row of X per step."""
    batch = _batch_shape(a, b)
    a = xp.broadcast_to(a, batch + a.shape[-2:])
    x = xp.array(xp.broadcast_to(b, batch + b.shape[-2:]), dtype=np.result_type(a, b))
    n = a.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):   # a zero diagonal gives inf/nan
        for i in (range(n - 1, -1, -1) if upper else range(n)):
            done = slice(i + 1, n) if upper else slice(0, i)
            if done.stop > done.start:
                x[..., i:i + 1, :] -= xp.matmul(a[..., i:i + 1, done], x[..., done, :])
            if not unit:
                x[..., i, :] /= a[..., i, i, None]
    return x


def _tri_arrays(xp, a, b, upper, left, unit):
    if left:
        return _substitute(xp, a, b, upper, unit)
    # X A = B  <=>  A^T X^T = B^T
    return xp.swapaxes(_substitute(xp, _mT(xp, a), _mT(xp, b), not upper, unit), -1, -2)


def _lu_arrays(xp, a, pivot=True):
    """Elimination with partial pivoting: (LU packed, 1-based int32 pivots, int32 info), as
    LAPACK's getrf. A zero pivot leaves its column unscaled and sets info (the first one)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = xp.array(a.reshape((-1, m, n)), dtype=a.dtype)
    b = lu.shape[0]
    rows = xp.arange(b)
    piv = xp.empty((b, k), dtype=np.int32)
    info = xp.zeros(b, dtype=np.int32)
    for j in range(k):
        p = j + xp.argmax(xp.abs(lu[:, j:, j]), axis=1) if pivot else xp.full(b, j)
        piv[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = top
        d = lu[:, j, j]
        zero = d == 0
        info = xp.where((info == 0) & zero, j + 1, info).astype(np.int32)
        col = lu[:, j + 1:, j] / xp.where(zero, 1, d)[:, None]
        col = xp.where(zero[:, None], lu[:, j + 1:, j], col)
        lu[:, j + 1:, j] = col
        lu[:, j + 1:, j + 1:] -= col[:, :, None] * lu[:, j, None, j + 1:]
    return lu.reshape(a.shape), piv.reshape(batch + (k,)), info.reshape(batch)


def _permutation(xp, piv, m, dtype):
    """P with A = P L U from 1-based pivots (row i was swapped with row piv[i] - 1, in order)."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    piv = piv.reshape((-1, k)).astype(np.int64) - 1
    b = piv.shape[0]
    perm = xp.tile(xp.arange(m), (b, 1))
    rows = xp.arange(b)
    for j in range(k):
        p = piv[:, j]
        top = perm[rows, j].copy()
        perm[rows, j] = perm[rows, p]
        perm[rows, p] = top
    # row i of L U is row perm[i] of A, so P[perm[i], i] = 1
    eye = xp.eye(m, dtype=dtype)
    return xp.swapaxes(eye[perm], -1, -2).reshape(batch + (m, m))


def _unpack(F, lu, m, n):
    """(L, U) from the packed factor (L unit lower m x k, U upper k x n)."""
    k = min(m, n)
    xp = xp_of(_raw(lu))
    low = F.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=_raw(lu).dtype)
    return low, F.triu(lu[..., :k, :], 0)


# -- backward helpers ---------------------------------------------------------------------------
def _tri(F, a, b, upper, left=True, unit=False):
    """The triangular solve inside a backward formula (recorded when building a graph)."""
    if F.fast:
        return _tri_arrays(xp_of(a), a, b, upper, left, unit)
    return solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)


def lu_grad(F, perm, low, up, gl, gu):
    """dA from the gradients of L and U in A = P L U (L unit lower m x k, U upper k x n):
    with the strictly lower part of L^T gL and the upper part of gU U^T meeting in
    M = tril(L^T gL, -1) + triu(gU U^T), gA = P L^-T M U^-T for square A; the leftover columns
    of U (wide A) or rows of L (tall A) add their own terms."""
    m, k, n = low.shape[-2], low.shape[-1], up.shape[-1]
    if gl is None:
        gl = F.zeros_like(low)
    if gu is None:
        gu = F.zeros_like(up)
    if m == n:
        mm = F.tril(F.matmul(_mT(F, low), gl), -1) + F.triu(F.matmul(gu, _mT(F, up)), 0)
        x = _tri(F, _mT(F, up), _tri(F, _mT(F, low), mm, True, unit=True), False, left=False)
    elif m < n:   # A = P L [U1 U2]
        u1, u2, gu1, gu2 = up[..., :k], up[..., k:], gu[..., :k], gu[..., k:]
        mm = (F.tril(F.matmul(_mT(F, low), gl) - F.matmul(gu2, _mT(F, u2)), -1)
              + F.triu(F.matmul(gu1, _mT(F, u1)), 0))
        x = F.concatenate([_tri(F, _mT(F, u1), mm, False, left=False), gu2], -1)
        x = _tri(F, _mT(F, low), x, True, unit=True)
    else:         # A = P [L1; L2] U
        l1, l2, gl1, gl2 = low[..., :k, :], low[..., k:, :], gl[..., :k, :], gl[..., k:, :]
        mm = (F.tril(F.matmul(_mT(F, l1), gl1), -1)
              + F.triu(F.matmul(gu, _mT(F, up)) - F.matmul(_mT(F, l2), gl2), 0))
        x = F.concatenate([_tri(F, _mT(F, l1), mm, True, unit=True), gl2], -2)
        x = _tri(F, _mT(F, up), x, False, left=False)
    return F.matmul(perm, x)


# -- ops ----------------------------------------------------------------------------------------
class LinalgSolveTriangularBackward0(Op):
    """X = A^-1 B (left) or B A^-1, A triangular (batch dimensions broadcast)"""
    __slots__ = ("upper", "left", "unit")
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")
    broadcasts = True

    def forward(self, xp, a, b, upper=False, left=True, unitriangular=False):
        self.upper, self.left, self.unit = upper, left, unitriangular
        return _tri_arrays(xp, a, b, upper, left, unitriangular)

    def backward(self, F, gy, a, y):
        gb = _tri(F, _mT(F, a), gy, not self.upper, self.left, self.unit)
        if not self.needs_input_grad[0]:
            return None, gb
        ga = -F.matmul(gb, _mT(F, y)) if self.left else -F.matmul(_mT(F, y), gb)
        off = 1 if self.unit else 0
        return (F.triu(ga, off) if self.upper else F.tril(ga, -off)), gb


class LinalgLuFactorExBackward0(Op):
    """(LU, pivots, info) with A = P L U, L and U packed in LU (only LU is differentiable)"""
    __slots__ = ("pivot", "perm")
    saves = (0,)
    saved_names = ("A",)
    temps = ("perm",)

    def forward(self, xp, a, pivot=True):
        self.pivot = pivot
        lu, piv, info = _lu_arrays(xp, a, pivot)
        self.perm = _permutation(xp, piv, a.shape[-2], a.dtype)
        return lu, piv, info

    def backward(self, F, grads, a):
        g = grads[0]
        m, n = a.shape[-2:]
        lu = self._factor(F, a)
        low, up = _unpack(F, lu, m, n)
        k = min(m, n)
        gl, gu = F.tril(g[..., :, :k], -1), F.triu(g[..., :k, :], 0)
        return lu_grad(F, self.perm, low, up, gl, gu)

    def _factor(self, F, a):
        if F.fast:
            return _lu_arrays(xp_of(a), a, self.pivot)[0]
        return lu_factor_ex(a, pivot=self.pivot).LU   # recorded: the backward is differentiable


LinalgLuFactorExBackward0.n_outputs = 3


class LinalgLuBackward0(Op):
    """(P, L, U) with A = P L U (L and U differentiable)"""
    __slots__ = ("pivot", "perm")
    saves = (0,)
    saved_names = ("A",)
    temps = ("perm",)

    def forward(self, xp, a, pivot=True):
        self.pivot = pivot
        m, n = a.shape[-2:]
        lu, piv, _ = _lu_arrays(xp, a, pivot)
        self.perm = _permutation(xp, piv, m, a.dtype)
        low, up = _unpack(xp, lu, m, n)
        return self.perm, low, up

    def backward(self, F, grads, a):
        if F.fast:
            m, n = a.shape[-2:]
            low, up = _unpack(F, _lu_arrays(xp_of(a), a, self.pivot)[0], m, n)
        else:
            _, low, up = lu(a, pivot=self.pivot)
        return lu_grad(F, self.perm, low, up, grads[1], grads[2])


LinalgLuBackward0.n_outputs = 3


# -- public functions ---------------------------------------------------------------------------
def _constant(*tensors):
    for t in tensors:
        t._rg, t.grad_fn = False, None
    return tensors


def _check(fn, name, t, kind_error=None):
    if t.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if t.dtype.kind not in "fc":
        if kind_error is not None:
            raise NotImplementedError(f"\"{kind_error}\" not implemented for "
                                      f"'{scalar_name(t.dtype).capitalize()}'")
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(t.dtype).capitalize()}")


def _square(fn, t):
    if t.shape[-1] != t.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{t.shape[-2]} by {t.shape[-1]} matrices")


def _shapes_match(fn, A, B, left):
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with A X = B (X A = B for left=False), A upper or lower triangular; the other triangle
    of A is not read, nor its diagonal when unitriangular."""
    fn = "linalg.solve_triangular"
    _check(fn, "A", A, "triangular_solve_cpu")
    _check(fn, "B", B, "triangular_solve_cpu")
    _square(fn, A)
    _shapes_match(fn, A, B, left)
    if B.dtype != A.dtype:   # PyTorch promotes
        B, A = (B.to(A.dtype), A) if np.result_type(A.dtype, B.dtype) == A.dtype \
            else (B, A.to(B.dtype))
    return LinalgSolveTriangularBackward0.apply(A, B, upper=upper, left=left,
                                                unitriangular=unitriangular)


def _lu_checked(fn, A):
    if A.ndim < 2:
        raise RuntimeError(f"torch.lu_factor: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(A.shape)} instead")
    if A.dtype.kind not in "fc":
        raise NotImplementedError(f"\"lu_cpu\" not implemented for "
                                  f"'{scalar_name(A.dtype).capitalize()}'")


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    _lu_checked("linalg.lu_factor_ex", A)
    lu, piv, info = LinalgLuFactorExBackward0.apply(A, pivot=pivot)
    _constant(piv, info)
    if check_errors:
        _raise_zero_pivot("torch.linalg.lu_factor_ex", info)
    return LuFactorExResult(lu, piv, info)


def _raise_zero_pivot(fn, info):
    codes = info.detach().cpu().numpy().reshape(-1)
    bad = np.flatnonzero(codes)
    if bad.size:
        b, k = int(bad[0]), int(codes[bad[0]])
        where = f"(Batch element {b}): " if info.ndim else ""
        raise RuntimeError(f"{fn}: {where}U[{k},{k}] is zero and using it on lu_solve would "
                           f"result in a division by zero. If you still want to perform the "
                           f"factorization, consider calling linalg.lu(A, pivot) or "
                           f"linalg.lu_factor_ex(A, pivot)")


def lu_factor(A, *, pivot=True):
    lu, piv, info = lu_factor_ex(A, pivot=pivot)
    _raise_zero_pivot("torch.linalg.lu_factor", info)
    return LuFactorResult(lu, piv)


def lu(A, *, pivot=True):
    """(P, L, U) with A = P L U; P a permutation matrix, L unit lower, U upper triangular."""
    _lu_checked("linalg.lu", A)
    p, low, up = LinalgLuBackward0.apply(A, pivot=pivot)
    _constant(p)
    return LuResult(p, low, up)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with A X = B (X A = B for left=False; A^T in place of A for adjoint=True), A = P L U
    given as lu_factor returns it: two triangular solves and a row permutation."""
    fn = "linalg.lu_solve"
    _check(fn, "LU", LU)
    _check(fn, "B", B)
    if LU.shape[-1] != LU.shape[-2]:
        raise RuntimeError(f"torch.{fn}: A must be batches of square matrices, but they are "
                           f"{LU.shape[-2]} by {LU.shape[-1]} matrices")
    _shapes_match(fn, LU, B, left)
    n = LU.shape[-1]
    raw = pivots._data if isinstance(pivots, Tensor) else pivots
    perm = Tensor._make(_permutation(xp_of(LU._data), raw, n, LU._data.dtype))
    from .products import matmul

    def low(x, left_, adj):
        return solve_triangular(LU.mT if adj else LU, x, upper=adj, left=left_,
                                unitriangular=True)

    def up(x, left_, adj):
        return solve_triangular(LU.mT if adj else LU, x, upper=not adj, left=left_)

    if left and not adjoint:      # X = U^-1 L^-1 P^T B
        return up(low(matmul(perm.mT, B), True, False), True, False)
    if left:                      # A^T X = B: X = P L^-T U^-T B
        return matmul(perm, low(up(B, True, True), True, True))
    if not adjoint:               # X A = B: X = B U^-1 L^-1 P^T
        return matmul(low(up(B, False, False), False, False), perm.mT)
    return up(low(matmul(B, perm), False, True), False, True)   # X A^T = B: X = B P L^-T U^-T


OPS = [LinalgSolveTriangularBackward0, LinalgLuFactorExBackward0, LinalgLuBackward0]
