"""PyTorch's older top-level linear algebra names over gpugrad's linalg: cholesky (with
``upper``), chain_matmul; matrix_exp as a composition of matrix products (so it has gradients of
every order); qr, svd (V, not Vh), pinverse, lu, lu_solve, lu_unpack, triangular_solve,
cholesky_solve and cholesky_inverse over
the functions of ``gpugrad.linalg``; lstsq and matrix_rank raise
PyTorch's removal message.
"""
from __future__ import annotations

import math
import warnings
from collections import namedtuple

from ..._backend import xp_of
from ..._exports import export
from ...tensor import Tensor


@export("cholesky", method=True)
def cholesky(input, upper=False):
    """L with A = L L^T (U with A = U^T U for upper=True), as ``linalg.cholesky``."""
    from .decompositions import cholesky as linalg_cholesky
    return linalg_cholesky(input, upper=upper)


@export("chain_matmul")
def chain_matmul(*matrices, out=None):
    from .products import multi_dot
    warnings.warn("gpugrad.chain_matmul is deprecated and will be removed in a future release. "
                  "Use gpugrad.linalg.multi_dot instead, which accepts a list of two or more "
                  "tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


_TAYLOR_TERMS = 18   # 0.5^18 / 18! < 1e-21: float64-exact once the norm is at most 1/2


@export("matrix_exp", method=True)
def matrix_exp(A):
    """exp(A) = sum_k A^k / k!, by scaling and squaring: exp(A) = exp(A / 2^s)^(2^s) with s
    chosen so that the 1-norm of A / 2^s is at most 1/2, and the Taylor series of that (Horner
    form) to 18 terms."""
    from .products import matmul
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1]} matrices")
    if A.dtype.kind not in "fc":
        raise RuntimeError("linalg.matrix_exp: Expected a floating point or complex tensor as "
                           "input.")
    a = A._data
    xp = xp_of(a)
    n = a.shape[-1]
    norm = float(xp.abs(a).sum(axis=-2).max()) if a.size else 0.0
    if not math.isfinite(norm):
        norm = 0.0   # nan or inf entries propagate through the series
    s = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0.5 else 0
    x = A / (2.0 ** s) if s else A
    eye = xp.eye(n, dtype=a.dtype)
    y = x / _TAYLOR_TERMS + eye
    for k in range(_TAYLOR_TERMS - 1, 0, -1):
        y = matmul(x, y) / k + eye
    for _ in range(s):
        y = matmul(y, y)
    return y


# -- older names of the decompositions and solvers (see solvers.py, decompositions.py) ------------
QrResult = namedtuple("qr", ["Q", "R"])
SvdResult = namedtuple("svd", ["U", "S", "V"])
LuUnpackResult = namedtuple("lu_unpack", ["P", "L", "U"])
LuWithInfoResult = namedtuple("_lu_with_info", ["LU", "pivots", "info"])
TriangularSolveResult = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
for _t in (QrResult, SvdResult, LuUnpackResult, LuWithInfoResult, TriangularSolveResult):
    _t.__module__ = "gpugrad.return_types"
_warned: set = set()


