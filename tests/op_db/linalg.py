"""Op database entries of linear algebra: matrix products, gpugrad.linalg's functions
and its decompositions and solvers (gauge-fixed outputs where they are not unique)."""
from __future__ import annotations

import math

import numpy as np
from op_db.entry import ROWS, OpEntry, _const, _norm_ref

import gpugrad

PRODUCTS = [
    # matrix products
    OpEntry("dot", gpugrad.dot, np.dot, (((3,), (3,)),), ("DotBackward0",)),
    OpEntry("matmul_vv", lambda x, y: x @ y, np.matmul, (((3,), (3,)),), ("DotBackward0",)),
    OpEntry("mv", lambda a, v: a @ v, np.matmul, (((2, 3), (3,)),), ("MvBackward0",)),
    OpEntry("mm", gpugrad.mm, np.matmul, (((2, 3), (3, 2)),), ("MmBackward0",)),
    OpEntry("matmul_vm", gpugrad.matmul, np.matmul, (((3,), (3, 2)),),
            ("MmBackward0", "UnsqueezeBackward0", "SqueezeBackward1")),
    OpEntry("einsum_batched", lambda x, y: gpugrad.einsum("bij,bjk->bik", x, y),
            lambda x, y: np.einsum("bij,bjk->bik", x, y), (((2, 2, 3), (2, 3, 2)),),
            ("BmmBackward0",)),
    OpEntry("einsum_three", lambda x, y, z: gpugrad.einsum("...ab,bc,c->...a", x, y, z),
            lambda x, y, z: np.einsum("...ab,bc,c->...a", x, y, z),
            (((2, 2, 3), (3, 2), (2,)),), ("BmmBackward0", "ViewBackward0")),
    OpEntry("bmm", gpugrad.bmm, np.matmul, (((2, 1, 3), (2, 3, 2)),), ("BmmBackward0",)),
    OpEntry("matmul_broadcast", lambda x, y: x @ y, np.matmul,
            (((1, 2, 3), (2, 3, 1)), ((2, 1, 2, 3), (3, 3, 2))), ("BmmBackward0",)),
    OpEntry("matmul_batch_by_matrix", lambda x, y: x @ y, np.matmul,
            (((2, 2, 3), (3, 2)), ((2, 1, 2, 3), (3, 2))), ("MmBackward0", "UnsafeViewBackward0")),
    OpEntry("linear_3d", lambda x, w, b: gpugrad.nn.functional.linear(x, w, b),
            lambda x, w, b: x @ w.T + b, (((2, 2, 3), (4, 3), (4,)),),
            ("AddmmBackward0", "ViewBackward0")),
    OpEntry("addmm", gpugrad.addmm, lambda b, x, w: b + x @ w,
            (((2, 2), (2, 3), (3, 2)), ((2,), (2, 3), (3, 2)), ((), (1, 2), (2, 2))),
            ("AddmmBackward0",)),
]


# -- linear algebra (gpugrad/ops/matrix.py) ------------------------------------------------------
SQUARE = (((3, 3),), ((2, 3, 3),))


def _conditioned(a):
    """a + 4 I: the sampled matrices kept well away from singular."""
    return a + _const(4 * np.eye(a.shape[-1]), a)


def _spd(a):
    """a a^T + I: symmetric positive-definite (cholesky reads one triangle, so its gradient
    is checked through a symmetric input, as PyTorch's OpInfo does)."""
    return a @ a.mT + _const(np.eye(a.shape[-1]), a)


def _spd_ref(a):
    return a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1])


def _cross_ref(a, b, axis=-1):
    return np.cross(a, b, axis=axis)


def _matrix_norm_ref(a, ord, axes=(-2, -1)):
    return np.linalg.norm(a, ord, axis=axes)


_inv_ref = lambda a: np.linalg.inv(a + 4 * np.eye(a.shape[-1]))  # noqa: E731

