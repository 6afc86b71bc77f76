"""Matrix decompositions and solvers of ``gpugrad.linalg`` beyond those in matrix.py. Every
name in ``__all__`` is attached to ``gpugrad.linalg``.

The decompositions with their own gradients live in decomp.py (qr, eigh, svd, pinv) and
linalg_lu.py (solve_triangular, LU); what is here composes them with the ops of matrix.py:
lstsq, the ``_ex`` variants reporting failures in ``info``, cond, householder_product, tensorinv,
tensorsolve and vander. eig / eigvals need complex tensors, which gpugrad does not have.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from .decomp import eigh, eigvalsh, matrix_rank, pinv, qr, svd
from .linalg_lu import lu, lu_factor, lu_factor_ex, lu_solve, solve_triangular
from .matrix import (
    LinalgCholeskyExBackward0,
    LinAlgError,
    _batches,
    _matrices,
    _not_positive_definite,
    _where,
    _zero_pivot,
    inv,
    matrix_norm,
    solve,
)

__all__ = ["qr", "eigh", "eigvalsh", "svd", "pinv", "matrix_rank", "lstsq", "solve_triangular",
           "lu_factor", "lu_factor_ex", "lu", "lu_solve", "cholesky_ex", "inv_ex", "solve_ex",
           "cond", "householder_product", "tensorinv", "tensorsolve", "vander", "eig", "eigvals"]

LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
CholeskyExResult = namedtuple("linalg_cholesky_ex", ["L", "info"])
InvExResult = namedtuple("linalg_inv_ex", ["inverse", "info"])
SolveExResult = namedtuple("linalg_solve_ex", ["result", "info"])
for _t in (LstsqResult, CholeskyExResult, InvExResult, SolveExResult):
    _t.__module__ = "gpugrad.return_types"

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _empty(like, dtype=None):
    xp = xp_of(like._data)
    return Tensor._make(xp.empty((0,), dtype=dtype or like._data.dtype))


def lstsq(A, B, rcond=None, *, driver=None):
    """The minimum-norm X minimising ||A X - B|| (batched), through the pseudo-inverse with
    singular values at most rcond * the largest taken as zero (rcond defaults to
    eps * max(m, n)). As PyTorch's CPU drivers: residuals (squared, per column) only for m > n,
    full rank and a driver other than gelsy; rank except for gels; singular values for gelsd
    and gelss."""
    from .linalg import matmul
    from .reduce import sum as sum_
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
                           "gelsd, gelss)")
    driver = driver or "gelsy"
    if A.dtype.kind != "f" or B.dtype.kind != "f":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {scalar_name(A.dtype).capitalize()} "
                           f"and other's dtype {scalar_name(B.dtype).capitalize()}")
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != b.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    if rcond is None:
        rcond = float(np.finfo(A.dtype).eps) * max(m, n)
    x = matmul(pinv(A, atol=0.0, rtol=rcond), b)
    rank = matrix_rank(A, atol=0.0, rtol=rcond)
    residuals = _empty(A)
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        residuals = sum_((matmul(A, x) - b) ** 2, -2)
    return LstsqResult(x.squeeze(-1) if vector else x, residuals,
                       rank if driver != "gels" else _empty(A, np.int64),
                       svd(A.detach(), full_matrices=False).S if driver in ("gelsd", "gelss")
                       else _empty(A))


# -- the _ex variants: failures reported in info ------------------------------------------------
def _info(A, codes):
    xp = xp_of(A._data)
    return Tensor._make(xp.asarray(np.asarray(codes, dtype=np.int32).reshape(A.shape[:-2])))


def _replace_failed(A, info):
    """A with each failed matrix replaced by the identity (its result is then overwritten)."""
    from .pointwise import where
    xp = xp_of(A._data)
    failed = (info._data != 0)[..., None, None]
    return where(Tensor._make(failed), Tensor._make(xp.eye(A.shape[-1], dtype=A._data.dtype)), A)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info is 0, or the order of the first leading minor that is not
    positive-definite (its L is then the identity, where LAPACK leaves a partial factor)."""
    _matrices("linalg.cholesky", A)
    try:
        low = LinalgCholeskyExBackward0.apply(A, upper=upper)
        return CholeskyExResult(low, _info(A, np.zeros(A.shape[:-2])))
    except LinAlgError:
        a = A._data
        codes = [_not_positive_definite(xp_of(a), m) for m in _batches(a)]
    if check_errors:
        b, k = next((b, k) for b, k in enumerate(codes) if k)
        raise LinAlgError(f"linalg.cholesky_ex: {_where(A, b)}The factorization could not be "
                          f"completed because the input is not positive-definite (the leading "
                          f"minor of order {k} is not positive-definite).")
    info = _info(A, codes)
    return CholeskyExResult(LinalgCholeskyExBackward0.apply(_replace_failed(A, info), upper=upper),
                            info)