def _deprecated(name, message):
    """PyTorch warns once per process about these names (TORCH_WARN_ONCE)."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(message, UserWarning, stacklevel=3)


@export("qr", method=True)
def qr(input, some=True):
    from .decompositions import qr as linalg_qr
    _deprecated("qr", "gpugrad.qr is deprecated in favor of gpugrad.linalg.qr and will be "
                "removed in a future release. The boolean parameter 'some' has been replaced "
                "with a string parameter 'mode': use gpugrad.linalg.qr(A, 'reduced' if some else "
                "'complete').")
    return QrResult(*linalg_qr(input, "reduced" if some else "complete"))


@export("svd", method=True)
def svd(input, some=True, compute_uv=True):
    """(U, S, V) with input = U diag(S) V^T (V, not Vh); without compute_uv, U and V are zero
    m x m and n x n matrices, as PyTorch returns them."""
    from .decompositions import svd as linalg_svd
    if not compute_uv:
        s = linalg_svd(input, full_matrices=False).S
        xp = xp_of(input._data)
        batch, (m, n) = tuple(input.shape[:-2]), input.shape[-2:]
        zeros = [Tensor._make(xp.zeros(batch + (k, k), dtype=input._data.dtype)) for k in (m, n)]
        return SvdResult(zeros[0], s, zeros[1])
    u, s, vh = linalg_svd(input, full_matrices=not some)
    return SvdResult(u, s, vh.mT)


@export("pinverse", method=True)
def pinverse(input, rcond=1e-15):
    from .decompositions import pinv
    return pinv(input, rtol=rcond)


@export("lu", method=True)
def lu(A, pivot=True, get_infos=False):
    """(LU, pivots), and info with get_infos=True: ``linalg.lu_factor_ex``."""
    from .triangular import lu_factor_ex
    _deprecated("lu", "gpugrad.lu is deprecated in favor of gpugrad.linalg.lu_factor / "
                "gpugrad.linalg.lu_factor_ex and will be removed in a future release.")
    lu_, pivots, info = lu_factor_ex(A, pivot=pivot)
    return LuWithInfoResult(lu_, pivots, info) if get_infos else (lu_, pivots)


@export("lu_solve", method=True)
def lu_solve(b, LU_data, LU_pivots):  # noqa: N803
    from .triangular import lu_solve as linalg_lu_solve
    return linalg_lu_solve(LU_data, LU_pivots, b)


@export("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):  # noqa: N803
    """(P, L, U) from the packed output of lu_factor (empty tensors for what is not unpacked)."""
    from .. import tensor_ns
    from .triangular import _permutation, _unpack
    xp = xp_of(LU_data._data)
    m, n = LU_data.shape[-2:]
    dtype = LU_data._data.dtype
    empty = Tensor._make(xp.empty((0,), dtype=dtype))
    p = Tensor._make(_permutation(xp, LU_pivots._data, m, dtype)) if unpack_pivots else empty
    low, up = _unpack(tensor_ns, LU_data, m, n) if unpack_data else (empty, empty)
    return LuUnpackResult(p, low, up)


@export("triangular_solve", method=True)
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """(X, A) with op(A) X = b, op(A) = A^T for transpose=True."""
    from .triangular import solve_triangular
    _deprecated("triangular_solve", "gpugrad.triangular_solve is deprecated in favor of "
                "gpugrad.linalg.solve_triangular and will be removed in a future release. "
                "gpugrad.linalg.solve_triangular has its arguments reversed and does not return "
                "a copy of one of the inputs.")
    a = A.mT if transpose else A
    x = solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.clone())


def _factor_checks(fn, L):
    from ...tensor import scalar_name
    if L.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{L.shape[-2]} by {L.shape[-1]} matrices")
    if L.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(L.dtype).capitalize()}")


@export("cholesky_solve", method=True)
def cholesky_solve(B, L, upper=False):
    """X with A X = B for A = L L^T (A = U^T U for upper=True): two triangular solves."""
    from .triangular import solve_triangular
    if B.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions "
                           f"instead")
    _factor_checks("cholesky_solve", L)
    if upper:
        return solve_triangular(L, solve_triangular(L.mT, B, upper=False), upper=True)
    return solve_triangular(L.mT, solve_triangular(L, B, upper=False), upper=True)


@export("cholesky_inverse", method=True)
def cholesky_inverse(L, upper=False):
    """A^-1 for A = L L^T (A = U^T U for upper=True)."""
    _factor_checks("cholesky_inverse", L)
    xp = xp_of(L._data)
    eye = Tensor._make(xp.eye(L.shape[-1], dtype=L._data.dtype))
    return cholesky_solve(eye, L, upper)


@export("lstsq")
def lstsq(input, A, *, out=None):
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed. `gpugrad.lstsq` is "
        "deprecated in favor of `gpugrad.linalg.lstsq`.\n`gpugrad.linalg.lstsq` has reversed "
        "arguments and does not return the QR decomposition in the returned tuple (although it "
        "returns other information about the problem).\n\nTo get the QR decomposition consider "
        "using `gpugrad.linalg.qr`.\n\nThe returned solution in `gpugrad.lstsq` stored the "
        "residuals of the solution in the last m - n columns of the returned value whenever "
        "m > n. In gpugrad.linalg.lstsq, the residuals are in the field 'residuals' of the "
        "returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = "
        "gpugrad.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = "
        "gpugrad.linalg.lstsq(A, B).solution")


@export("matrix_rank")
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(
        "This function was deprecated since version 1.9 and is now removed.\nPlease use the "
        "`gpugrad.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed "
        "in `gpugrad.linalg.matrix_rank()` to 'hermitian'.")


OPS: list = []