MATRIX = [
    OpEntry("linalg_inv", lambda a: gpugrad.linalg.inv(_conditioned(a)), _inv_ref, SQUARE,
            ("LinalgInvExBackward0",)),
    OpEntry("inverse", lambda a: gpugrad.inverse(_conditioned(a)), _inv_ref, SQUARE,
            ("LinalgInvExBackward0",)),
    OpEntry("inverse_method", lambda a: _conditioned(a).inverse(), _inv_ref, (((2, 2),),),
            ("LinalgInvExBackward0",)),
    OpEntry("linalg_det", gpugrad.linalg.det, np.linalg.det, SQUARE, ("LinalgDetBackward0",)),
    OpEntry("det", gpugrad.det, np.linalg.det, (((2, 2),),), ("LinalgDetBackward0",)),
    OpEntry("det_method", lambda a: a.det(), np.linalg.det, (((2, 2, 2),),),
            ("LinalgDetBackward0",)),
    OpEntry("linalg_slogdet", lambda a: gpugrad.linalg.slogdet(a).logabsdet,
            lambda a: np.linalg.slogdet(a)[1], SQUARE, ("LinalgSlogdetBackward0",)),
    OpEntry("slogdet", lambda a: gpugrad.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
            (((2, 2),),), ("LinalgSlogdetBackward0",)),
    OpEntry("logdet", lambda a: gpugrad.logdet(_conditioned(a)),
            lambda a: np.log(np.linalg.det(a + 4 * np.eye(a.shape[-1]))), SQUARE,
            ("LinalgSlogdetBackward0", "AddBackward0")),
    OpEntry("slogdet_method", lambda a: a.slogdet()[1], lambda a: np.linalg.slogdet(a)[1],
            (((2, 2),),), ("LinalgSlogdetBackward0",)),
    OpEntry("solve", lambda a, b: gpugrad.linalg.solve(_conditioned(a), b),
            lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b),
            (((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((3, 3), (2, 3, 2))),
            ("LinalgSolveExBackward0",)),
    OpEntry("solve_vector", lambda a, b: gpugrad.linalg.solve(_conditioned(a), b),
            lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b), (((3, 3), (3,)),),
            ("LinalgSolveExBackward0", "SqueezeBackward1")),
    OpEntry("solve_left_false", lambda a, b: gpugrad.linalg.solve(_conditioned(a), b,
                                                                  left=False),
            lambda a, b: np.swapaxes(np.linalg.solve(np.swapaxes(a + 4 * np.eye(3), -1, -2),
                                                     np.swapaxes(b, -1, -2)), -1, -2),
            (((3, 3), (2, 3)),), ("LinalgSolveExBackward0",)),
    OpEntry("cholesky", lambda a: gpugrad.linalg.cholesky(_spd(a)),
            lambda a: np.linalg.cholesky(_spd_ref(a)), SQUARE, ("LinalgCholeskyExBackward0",)),
    OpEntry("cholesky_upper", lambda a: gpugrad.linalg.cholesky(_spd(a), upper=True),
            lambda a: np.swapaxes(np.linalg.cholesky(_spd_ref(a)), -1, -2), (((3, 3),),),
            ("LinalgCholeskyExBackward0",)),
    OpEntry("linalg_cross", gpugrad.linalg.cross, _cross_ref,
            (((2, 3), (2, 3)), ((2, 3), (1, 3))), ("LinalgCrossBackward0",)),
    OpEntry("cross_dim", lambda a, b: gpugrad.cross(a, b, dim=0),
            lambda a, b: _cross_ref(a, b, 0), (((3, 2), (3, 2)),), ("LinalgCrossBackward0",)),
    OpEntry("cross_method", lambda a, b: a.cross(b, dim=-1), _cross_ref, (((3,), (3,)),),
            ("LinalgCrossBackward0",)),
    OpEntry("svdvals", gpugrad.linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False),
            (((3, 2),), ((2, 2, 3),)), ("LinalgSvdBackward0",)),
    OpEntry("vector_norm", lambda x: gpugrad.linalg.vector_norm(x, 3, dim=(0, 1)),
            lambda x: _norm_ref(x, 3, (0, 1)), (((2, 3, 2),),), ("LinalgVectorNormBackward0",),
            avoid=(0.0,)),
    OpEntry("vector_norm_neg_inf", lambda x: gpugrad.linalg.vector_norm(x, -math.inf, 1),
            lambda x: np.abs(x).min(1), ROWS, ("AminBackward0", "AbsBackward0"), avoid=(0.0,)),
    OpEntry("linalg_norm", gpugrad.linalg.norm, lambda x: np.sqrt((x * x).sum()),
            (((2, 3),), ((2, 3, 2),)), ("LinalgVectorNormBackward0",)),
    OpEntry("matrix_norm_fro", gpugrad.linalg.matrix_norm, lambda a: _matrix_norm_ref(a, "fro"),
            (((2, 3, 2),),), ("LinalgVectorNormBackward0",)),
    OpEntry("matrix_norm_1", lambda a: gpugrad.linalg.matrix_norm(a, 1),
            lambda a: _matrix_norm_ref(a, 1), (((2, 3, 2),),), ("AmaxBackward0", "SumBackward1"),
            avoid=(0.0,)),
    OpEntry("norm_inf_keepdim", lambda a: gpugrad.linalg.norm(a, -math.inf, (2, 0), True),
            lambda a: _matrix_norm_ref(a, -np.inf, (2, 0))[None, :, None], (((2, 3, 2),),),
            ("AminBackward0", "SumBackward1"), avoid=(0.0,)),
    OpEntry("matrix_norm_2", lambda a: gpugrad.linalg.matrix_norm(a, 2),
            lambda a: _matrix_norm_ref(a, 2), (((3, 2),),), ("LinalgSvdBackward0",)),
    OpEntry("norm_nuc", lambda a: gpugrad.linalg.norm(a, "nuc"),
            lambda a: _matrix_norm_ref(a, "nuc"), (((3, 2),),), ("LinalgSvdBackward0",)),
    OpEntry("matrix_power", lambda a: gpugrad.linalg.matrix_power(a, 3),
            lambda a: np.linalg.matrix_power(a, 3), (((3, 3),),), ("MmBackward0",)),
    OpEntry("matrix_power_negative", lambda a: _conditioned(a).matrix_power(-2),
            lambda a: np.linalg.matrix_power(a + 4 * np.eye(3), -2), (((3, 3),),),
            ("LinalgInvExBackward0", "MmBackward0")),
    OpEntry("kron", gpugrad.kron, np.kron, (((2, 3), (2, 1, 2)), ((2,), (3,))),
            ("UnsafeViewBackward0", "MulBackward0")),
    OpEntry("addmv", lambda b, a, v: gpugrad.addmv(b, a, v, beta=0.5, alpha=2),
            lambda b, a, v: 0.5 * b + 2 * (a @ v), (((2,), (2, 3), (3,)),),
            ("MvBackward0", "AddBackward0")),
    OpEntry("baddbmm", lambda b, x, y: b.baddbmm(x, y), lambda b, x, y: b + x @ y,
            (((2, 1, 2), (2, 1, 3), (2, 3, 2)),), ("BmmBackward0", "AddBackward0")),
    OpEntry("vdot", gpugrad.vdot, np.vdot, (((3,), (3,)),), ("DotBackward0",)),
    OpEntry("multi_dot", lambda a, b, v: gpugrad.linalg.multi_dot([a, b, v]),
            lambda a, b, v: a @ b @ v, (((2, 3), (3, 3), (3,)),), ("MvBackward0", "MmBackward0")),
    OpEntry("vecdot", lambda x, y: gpugrad.linalg.vecdot(x, y, dim=0),
            lambda x, y: (x * y).sum(0), (((2, 3), (2, 1)),), ("SumBackward1", "MulBackward0")),
    OpEntry("linalg_diagonal", lambda a: gpugrad.linalg.diagonal(a, offset=-1),
            lambda a: np.diagonal(a, -1, -2, -1).copy(), (((2, 3, 3),),),
            ("DiagonalBackward0",)),
]