def _singular_codes(A):
    a = A._data
    return [_zero_pivot(xp_of(a), m) for m in _batches(a)]


def _nan_where_failed(y, info, vector=False):
    from .pointwise import where
    failed = info._data != 0
    failed = failed[..., None] if vector else failed[..., None, None]
    return where(Tensor._make(failed), math.nan, y)


def inv_ex(A, *, check_errors=False):
    """(A^-1, info): info is 0, or the 1-based position of the first zero pivot of the LU
    factorisation (that inverse is then nan)."""
    _matrices("linalg.inv", A)
    try:
        return InvExResult(inv(A), _info(A, np.zeros(A.shape[:-2])))
    except LinAlgError:
        codes = _singular_codes(A)
    if check_errors:
        b, k = next((b, k) for b, k in enumerate(codes) if k)
        raise LinAlgError(f"linalg.inv_ex: {_where(A, b)}The diagonal element {k} is zero, the "
                          f"inversion could not be completed because the input matrix is "
                          f"singular.")
    info = _info(A, codes)
    return InvExResult(_nan_where_failed(inv(_replace_failed(A, info)), info), info)


def solve_ex(A, B, *, left=True, check_errors=False):
    """(X, info) as ``linalg.solve``; a singular A gives info > 0 and a nan X."""
    _matrices("linalg.solve", A)
    try:
        return SolveExResult(solve(A, B, left=left), _info(A, np.zeros(A.shape[:-2])))
    except LinAlgError:
        codes = _singular_codes(A)
    if check_errors:
        b = next(b for b, k in enumerate(codes) if k)
        raise LinAlgError(f"torch.linalg.solve_ex: {_where(A, b)}The solver failed because the "
                          f"input matrix is singular.")
    info = _info(A, codes)
    x = solve(_replace_failed(A, info), B, left=left)
    return SolveExResult(_nan_where_failed(x, info, x.ndim == A.ndim - 1), info)


# -- compositions -------------------------------------------------------------------------------
_COND_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A, p=None):
    """kappa_p(A) = ||A||_p ||A^-1||_p; for p = None, 2, -2 the ratio of extreme singular values
    (any shape). A singular A gives inf for the norms that need A^-1."""
    from .pointwise import where
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svd(A, full_matrices=False).S
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    if not (p in ("fro", "nuc") if isinstance(p, str) else p in _COND_ORDS[2:]):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    inverse, info = inv_ex(A)
    value = matrix_norm(A, p) * matrix_norm(where(Tensor._make(
        (info._data != 0)[..., None, None]), 0.0, inverse), p)
    return where(Tensor._make(info._data != 0), math.inf, value)


def householder_product(A, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, where v_i is column i of A
    below the diagonal with a 1 on it (the Q that geqrf's output encodes)."""
    from .linalg import matmul
    fn = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    a = A._data
    xp = xp_of(a)
    q = Tensor._make(xp.broadcast_to(xp.eye(m, dtype=a.dtype), A.shape[:-2] + (m, m)).copy())
    rows = xp.arange(m)
    for i in range(k):
        v = A[..., :, i] * (rows > i).astype(a.dtype) + (rows == i).astype(a.dtype)
        qv = matmul(q, v.unsqueeze(-1))
        q = q - (tau[..., i, None, None] * qv) * v.unsqueeze(-2)
    return q[..., :, :n]


def _prod(shape):
    return math.prod(int(s) for s in shape)


def tensorinv(A, ind=2):
    """The inverse with respect to tensordot over ``ind`` dimensions: the matrix inverse of A
    seen as prod(shape[:ind]) x prod(shape[ind:]), reshaped to shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = _prod(A.shape[:ind]), _prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B; ``dims`` (of A) are moved last first."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    rows, cols = _prod(A.shape[:B.ndim]), _prod(A.shape[B.ndim:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but "
                           f"got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(*A.shape[B.ndim:])


def vander(x, *, N=None):  # noqa: N803
    """[1, x, x^2, ..., x^(N-1)] along a new last dimension (N defaults to x.shape[-1])."""
    from .._creation import ones_like
    from .misc import cumprod
    from .shape import cat
    n = N if N is not None else (x.shape[-1] if x.ndim else 1)
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    col = x.unsqueeze(-1)
    powers = cumprod(col.expand(*x.shape, n - 1), -1)
    return cat([ones_like(col), powers], -1)


def _no_complex(fn, A):
    _matrices(fn, A)
    raise NotImplementedError(f"{fn}: the eigenvalues of a general real matrix are complex, and "
                              f"gpugrad has no complex dtypes; for a symmetric matrix use "
                              f"linalg.eigh / linalg.eigvalsh")


def eig(A):
    _no_complex("linalg.eig", A)


def eigvals(A):
    _no_complex("linalg.eigvals", A)
