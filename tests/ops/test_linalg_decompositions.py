"""gpugrad.linalg's decompositions and solvers (qr, eigh, svd, pinv, lstsq, solve_triangular,
LU, the _ex variants, cond, householder_product, tensorinv/tensorsolve, vander) and the legacy
top-level names: reconstruction identities, small cases worked by hand, gradients of
gauge-invariant functions, batch shapes and PyTorch's error messages. PyTorch, where installed,
is an extra oracle in the last tests."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck
from gpugrad.ops.linalg import legacy

LA = gpugrad.linalg


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _close(a, b, atol=1e-10):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-9, atol=atol)


def _eye(n, batch=()):
    return np.broadcast_to(np.eye(n), batch + (n, n))


# -- QR ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3), (2, 1, 5, 2)])
def test_qr_reconstructs_with_orthonormal_q_and_upper_r(shape, device):
    a = _rand(shape)
    q, r = LA.qr(tensor(a, device))
    k = min(shape[-2:])
    assert tuple(q.shape) == shape[:-1] + (k,) and tuple(r.shape) == shape[:-2] + (k, shape[-1])
    _close(q @ r, a)
    _close(q.mT @ q, _eye(k, shape[:-2]))
    _close(r, np.triu(to_numpy(r)), atol=0)


def test_qr_modes_shapes_and_hand_case(device):
    # columns (3, 4) and (0, 1): Q's first column is +-(3, 4) / 5, |R[0, 0]| = 5
    a = tensor([[3.0, 0.0], [4.0, 1.0]], device)
    q, r = LA.qr(a)
    _close(abs(r[0, 0]), 5.0)
    _close(q[:, 0] * np.sign(to_numpy(r[0, 0])), [0.6, 0.8])
    q, r = LA.qr(tensor(_rand((4, 3)), device), mode="complete")
    assert tuple(q.shape) == (4, 4) and tuple(r.shape) == (4, 3)
    _close(q.mT @ q, np.eye(4))
    q, r = LA.qr(tensor(_rand((2, 4, 3)), device), mode="r")
    assert tuple(q.shape) == (0,) and tuple(r.shape) == (2, 3, 3)
    assert type(LA.qr(a)).__name__ == "linalg_qr"


def test_qr_backward_errors_name_the_mode(device):
    a = tensor(_rand((4, 3)), device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"not computed when mode='r'\. Please use "
                                           r"linalg\.qr\(A, mode='reduced'\)"):
        LA.qr(a, mode="r").R.sum().backward()
    with pytest.raises(RuntimeError) as e:
        LA.qr(a, mode="complete").Q.sum().backward()
    assert str(e.value) == ("The QR decomposition is not differentiable when mode='complete' and "
                            "nrows > ncols.")
    LA.qr(a.mT, mode="complete").Q.sum().backward()   # wide: differentiable
    assert a.grad is not None


@pytest.mark.parametrize("shape", [(4, 3), (2, 5)])
def test_qr_gradients_of_gauge_fixed_factors(shape, device):
    def fixed(a):
        q, r = LA.qr(a)
        d = r.diagonal(dim1=-2, dim2=-1).sign()
        return q * d.unsqueeze(-2), r * d.unsqueeze(-1)
    a = tensor(_rand(shape, 1), device, requires_grad=True)
    assert gradcheck(fixed, [a])
    assert gradgradcheck(fixed, [a])


# -- eigh ---------------------------------------------------------------------------------------
def test_eigh_hand_case_reads_one_triangle(device):
    a = tensor([[1.0, 5.0], [0.0, 1.0]], device)
    _close(LA.eigvalsh(a), [1.0, 1.0])                 # lower triangle: the identity
    w, v = LA.eigh(a, UPLO="U")                        # upper: [[1, 5], [5, 1]]
    _close(w, [-4.0, 6.0])
    _close(abs(v), np.full((2, 2), 0.5 ** 0.5))
    assert type(LA.eigh(a)).__name__ == "linalg_eigh"


def test_eigh_eigenvector_equation_batched(device):
    s = _rand((2, 3, 4, 4))
    s = s + np.swapaxes(s, -1, -2)
    w, v = LA.eigh(tensor(s, device))
    _close(tensor(s, device) @ v, v * w.unsqueeze(-2))
    _close(v.mT @ v, _eye(4, (2, 3)))
    assert (np.diff(to_numpy(w), axis=-1) >= 0).all()


def test_eigh_gradient_is_symmetric_and_invariant_functions_check(device):
    a = tensor(_rand((3, 3), 2), device, requires_grad=True)

    def invariant(x):   # eigenvalues and the projector onto the top eigenvector
        w, v = LA.eigh(x + x.mT)
        top = v[..., -1:]
        return w, top @ top.mT
    assert gradcheck(invariant, [a])
    assert gradgradcheck(invariant, [a])
    s = tensor(to_numpy(a) + to_numpy(a).T, device, requires_grad=True)
    w, v = LA.eigh(s)
    (w.sum() + (v[:, 0:1] @ v[:, 0:1].mT)[0, 1]).backward()
    _close(s.grad, to_numpy(s.grad).T)


# -- SVD ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 3, 3)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_reconstructs(shape, full, device):
    a = _rand(shape)
    u, s, vh = LA.svd(tensor(a, device), full_matrices=full)
    m, n = shape[-2:]
    k = min(m, n)
    assert tuple(u.shape[-2:]) == ((m, m) if full else (m, k))
    assert tuple(vh.shape[-2:]) == ((n, n) if full else (k, n))
    _close((u[..., :k] * s.unsqueeze(-2)) @ vh[..., :k, :], a)
    _close(u.mT @ u, _eye(u.shape[-1], shape[:-2]))
    assert (np.diff(to_numpy(s), axis=-1) <= 0).all()


def test_svd_hand_case(device):
    _close(LA.svd(tensor([[3.0, 0.0], [0.0, -4.0]], device)).S, [4.0, 3.0])


def test_svd_full_matrices_gradient_ignores_the_extra_vectors(device):
    a = tensor(_rand((4, 2), 3), device, requires_grad=True)
    g = tensor(_rand((4, 4), 4), device)
    u, _, _ = LA.svd(a)
    full, = gpugrad.autograd.grad((u * g).sum(), a)
    u, _, _ = LA.svd(a, full_matrices=False)
    reduced, = gpugrad.autograd.grad((u * g[:, :2]).sum(), a)
    _close(full, to_numpy(reduced))


def test_svd_gradients_of_invariant_functions(device):
    a = tensor(_rand((2, 4, 3), 5), device, requires_grad=True)

    def invariant(x):
        u, s, vh = LA.svd(x, full_matrices=False)
        return s, u @ vh              # the orthogonal polar factor: no sign ambiguity
    assert gradcheck(invariant, [a])
    assert gradgradcheck(invariant, [a])


# -- pinv, matrix_rank, lstsq, cond --------------------------------------------------------------
def test_pinv_penrose_conditions_and_hand_case(device):
    _close(LA.pinv(tensor([[2.0, 0.0], [0.0, 0.0]], device)), [[0.5, 0.0], [0.0, 0.0]])
    a = tensor(_rand((2, 5, 3)) @ _rand((2, 3, 4), 1), device)   # rank 3 of 4 columns
    p = LA.pinv(a)
    _close(a @ p @ a, to_numpy(a), atol=1e-9)
    _close(p @ a @ p, to_numpy(p), atol=1e-9)
    _close((a @ p).mT, to_numpy(a @ p), atol=1e-9)
    _close((p @ a).mT, to_numpy(p @ a), atol=1e-9)


def test_pinv_tolerances_and_hermitian(device):
    d = tensor(np.diag([4.0, 1.0, 0.01]), device)
    _close(LA.pinv(d), np.diag([0.25, 1.0, 100.0]))
    _close(LA.pinv(d, atol=0.1), np.diag([0.25, 1.0, 0.0]))
    _close(LA.pinv(d, rtol=0.5), np.diag([0.25, 0.0, 0.0]))
    _close(LA.pinv(d, 0.5), np.diag([0.25, 0.0, 0.0]))          # rcond
    _close(legacy.pinverse(d, rcond=0.5), np.diag([0.25, 0.0, 0.0]))
    # hermitian: the lower triangle, |eigenvalues| thresholded
    _close(LA.pinv(tensor([[1.0, 5.0], [0.0, -2.0]], device), hermitian=True),
           [[1.0, 0.0], [0.0, -0.5]])


def test_matrix_rank(device):
    d = tensor(np.diag([3.0, 1.0, 0.1]), device)
    r = LA.matrix_rank(d)
    assert r.dtype == gpugrad.int64 and int(r) == 3
    assert int(LA.matrix_rank(d, atol=0.5)) == 2
    assert int(LA.matrix_rank(d, rtol=0.5)) == 1
    assert int(LA.matrix_rank(d, atol=0.5, rtol=0.1)) == 2
    assert int(LA.matrix_rank(d, tol=1.0)) == 1   # strictly above the tolerance
    ones = tensor(np.ones((2, 4, 3)), device)
    assert to_numpy(LA.matrix_rank(ones)).tolist() == [1, 1]
    assert int(LA.matrix_rank(tensor([[2.0, 1.0], [1.0, 0.5]], device), hermitian=True)) == 1


def test_lstsq_fits_a_line_by_hand(device):
    # points (0, 1), (1, 3), (2, 5), (3, 6): y = 1.2 + 1.7 x, squared residual 0.3
    a = tensor([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]], device)
    b = tensor([[1.0], [3.0], [5.0], [6.0]], device)
    x, res, rank, sv = LA.lstsq(a, b, driver="gelsd")
    _close(x, [[1.2], [1.7]])
    _close(res, [0.3])
    assert int(rank) == 2 and tuple(sv.shape) == (2,)
    x, res, rank, sv = LA.lstsq(a, b[:, 0])           # default gelsy, vector b
    _close(x, [1.2, 1.7])
    assert tuple(res.shape) == (0,) and tuple(sv.shape) == (0,) and int(rank) == 2
    x, res, rank, sv = LA.lstsq(a, b, driver="gels")
    _close(res, [0.3])
    assert tuple(rank.shape) == (0,) and rank.dtype == gpugrad.int64


def test_lstsq_minimum_norm_and_batches(device):
    x = LA.lstsq(tensor(np.ones((3, 2)), device), tensor([[2.0], [2.0], [2.0]], device)).solution
    _close(x, [[1.0], [1.0]])                          # rank 1: the minimum-norm solution
    a, b = _rand((2, 5, 3)), _rand((2, 5, 2), 1)
    sol = LA.lstsq(tensor(a, device), tensor(b, device)).solution
    _close(sol, np.linalg.pinv(a) @ b)
    ta = tensor(a, device, requires_grad=True)
    tb = tensor(b, device, requires_grad=True)
    assert gradcheck(lambda p, q: tuple(LA.lstsq(p, q, driver="gelsd"))[:2], [ta, tb])


def test_cond_hand_cases(device):
    d = tensor(np.diag([1.0, 4.0]), device)
    _close(LA.cond(d), 4.0)
    _close(LA.cond(d, -2), 0.25)
    _close(LA.cond(d, 1), 4.0)
    _close(LA.cond(d, "fro"), math.sqrt(17) * math.sqrt(1 + 1 / 16))
    _close(LA.cond(tensor(np.zeros((2, 3, 3)), device), 1), [math.inf, math.inf])
    # rank 1, but LAPACK's smallest singular value is ~7e-17, not 0: PyTorch returns the ratio
    # (4.16e16), as gpugrad does; a hand-written inf held only on older LAPACK builds
    assert float(to_numpy(LA.cond(tensor(np.ones((4, 2)), device)))) > 1e15


# -- triangular solves and LU -------------------------------------------------------------------
def test_solve_triangular_hand_case_and_unread_triangle(device):
    a = tensor([[2.0, 99.0], [1.0, 4.0]], device)      # lower: [[2, 0], [1, 4]]
    b = tensor([[2.0], [9.0]], device)
    _close(LA.solve_triangular(a, b, upper=False), [[1.0], [2.0]])
    _close(LA.solve_triangular(a, b, upper=False, unitriangular=True), [[2.0], [7.0]])
    _close(LA.solve_triangular(a.mT, b.mT, upper=True, left=False), [[1.0, 2.0]])
    x = LA.solve_triangular(tensor([[0.0, 1.0], [0.0, 1.0]], device), tensor([[1.0], [1.0]],
                                                                               device), upper=True)
    assert np.isinf(to_numpy(x)).any() or np.isnan(to_numpy(x)).any()   # no error, as PyTorch


def test_solve_triangular_broadcasts_batches(device):
    a = np.triu(_rand((2, 1, 3, 3))) + 3 * np.eye(3)
    b = _rand((4, 3, 2), 1)
    x = LA.solve_triangular(tensor(a, device), tensor(b, device), upper=True)
    assert tuple(x.shape) == (2, 4, 3, 2)
    _close(tensor(a, device) @ x, np.broadcast_to(b, (2, 4, 3, 2)))


def test_lu_factor_hand_case_with_one_based_pivots(device):
    lu, piv = LA.lu_factor(tensor([[1.0, 2.0], [3.0, 4.0]], device))
    _close(lu, [[3.0, 4.0], [1 / 3, 2 / 3]])
    assert piv.dtype == gpugrad.int32 and to_numpy(piv).tolist() == [2, 2]
    p, low, up = LA.lu(tensor([[1.0, 2.0], [3.0, 4.0]], device))
    _close(p, [[0.0, 1.0], [1.0, 0.0]])
    _close(low, [[1.0, 0.0], [1 / 3, 1.0]])
    _close(up, [[3.0, 4.0], [0.0, 2 / 3]])


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 3), (3, 5)])
def test_lu_reconstructs(shape, device):
    a = _rand(shape)
    p, low, up = LA.lu(tensor(a, device))
    _close(p @ low @ up, a)
    k = min(shape[-2:])
    assert tuple(low.shape[-2:]) == (shape[-2], k) and tuple(up.shape[-2:]) == (k, shape[-1])
    assert (np.abs(to_numpy(low)) <= 1 + 1e-12).all()   # partial pivoting
    pp, ll, uu = legacy.lu_unpack(*LA.lu_factor(tensor(a, device)))
    _close(pp, to_numpy(p))
    _close(ll, to_numpy(low))
    _close(uu, to_numpy(up))


def test_lu_factor_reports_zero_pivots(device):
    z = tensor(np.zeros((3, 3)), device)
    lu, piv, info = LA.lu_factor_ex(z)
    assert int(info) == 1 and to_numpy(piv).tolist() == [1, 2, 3]
    with pytest.raises(RuntimeError) as e:
        LA.lu_factor(z)
    assert str(e.value) == (
        "torch.linalg.lu_factor: U[1,1] is zero and using it on lu_solve would result in a "
        "division by zero. If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    with pytest.raises(RuntimeError, match=r"^torch\.linalg\.lu_factor: \(Batch element 0\): "
                                           r"U\[2,2\] is zero"):
        LA.lu_factor(tensor(np.ones((2, 3, 3)), device))
    with pytest.raises(RuntimeError, match=r"^torch\.linalg\.lu_factor_ex: U\[1,1\]"):
        LA.lu_factor_ex(z, check_errors=True)
    _, _, up = LA.lu(z)                                # lu itself does not raise
    _close(up, np.zeros((3, 3)))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_matches_solve(left, adjoint, device):
    a = _rand((2, 3, 3)) + 3 * np.eye(3)
    b = _rand((2, 3, 4) if left else (2, 4, 3), 1)
    x = LA.lu_solve(*LA.lu_factor(tensor(a, device)), tensor(b, device), left=left,
                    adjoint=adjoint)
    op = np.swapaxes(a, -1, -2) if adjoint else a
    want = np.linalg.solve(op, b) if left else np.swapaxes(
        np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
    _close(x, want)


def test_lu_gradients_wide_and_tall(device):
    for shape in ((3, 5), (5, 3)):
        a = tensor(_rand(shape, 7), device, requires_grad=True)
        assert gradcheck(lambda x: tuple(LA.lu(x))[1:], [a])
        assert gradgradcheck(lambda x: LA.lu_factor(x).LU, [a])


# -- the _ex variants ---------------------------------------------------------------------------
def test_cholesky_ex_info_and_errors(device):
    a = tensor(np.stack([4 * np.eye(2), -np.eye(2)]), device)
    low, info = LA.cholesky_ex(a)
    assert to_numpy(info).tolist() == [0, 1] and info.dtype == gpugrad.int32
    _close(low[0], 2 * np.eye(2))
    with pytest.raises(LA.LinAlgError) as e:
        LA.cholesky_ex(a, check_errors=True)
    assert str(e.value) == (
        "linalg.cholesky_ex: (Batch element 1): The factorization could not be completed because "
        "the input is not positive-definite (the leading minor of order 1 is not "
        "positive-definite).")
    _close(LA.cholesky_ex(tensor(4 * np.eye(2), device), upper=True).L, 2 * np.eye(2))


def test_inv_ex_and_solve_ex(device):
    a = tensor(np.stack([np.zeros((2, 2)), 2 * np.eye(2)]), device)
    inverse, info = LA.inv_ex(a)
    assert to_numpy(info).tolist() == [1, 0]
    assert np.isnan(to_numpy(inverse[0])).all()
    _close(inverse[1], 0.5 * np.eye(2))
    with pytest.raises(LA.LinAlgError) as e:
        LA.inv_ex(a, check_errors=True)
    assert str(e.value) == ("linalg.inv_ex: (Batch element 0): The diagonal element 1 is zero, "
                            "the inversion could not be completed because the input matrix is "
                            "singular.")
    x, info = LA.solve_ex(a, tensor([1.0, 1.0], device))
    assert to_numpy(info).tolist() == [1, 0]
    _close(x[1], [0.5, 0.5])
    assert np.isnan(to_numpy(x[0])).all()
    with pytest.raises(LA.LinAlgError, match=r"^torch\.linalg\.solve_ex: \(Batch element 0\): The "
                                             r"solver failed because the input matrix is "
                                             r"singular\.$"):
        LA.solve_ex(a, tensor([1.0, 1.0], device), check_errors=True)


# -- compositions -------------------------------------------------------------------------------
def test_householder_product_rebuilds_q_from_geqrf_output(device):
    a = _rand((5, 3))
    h, tau = np.linalg.qr(a, mode="raw")      # LAPACK's geqrf: reflectors below the diagonal
    q = LA.householder_product(tensor(np.ascontiguousarray(h.T), device), tensor(tau, device))
    _close(q, np.linalg.qr(a)[0])
    ta = tensor(_rand((2, 4, 3), 1), device, requires_grad=True)
    tt = tensor(_rand((2, 2), 2), device, requires_grad=True)
    assert gradcheck(LA.householder_product, [ta, tt])


def test_tensorinv_tensorsolve_and_vander(device):
    a = _rand((4, 6, 8, 3)) + 0
    inv = LA.tensorinv(tensor(a, device), ind=2)
    assert tuple(inv.shape) == (8, 3, 4, 6)
    _close(gpugrad.tensordot(tensor(a, device), inv, 2), np.eye(24).reshape(4, 6, 4, 6),
           atol=1e-8)
    m = _rand((2, 3, 6)) + np.eye(6).reshape(2, 3, 6) * 3
    b = _rand((2, 3), 1)
    x = LA.tensorsolve(tensor(m, device), tensor(b, device))
    _close(gpugrad.tensordot(tensor(m, device), x, 1), b)
    _close(LA.vander(tensor([1.0, 2.0, 3.0], device)), [[1, 1, 1], [1, 2, 4], [1, 3, 9]])
    v = LA.vander(tensor([[1, 2], [3, 4]], device, gpugrad.int64), N=3)
    assert v.dtype == gpugrad.int64
    assert to_numpy(v).tolist() == [[[1, 1, 1], [1, 2, 4]], [[1, 3, 9], [1, 4, 16]]]


def test_eig_is_not_available_without_complex_dtypes(device):
    for fn in (LA.eig, LA.eigvals):
        with pytest.raises(NotImplementedError, match="complex"):
            fn(tensor(np.eye(2), device))


# -- legacy names -------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:gpugrad.(lu|triangular_solve) is deprecated:UserWarning")
def test_legacy_functions(device):
    a = _rand((4, 3))
    legacy._warned.discard("qr")
    with pytest.warns(UserWarning, match="gpugrad.qr is deprecated"):
        q, r = legacy.qr(tensor(a, device), some=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # once per process, as PyTorch
        assert tuple(q.shape) == (4, 4) and type(legacy.qr(tensor(a, device))).__name__ == "qr"
    u, s, v = legacy.svd(tensor(a, device))
    _close((u * s.unsqueeze(-2)) @ v.mT, a)
    assert tuple(v.shape) == (3, 3)
    u, s, v = legacy.svd(tensor(a, device), compute_uv=False)
    assert tuple(u.shape) == (4, 4) and tuple(v.shape) == (3, 3) and not to_numpy(u).any()
    m = _rand((3, 3)) + 3 * np.eye(3)
    lu, piv, info = legacy.lu(tensor(m, device), get_infos=True)
    assert int(info) == 0
    b = _rand((3, 2), 1)
    _close(legacy.lu_solve(tensor(b, device), lu, piv), np.linalg.solve(m, b))
    x, coef = legacy.triangular_solve(tensor(b, device), tensor(m, device), transpose=True)
    _close(x, np.linalg.solve(np.triu(m).T, b))
    _close(coef, m)
    low = np.tril(m)
    _close(legacy.cholesky_solve(tensor(b, device), tensor(low, device)),
           np.linalg.solve(low @ low.T, b))
    _close(legacy.cholesky_inverse(tensor(low.T, device), upper=True), np.linalg.inv(low @ low.T))
    for fn in (legacy.lstsq, legacy.matrix_rank):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            fn(tensor(m, device), tensor(m, device))


# -- errors -------------------------------------------------------------------------------------
def _int(device):
    return tensor(np.ones((3, 3)), device, gpugrad.int64)


ERRORS = [
    (lambda d: LA.qr(tensor(np.ones(3), d)), RuntimeError,
     "linalg.qr: The input tensor A must have at least 2 dimensions."),
    (lambda d: LA.qr(_int(d)), RuntimeError,
     "linalg.qr: Expected a floating point or complex tensor as input. Got Long"),
    (lambda d: LA.qr(tensor(np.ones((2, 2)), d), mode="x"), RuntimeError,
     "qr received unrecognized mode 'x' but expected one of 'reduced' (default), 'r', or "
     "'complete'"),
    (lambda d: LA.eigh(tensor(np.ones((4, 3)), d)), RuntimeError,
     "linalg.eigh: A must be batches of square matrices, but they are 4 by 3 matrices"),
    (lambda d: LA.eigvalsh(tensor(np.ones((3, 3)), d), UPLO="x"), RuntimeError,
     "Expected UPLO argument to be 'L' or 'U', but got x"),
    (lambda d: LA.eigh(_int(d)), NotImplementedError,
     "\"linalg_eigh_cpu\" not implemented for 'Long'"),
    (lambda d: LA.svd(tensor(np.ones(3), d)), RuntimeError,
     "linalg.svd: The input tensor A must have at least 2 dimensions."),
    (lambda d: LA.pinv(_int(d)), RuntimeError,
     "linalg.pinv(Long[3, 3]): expected a tensor with 2 or more dimensions of float, double, "
     "cfloat or cdouble types"),
    (lambda d: LA.matrix_rank(tensor(np.ones(3), d)), RuntimeError,
     "torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions."),
    (lambda d: LA.lstsq(tensor(np.ones((4, 3)), d), tensor(np.ones((3, 2)), d)), RuntimeError,
     "torch.linalg.lstsq: input.size(-2) should match other.size(-2)"),
    (lambda d: LA.lstsq(tensor(np.ones((4, 3)), d), tensor(np.ones((4, 2)), d), driver="x"),
     RuntimeError,
     "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)"),
    (lambda d: LA.lstsq(tensor(np.ones((4, 3)), d), tensor(np.ones((4, 2)), d,
                                                            gpugrad.float32)), RuntimeError,
     "torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
     "dtype Double and other's dtype Float"),
    (lambda d: LA.solve_triangular(tensor(np.eye(3), d), tensor(np.ones((4, 3)), d), upper=True),
     RuntimeError, "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
                   "AX = B (3x3 and 4x3)"),
    (lambda d: LA.solve_triangular(tensor(np.eye(3), d), tensor(np.ones((3, 2)), d), upper=True,
                                   left=False), RuntimeError,
     "linalg.solve_triangular: Incompatible shapes of A and B for the equation XA = B (3x3 and "
     "3x2)"),
    (lambda d: LA.solve_triangular(tensor(np.eye(3), d), tensor(np.ones(3), d), upper=True),
     RuntimeError, "linalg.solve_triangular: The input tensor B must have at least 2 dimensions."),
    (lambda d: LA.lu_factor(tensor(np.ones(3), d)), RuntimeError,
     "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: [3] instead"),
    (lambda d: LA.lu_solve(*LA.lu_factor(tensor(np.eye(3), d)), tensor(np.ones(3), d)),
     RuntimeError, "linalg.lu_solve: The input tensor B must have at least 2 dimensions."),
    (lambda d: LA.lu_solve(*LA.lu_factor(tensor(np.eye(3), d)), tensor(np.ones((3, 2)), d),
                           left=False), RuntimeError,
     "linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B (3x3 and 3x2)"),
    (lambda d: LA.cond(tensor(np.ones((3, 3)), d), 3), RuntimeError,
     "linalg.cond got an invalid norm type: 3"),
    (lambda d: LA.cond(tensor(np.ones((4, 3)), d), "fro"), RuntimeError,
     "linalg.cond(ord=fro): A must be batches of square matrices, but they are 4 by 3 matrices"),
    (lambda d: LA.householder_product(tensor(np.ones((3, 4)), d), tensor(np.ones(2), d)),
     RuntimeError, "torch.linalg.householder_product: input.shape[-2] must be greater than or "
                   "equal to input.shape[-1]"),
    (lambda d: LA.householder_product(tensor(np.ones((4, 3)), d), tensor(np.ones(4), d)),
     RuntimeError, "torch.linalg.householder_product: input.shape[-1] must be greater than or "
                   "equal to tau.shape[-1]"),
    (lambda d: LA.tensorinv(tensor(np.ones((4, 6, 8, 2)), d), ind=2), RuntimeError,
     "Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
     "but got 16 != 24"),
    (lambda d: LA.tensorinv(tensor(np.ones((4, 4)), d), ind=0), RuntimeError,
     "Expected a strictly positive integer for 'ind', but got 0"),
    (lambda d: LA.tensorsolve(tensor(np.ones((2, 3, 5)), d), tensor(np.ones((2, 3)), d)),
     RuntimeError, "Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                   "prod(self.shape[:other.ndim]), but got 5 != 6"),
    (lambda d: LA.vander(tensor([1.0, 2.0], d), N=1), RuntimeError, "N must be greater than 1."),
    (lambda d: legacy.cholesky_inverse(tensor(np.ones((4, 3)), d)), RuntimeError,
     "cholesky_inverse: A must be batches of square matrices, but they are 4 by 3 matrices"),
]


@pytest.mark.parametrize("call, kind, message", ERRORS, ids=[m[:40] for _, _, m in ERRORS])
def test_error_messages(call, kind, message, device):
    with pytest.raises(kind) as e:
        call(device)
    assert str(e.value) == message


# -- PyTorch as an oracle ------------------------------------------------------------------------
def _sym(x):
    return x + x.mT


def _oracle_cases(t):
    """name -> (function of one module's tensors, input shapes); outputs are gauge-fixed or
    gauge-invariant, so both libraries must agree on values and gradients."""
    def qr_fixed(a):
        q, r = t.linalg.qr(a)
        d = r.diagonal(dim1=-2, dim2=-1).sign()
        return q * d.unsqueeze(-2), r * d.unsqueeze(-1)

    def eigh_inv(a):
        w, v = t.linalg.eigh(_sym(a))
        return w, v[..., :1] @ v[..., :1].mT

    def svd_inv(a):
        u, s, vh = t.linalg.svd(a, full_matrices=False)
        return s, u @ vh

    def lu_parts(a):
        _, low, up = t.linalg.lu(a)
        return low, up

    def lu_solve(a, b):
        return t.linalg.lu_solve(*t.linalg.lu_factor(a), b, adjoint=True)

    return {
        "qr": (qr_fixed, [(2, 4, 3)]),
        "qr_wide": (qr_fixed, [(3, 5)]),
        "eigh": (eigh_inv, [(2, 3, 3)]),
        "svd": (svd_inv, [(2, 4, 3)]),
        "pinv": (t.linalg.pinv, [(3, 5)]),
        "lstsq": (lambda a, b: t.linalg.lstsq(a, b).solution, [(5, 3), (5, 2)]),
        "solve_triangular": (lambda a, b: t.linalg.solve_triangular(a, b, upper=False,
                                                                    unitriangular=True),
                             [(3, 3), (2, 3, 2)]),
        "lu": (lu_parts, [(4, 3)]),
        "lu_factor": (lambda a: t.linalg.lu_factor(a).LU, [(2, 3, 3)]),
        "lu_solve": (lu_solve, [(3, 3), (3, 2)]),
        "cond": (t.linalg.cond, [(4, 3)]),
        "householder_product": (t.linalg.householder_product, [(4, 3), (2,)]),
        "vander": (lambda x: t.linalg.vander(x), [(2, 3)]),
    }


@pytest.mark.parametrize("name", sorted(_oracle_cases(gpugrad)))
def test_against_torch(name):
    torch = pytest.importorskip("torch")
    fg, shapes = _oracle_cases(gpugrad)[name]
    ft, _ = _oracle_cases(torch)[name]
    arrays = [_rand(s, i + 10) for i, s in enumerate(shapes)]
    xg = [gpugrad.tensor(a, dtype=gpugrad.float64, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    yg, yt = fg(*xg), ft(*xt)
    yg, yt = (yg if isinstance(yg, tuple) else (yg,)), (yt if isinstance(yt, tuple) else (yt,))
    weights = [_rand(tuple(y.shape), 20 + i) for i, y in enumerate(yt)]
    for a, b in zip(yg, yt):
        np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-8, atol=1e-10)
    gg = gpugrad.autograd.grad(sum((y * gpugrad.tensor(w)).sum() for y, w in zip(yg, weights)),
                               xg)
    gt = torch.autograd.grad(sum((y * torch.tensor(w)).sum() for y, w in zip(yt, weights)), xt)
    for a, b in zip(gg, gt):
        np.testing.assert_allclose(to_numpy(a), b.numpy(), rtol=1e-7, atol=1e-9)