# -- decompositions and solvers of torch.linalg (gauge-fixed outputs where they are not unique) ----
_LA = gpugrad.linalg


def _la_legacy():
    from gpugrad.ops.linalg import legacy
    return legacy


def _la_sym(a):
    return a + a.mT


def _la_sym_ref(a):
    return a + np.swapaxes(a, -1, -2)


def _la_diag_sign(x):
    """sign of the diagonal of x (tensor or array), as a row to scale columns with."""
    if isinstance(x, np.ndarray):
        return np.sign(np.diagonal(x, axis1=-2, axis2=-1))[..., None, :]
    return x.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _la_qr_fixed(q, r):
    """Q and R with R's diagonal made positive (the QR factors are unique up to those signs)."""
    d = _la_diag_sign(r)
    return q * d, r * (np.swapaxes(d, -1, -2) if isinstance(d, np.ndarray) else d.mT)


def _la_first_row_sign(u):
    return np.sign(u[..., :1, :]) if isinstance(u, np.ndarray) else u[..., :1, :].sign()


def _la_svd_fixed(u, s, vh):
    d = _la_first_row_sign(u)
    return s, u * d, vh * (np.swapaxes(d, -1, -2) if isinstance(d, np.ndarray) else d.mT)


def _la_svd_ref(a):
    return _la_svd_fixed(*np.linalg.svd(a, full_matrices=False))


def _la_eigh_ref(a):
    w, v = np.linalg.eigh(_la_sym_ref(a))
    return w, v * _la_first_row_sign(v)


def _la_lu_ref(a):
    """(P, L, U, packed LU) by elimination with partial pivoting, written with loops."""
    if a.ndim > 2:
        parts = [_la_lu_ref(m) for m in a.reshape((-1,) + a.shape[-2:])]
        return tuple(np.stack([p[i] for p in parts]).reshape(a.shape[:-2] + parts[0][i].shape)
                     for i in range(4))
    m, n = a.shape
    k = min(m, n)
    u, low, perm = a.copy(), np.zeros((m, n)), list(range(m))
    for j in range(k):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        u[[j, p]], low[[j, p]] = u[[p, j]], low[[p, j]]
        perm[j], perm[p] = perm[p], perm[j]
        low[j + 1:, j] = u[j + 1:, j] / u[j, j]
        u[j + 1:] -= low[j + 1:, j, None] * u[j]
    packed = np.triu(u) + np.tril(low, -1)
    return (np.eye(m)[:, perm], np.tril(low, -1)[:, :k] + np.eye(m, k), np.triu(u)[:k],
            packed)


def _la_householder_ref(a, tau):
    out = np.zeros(a.shape)
    for idx in np.ndindex(*a.shape[:-2]):
        m, n = a.shape[-2:]
        q = np.eye(m)
        for i in range(tau.shape[-1]):
            v = np.concatenate([np.zeros(i), [1.0], a[idx][i + 1:, i]])
            q = q @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        out[idx] = q[:, :n]
    return out


def _la_upper(a):
    return a.triu() + _const(4 * np.eye(a.shape[-1]), a)


def _la_upper_ref(a):
    return np.triu(a) + 4 * np.eye(a.shape[-1])


def _la_lower(a):
    return a.tril() + _const(4 * np.eye(a.shape[-1]), a)


def _la_lower_ref(a):
    return np.tril(a) + 4 * np.eye(a.shape[-1])


def _la_solve_ref(a, b):
    return np.linalg.solve(a, b)


def _la_lstsq_ref(a, b):
    x = np.linalg.pinv(a) @ b
    return x, ((a @ x - b) ** 2).sum(-2)


_LA_EYE6 = np.eye(6).reshape(2, 3, 6)
_LA_EYE4 = np.eye(4).reshape(4, 2, 2)
_LA_RECT = (((4, 3),), ((2, 3, 5),))
_LA_SQUARE = (((3, 3),), ((2, 3, 3),))

DECOMPOSITIONS = [
    OpEntry("linalg_qr", lambda a: _la_qr_fixed(*_LA.qr(a)),
            lambda a: _la_qr_fixed(*np.linalg.qr(a)), _LA_RECT, ("LinalgQrBackward0",)),
    OpEntry("linalg_qr_complete_wide", lambda a: _la_qr_fixed(*_LA.qr(a, mode="complete")),
            lambda a: _la_qr_fixed(*np.linalg.qr(a, mode="complete")), (((2, 4),),),
            ("LinalgQrBackward0",)),
    OpEntry("qr_legacy", lambda a: _la_qr_fixed(*_la_legacy().qr(a)),
            lambda a: _la_qr_fixed(*np.linalg.qr(a)), (((3, 2),),), ("LinalgQrBackward0",)),
    OpEntry("linalg_eigh", lambda a: (lambda w, v: (w, v * _la_first_row_sign(v)))(
        *_LA.eigh(_la_sym(a))), _la_eigh_ref, _LA_SQUARE, ("LinalgEighBackward0",)),
    OpEntry("linalg_eigh_upper", lambda a: _LA.eigh(_la_sym(a), UPLO="U").eigenvalues,
            lambda a: np.linalg.eigvalsh(_la_sym_ref(a)), (((3, 3),),),
            ("LinalgEighBackward0",)),
    OpEntry("linalg_eigvalsh", lambda a: _LA.eigvalsh(_la_sym(a)),
            lambda a: np.linalg.eigvalsh(_la_sym_ref(a)), _LA_SQUARE, ("LinalgEighBackward0",)),
    OpEntry("linalg_svd", lambda a: _la_svd_fixed(*_LA.svd(a, full_matrices=False)),
            _la_svd_ref, _LA_RECT, ("LinalgSvdBackward0",)),
    OpEntry("linalg_svd_full", lambda a: (lambda u, s, vh: (s, u[..., :, :3] @ vh[..., :3, :]))(
        *_LA.svd(a)), lambda a: (lambda u, s, vh: (s, u @ vh))(*np.linalg.svd(a, False)),
            (((4, 3),), ((3, 5),)), ("LinalgSvdBackward0",)),
    OpEntry("svd_legacy", lambda a: (lambda u, s, v: _la_svd_fixed(u, s, v.mT))(
        *_la_legacy().svd(a)), _la_svd_ref, (((2, 4, 3),),), ("LinalgSvdBackward0",)),
    OpEntry("linalg_pinv", _LA.pinv, np.linalg.pinv, _LA_RECT, ("LinalgPinvBackward0",)),
    OpEntry("linalg_pinv_hermitian", lambda a: _LA.pinv(_la_sym(a), hermitian=True),
            lambda a: np.linalg.pinv(_la_sym_ref(a)), _LA_SQUARE, ("LinalgPinvBackward0",)),
    OpEntry("pinverse", lambda a: _la_legacy().pinverse(a), np.linalg.pinv, (((3, 4),),),
            ("LinalgPinvBackward0",)),
    OpEntry("linalg_lstsq", lambda a, b: tuple(_LA.lstsq(a, b, driver="gelsd"))[:2],
            _la_lstsq_ref, (((4, 3), (4, 2)), ((2, 5, 3), (2, 5, 1))),
            ("LinalgPinvBackward0",)),
    OpEntry("linalg_solve_triangular", lambda a, b: _LA.solve_triangular(_la_upper(a), b,
                                                                         upper=True),
            lambda a, b: _la_solve_ref(_la_upper_ref(a), b),
            (((3, 3), (3, 2)), ((3, 3), (2, 3, 2)), ((2, 3, 3), (3, 1))),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("linalg_solve_triangular_right_unit",
            lambda a, b: _LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
            lambda a, b: b @ np.linalg.inv(np.tril(a, -1) + np.eye(3)), (((3, 3), (2, 3)),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("linalg_lu_factor", lambda a: _LA.lu_factor(a).LU, lambda a: _la_lu_ref(a)[3],
            (((3, 3),), ((2, 4, 3),), ((3, 5),)), ("LinalgLuFactorExBackward0",)),
    OpEntry("linalg_lu_factor_ex", lambda a: _LA.lu_factor_ex(a).LU,
            lambda a: _la_lu_ref(a)[3], (((3, 3),),), ("LinalgLuFactorExBackward0",)),
    OpEntry("linalg_lu", lambda a: tuple(_LA.lu(a))[1:], lambda a: _la_lu_ref(a)[1:3],
            (((3, 3),), ((2, 4, 3),), ((3, 5),)), ("LinalgLuBackward0",)),
    OpEntry("lu_legacy", lambda a: _la_legacy().lu(a)[0], lambda a: _la_lu_ref(a)[3],
            (((3, 3),),), ("LinalgLuFactorExBackward0",)),
    OpEntry("lu_unpack", lambda a: tuple(_la_legacy().lu_unpack(*_LA.lu_factor(a)))[1:],
            lambda a: _la_lu_ref(a)[1:3], (((4, 3),),), ("LinalgLuFactorExBackward0",)),
    OpEntry("linalg_lu_solve", lambda a, b: _LA.lu_solve(*_LA.lu_factor(_conditioned(a)), b),
            lambda a, b: _la_solve_ref(a + 4 * np.eye(3), b), (((3, 3), (3, 2)),),
            ("LinalgLuFactorExBackward0", "LinalgSolveTriangularBackward0")),
    OpEntry("linalg_lu_solve_adjoint_right",
            lambda a, b: _LA.lu_solve(*_LA.lu_factor(_conditioned(a)), b, left=False,
                                      adjoint=True),
            lambda a, b: b @ np.swapaxes(np.linalg.inv(a + 4 * np.eye(3)), -1, -2),
            (((2, 3, 3), (2, 3)),),
            ("LinalgLuFactorExBackward0", "LinalgSolveTriangularBackward0")),
    OpEntry("lu_solve_legacy",
            lambda b, a: _la_legacy().lu_solve(b, *_LA.lu_factor(_conditioned(a))),
            lambda b, a: _la_solve_ref(a + 4 * np.eye(3), b), (((3, 1), (3, 3)),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("triangular_solve", lambda b, a: tuple(_la_legacy().triangular_solve(
        b, _la_upper(a), transpose=True)), lambda b, a: (
            _la_solve_ref(_la_upper_ref(a).T, b), _la_upper_ref(a)), (((3, 2), (3, 3)),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("cholesky_solve", lambda b, a: _la_legacy().cholesky_solve(b, _la_lower(a)),
            lambda b, a: _la_solve_ref(_la_lower_ref(a) @ _la_lower_ref(a).T, b),
            (((3, 2), (3, 3)),), ("LinalgSolveTriangularBackward0",)),
    OpEntry("cholesky_inverse_upper",
            lambda a: _la_legacy().cholesky_inverse(_la_upper(a), upper=True),
            lambda a: np.linalg.inv(_la_upper_ref(a).T @ _la_upper_ref(a)), (((3, 3),),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("linalg_cholesky_ex", lambda a: _LA.cholesky_ex(_spd(a)).L,
            lambda a: np.linalg.cholesky(_spd_ref(a)), _LA_SQUARE,
            ("LinalgCholeskyExBackward0",)),
    OpEntry("linalg_inv_ex", lambda a: _LA.inv_ex(_conditioned(a)).inverse, _inv_ref,
            _LA_SQUARE, ("LinalgInvExBackward0",)),
    OpEntry("linalg_solve_ex", lambda a, b: _LA.solve_ex(_conditioned(a), b).result,
            lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b), (((3, 3), (3, 2)),),
            ("LinalgSolveExBackward0",)),
    OpEntry("linalg_cond", _LA.cond, np.linalg.cond, _LA_RECT, ("LinalgSvdBackward0",)),
    OpEntry("linalg_cond_fro", lambda a: _LA.cond(_conditioned(a), "fro"),
            lambda a: np.linalg.cond(a + 4 * np.eye(3), "fro"), _LA_SQUARE,
            ("LinalgInvExBackward0",)),
    OpEntry("linalg_householder_product", _LA.householder_product, _la_householder_ref,
            (((4, 3), (2,)), ((2, 3, 3), (2, 3))), ("MulBackward0",)),
    OpEntry("linalg_tensorinv", lambda a: _LA.tensorinv(a + _const(4 * _LA_EYE4, a), ind=1),
            lambda a: np.linalg.tensorinv(a + 4 * _LA_EYE4, ind=1), (((4, 2, 2),),),
            ("LinalgInvExBackward0",)),
    OpEntry("linalg_tensorsolve", lambda a, b: _LA.tensorsolve(a + _const(4 * _LA_EYE6, a), b),
            lambda a, b: np.linalg.tensorsolve(a + 4 * _LA_EYE6, b), (((2, 3, 6), (2, 3)),),
            ("LinalgSolveExBackward0",)),
    OpEntry("linalg_vander", lambda x: _LA.vander(x, N=4),
            lambda x: x[..., None] ** np.arange(4), (((3,),), ((2, 3),)),
            ("CumprodBackward0", "CatBackward0")),
]
