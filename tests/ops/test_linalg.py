"""Matrix products and gpugrad.linalg's functions (inv, det, norms, cross ...), tensordot, cdist,
matrix_exp and the legacy linear algebra names: exact values, gradients and PyTorch's errors.
Decompositions and solvers: test_linalg_decompositions.py."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.ops.linalg import products
from tests.ops._errors import raises
from tests.ops._tensors import idx, t


# -- linear algebra ------------------------------------------------------------------------------
def test_linalg_exact_values(device):
    a = t([[2.0, 1.0], [1.0, 3.0]], device)
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.inv(a)), [[0.6, -0.2], [-0.2, 0.4]],
                               rtol=1e-14)
    assert gpugrad.linalg.det(a).item() == pytest.approx(5.0, rel=1e-14)
    sign, logabs = gpugrad.linalg.slogdet(t([[1.0, 2.0], [3.0, 4.0]], device))
    assert sign.item() == -1.0 and logabs.item() == pytest.approx(math.log(2.0), rel=1e-14)
    assert not sign.requires_grad and sign.grad_fn is None
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.solve(a, t([3.0, 4.0], device))),
                               [1.0, 1.0], rtol=1e-14)
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.solve(a, t([[3.0, 1.0]], device),
                                                             left=False)),
                               [[1.6, -0.2]], rtol=1e-14)
    low = gpugrad.linalg.cholesky(t([[4.0, 2.0], [2.0, 5.0]], device))
    assert to_numpy(low).tolist() == [[2.0, 0.0], [1.0, 2.0]]
    assert to_numpy(gpugrad.linalg.cholesky(t([[4.0, 2.0], [2.0, 5.0]], device),
                                            upper=True)).tolist() == [[2.0, 1.0], [0.0, 2.0]]
    e = t(np.eye(3), device)
    assert to_numpy(gpugrad.linalg.cross(e[0], e[1])).tolist() == [0.0, 0.0, 1.0]
    assert to_numpy(e.cross(e.roll(1, 0), dim=1)).tolist() == [[0, -1, 0], [0, 0, -1],
                                                               [-1, 0, 0]]
    k = gpugrad.kron(t([[1.0, 2.0]], device), t([[1.0], [10.0]], device))
    assert to_numpy(k).tolist() == [[1.0, 2.0], [10.0, 20.0]]
    m = t([[1.0, 1.0], [0.0, 1.0]], device)
    assert to_numpy(gpugrad.linalg.matrix_power(m, 5)).tolist() == [[1.0, 5.0], [0.0, 1.0]]
    assert to_numpy(m.matrix_power(-2)).tolist() == [[1.0, -2.0], [0.0, 1.0]]
    assert to_numpy(gpugrad.linalg.matrix_power(m, 0)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.svdvals(t([[3.0, 0.0], [0.0, -4.0]],
                                                                 device))), [4.0, 3.0])


def test_norms_exact(device):
    a = t([[1.0, -2.0], [3.0, 4.0]], device)
    la = gpugrad.linalg
    assert la.vector_norm(t([3.0, -4.0], device)).item() == 5.0
    assert la.vector_norm(a, 1).item() == 10.0 and la.vector_norm(a, math.inf).item() == 4.0
    assert la.vector_norm(a, -math.inf).item() == 1.0
    assert to_numpy(la.vector_norm(a, -math.inf, dim=1, keepdim=True)).tolist() == [[1.0],
                                                                                  [3.0]]
    assert la.matrix_norm(a, 1).item() == 6.0 and la.matrix_norm(a, -1).item() == 4.0
    assert la.matrix_norm(a, math.inf).item() == 7.0 and la.matrix_norm(a, -math.inf).item() == 3.0
    assert la.norm(a).item() == pytest.approx(math.sqrt(30.0), rel=1e-15)
    assert la.norm(a, "fro").item() == pytest.approx(math.sqrt(30.0), rel=1e-15)
    s = np.linalg.svd(to_numpy(a), compute_uv=False)
    assert la.norm(a, 2).item() == pytest.approx(s[0], rel=1e-14)
    assert la.matrix_norm(a, "nuc").item() == pytest.approx(s.sum(), rel=1e-14)
    assert la.norm(a, 1, dim=0).tolist() == [4.0, 6.0]


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix(device):
    a = t([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], device, True)
    d = gpugrad.linalg.det(a)
    assert abs(d.item()) < 1e-12
    d.backward()
    np.testing.assert_allclose(to_numpy(a.grad), [[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0],
                                                  [0.0, 0.0, 0.0]], atol=1e-12)
    with pytest.raises(NotImplementedError, match="double backward through det of a singular"):
        gpugrad.autograd.grad(gpugrad.linalg.det(a), a, create_graph=True)


def test_linalg_errors_are_pytorchs(device):
    la = gpugrad.linalg
    singular = t([[1.0, 2.0], [2.0, 4.0]], device)
    batch = gpugrad.stack([t(np.eye(2), device), singular])
    cases = [
        (la.LinAlgError, "linalg.inv: The diagonal element 2 is zero, the inversion could not be "
                         "completed because the input matrix is singular.",
         lambda: la.inv(singular)),
        (la.LinAlgError, "linalg.inv: (Batch element 1): The diagonal element 2 is zero",
         lambda: gpugrad.inverse(batch)),
        (RuntimeError, "linalg.inv: A must be batches of square matrices, but they are 2 by 3 "
                       "matrices", lambda: la.inv(t(np.ones((2, 3)), device))),
        (RuntimeError, "linalg.inv: The input tensor A must have at least 2 dimensions.",
         lambda: la.inv(t(np.ones(3), device))),
        (RuntimeError, "linalg.det: Expected a floating point or complex tensor as input. Got "
                       "Long", lambda: la.det(idx(np.ones((2, 2), int), device))),
        (la.LinAlgError, "torch.linalg.solve: (Batch element 1): The solver failed because the "
                         "input matrix is singular.",
         lambda: la.solve(batch, t(np.ones((2, 2)), device))),
        (RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                       "(2x2 and 3x1)", lambda: la.solve(singular, t(np.ones(3), device))),
        (RuntimeError, "linalg.solve: Expected A and B to have the same dtype, but found A of "
                       "type Float and B of type Double instead",
         lambda: la.solve(singular.float(), t(np.ones(2), device))),
        (la.LinAlgError, "linalg.cholesky: The factorization could not be completed because the "
                         "input is not positive-definite (the leading minor of order 2 is not "
                         "positive-definite).", lambda: la.cholesky(singular)),
        (la.LinAlgError, "linalg.cholesky: (Batch element 1): The factorization could not be "
                         "completed because the input is not positive-definite (the leading "
                         "minor of order 1 is not positive-definite).",
         lambda: la.cholesky(gpugrad.stack([t(np.eye(2), device), -t(np.eye(2), device)]))),
        (RuntimeError, "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
         lambda: la.cross(t(np.ones(2), device), t(np.ones(2), device))),
        (RuntimeError, "linalg.cross: inputs must have the same number of dimensions.",
         lambda: la.cross(t(np.ones(3), device), t(np.ones((2, 3)), device))),
        (RuntimeError, "linalg.matrix_norm: Order 3 not supported.",
         lambda: la.matrix_norm(singular, 3)),
        (RuntimeError, "linalg.matrix_norm: dims must be different. Got (0, 0)",
         lambda: la.norm(singular, 1, dim=(0, 0))),
        (RuntimeError, "linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                       "2D. Got 3D.", lambda: la.norm(batch, 2)),
        (RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as "
                       "input. Got Long", lambda: la.vector_norm(idx([1, 2], device))),
        (RuntimeError, "linalg.matrix_power: A must be batches of square matrices, but they are "
                       "2 by 3 matrices",
         lambda: gpugrad.matrix_power(t(np.ones((2, 3)), device), 2)),
    ]
    for kind, message, call in cases:
        raises(kind, message, call)
    assert issubclass(la.LinAlgError, RuntimeError)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        gpugrad.cross(t(np.ones((3, 2)), device), t(np.ones((3, 2)), device))


def test_linalg_errors_where_the_array_module_does_not_raise():
    # CuPy does not raise on a singular or indefinite matrix: inv returns non-finite values,
    # cholesky leaves the failing pivot on the diagonal. The same errors must come out.
    from types import SimpleNamespace

    from gpugrad.ops.linalg import decompositions, solvers
    quiet = SimpleNamespace(
        isfinite=np.isfinite, diagonal=np.diagonal, argmax=np.argmax, abs=np.abs, zeros=np.zeros,
        linalg=SimpleNamespace(inv=lambda a: np.full(a.shape, np.inf),
                               cholesky=lambda a: np.array([[1.0, 0.0], [2.0, 0.0]])))
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(solvers.LinAlgError, match="The diagonal element 2 is zero"):
        solvers._inverse(quiet, singular)
    with pytest.raises(solvers.LinAlgError, match="leading minor of order 2 is not"):
        decompositions._cholesky(quiet, singular)
    fine = SimpleNamespace(**{**vars(quiet), "linalg": np.linalg})
    np.testing.assert_allclose(solvers._inverse(fine, np.eye(2) * 2), np.eye(2) / 2)
    np.testing.assert_allclose(decompositions._cholesky(fine, np.eye(2) * 4), np.eye(2) * 2)


def test_linalg_is_an_importable_module_with_the_compositions(device):
    import gpugrad.linalg as la
    from gpugrad.linalg import inv, solve
    assert la is gpugrad.linalg and inv is la.inv and solve is la.solve
    assert la.matmul is gpugrad.matmul
    a = t([[1.0, 2.0], [3.0, 4.0]], device)
    assert to_numpy(la.multi_dot([a, a, t([1.0, 0.0], device)])).tolist() == [7.0, 15.0]
    assert to_numpy(la.vecdot(a, a, dim=0)).tolist() == [10.0, 20.0]
    assert to_numpy(la.diagonal(a, offset=1)).tolist() == [2.0]
    assert to_numpy(gpugrad.addmv(t([1.0, 1.0], device), a, t([1.0, 1.0], device),
                                  alpha=2)).tolist() == [7.0, 15.0]
    assert gpugrad.vdot(t([1.0, 2.0], device), t([3.0, 4.0], device)).item() == 11.0
    raises(RuntimeError, "multi_dot(): expected at least 2 tensors but got 1",
           lambda: la.multi_dot([a]))


# -- shapes and stacking ------------------------------------------------------------------------
def test_tensordot_matches_numpy(device, rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 5))
    ta, tb = tensor(a, device), tensor(b, device)
    got = gpugrad.tensordot(ta, tb, dims=([1, 2], [1, 0]))
    np.testing.assert_allclose(to_numpy(got), np.tensordot(a, b, axes=([1, 2], [1, 0])))
    c = rng.standard_normal((3, 4, 6))
    np.testing.assert_allclose(to_numpy(gpugrad.tensordot(ta, tensor(c, device))),
                               np.tensordot(a, c, axes=2))
    assert gpugrad.tensordot(ta, tb, dims=0).shape == (2, 3, 4, 4, 3, 5)


def test_tensordot_errors():
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has "
                                           "size 3 in dim 1 and second has size 4 in dim 0"):
        gpugrad.tensordot(gpugrad.zeros(2, 3), gpugrad.zeros(4, 5), dims=([1], [0]))


# -- numerics -----------------------------------------------------------------------------------
def test_cdist_values_and_zero_distance_gradient(device, rng):
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    diff = a[:, :, None, :] - b[:, None, :, :]
    for p, ref in [(2.0, np.sqrt((diff ** 2).sum(-1))), (1.0, np.abs(diff).sum(-1)),
                   (math.inf, np.abs(diff).max(-1)), (3.0, (np.abs(diff) ** 3).sum(-1) ** (1 / 3))]:
        got = gpugrad.cdist(tensor(a, device), tensor(b, device), p=p)
        np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-12)
    x = tensor([[1.0, 2.0], [0.0, 0.0]], device, requires_grad=True)
    y = tensor([[1.0, 2.0]], device)
    gpugrad.cdist(x, y).sum().backward()   # row 0 is at distance 0: its gradient is 0
    np.testing.assert_allclose(to_numpy(x.grad), [[0, 0], [-1 / 5 ** 0.5, -2 / 5 ** 0.5]])


def test_cdist_errors():
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: 1D"):
        gpugrad.cdist(gpugrad.zeros(2), gpugrad.zeros(2, 2))
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns. "
                                           "X1: 3 X2: 4"):
        gpugrad.cdist(gpugrad.zeros(2, 3), gpugrad.zeros(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        gpugrad.cdist(gpugrad.zeros(2, 3), gpugrad.zeros(2, 3), p=-1)


def test_legacy_linalg(device, rng):
    m = rng.standard_normal((3, 3))
    spd = m @ m.T + 3 * np.eye(3)
    low = gpugrad.cholesky(tensor(spd, device))
    np.testing.assert_allclose(to_numpy(low), np.linalg.cholesky(spd), rtol=1e-12)
    up = tensor(spd, device).cholesky(upper=True)
    np.testing.assert_allclose(to_numpy(up), np.linalg.cholesky(spd).T, rtol=1e-12)
    a, b = tensor(m, device), tensor(spd, device)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        got = gpugrad.chain_matmul(a, b, a)
    np.testing.assert_allclose(to_numpy(got), m @ spd @ m, rtol=1e-12)


def test_matrix_exp(device, rng):
    # exp of a nilpotent matrix: I + N + N^2 / 2
    n = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(to_numpy(gpugrad.matrix_exp(tensor(n, device))),
                               np.eye(3) + n + n @ n / 2, rtol=1e-14)
    # a symmetric matrix with a large norm (scaling and squaring): V exp(w) V^T
    s = rng.standard_normal((4, 4)) * 3
    s = s + s.T
    w, v = np.linalg.eigh(s)
    np.testing.assert_allclose(to_numpy(tensor(s, device).matrix_exp()),
                               (v * np.exp(w)) @ v.T, rtol=1e-11)
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.matrix_exp(tensor(np.zeros((2, 2)),
                                                                         device))), np.eye(2))


NAN, INF = float("nan"), float("inf")


def test_products_and_distances(device, rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    ta, tb = tensor(a, device), tensor(b, device)
    np.testing.assert_allclose(to_numpy(gpugrad.inner(ta, tb)), np.inner(a, b))
    np.testing.assert_allclose(to_numpy(gpugrad.inner(ta, tensor(2.0, device))), 2 * a)
    with pytest.raises(RuntimeError, match=r"the last dimension must match on both input tensors "
                                           r"but got shapes \[2, 3\] and \[2\]"):
        gpugrad.inner(ta, tensor([1.0, 2.0], device))
    assert gpugrad.dist(tensor([0.0, 3.0], device), tensor([4.0, 0.0], device)).item() == 5.0
    assert tensor([1.0, -2.0], device).dist(tensor([0.0, 0.0], device), p=1).item() == 3.0
    np.testing.assert_array_equal(to_numpy(gpugrad.diagflat(tensor([[1.0, 2.0]], device), 1)),
                                  np.diagflat([1.0, 2.0], 1))
    np.testing.assert_array_equal(to_numpy(gpugrad.msort(ta)), np.sort(a, axis=0))
    np.testing.assert_array_equal(to_numpy(gpugrad.ger(ta[0], tb[0])), np.outer(a[0], b[0]))
    v = rng.standard_normal(3)
    np.testing.assert_allclose(to_numpy(gpugrad.vander(tensor(v, device), 4)), np.vander(v, 4))
    np.testing.assert_allclose(to_numpy(gpugrad.vander(tensor(v, device), increasing=True)),
                               np.vander(v, increasing=True))
    with pytest.raises(RuntimeError, match="^x must be a one-dimensional tensor.$"):
        gpugrad.vander(ta)


def test_addbmm_addr_and_in_place_products(device, rng):
    m, b1, b2 = rng.standard_normal((2, 5)), rng.standard_normal((3, 2, 4)), \
        rng.standard_normal((3, 4, 5))
    got = gpugrad.addbmm(tensor(m, device), tensor(b1, device), tensor(b2, device), beta=0.5,
                         alpha=2.0)
    np.testing.assert_allclose(to_numpy(got), 0.5 * m + 2.0 * np.einsum("bij,bjk->ik", b1, b2))
    v1, v2 = rng.standard_normal(2), rng.standard_normal(5)
    t = tensor(m, device)
    assert t.addr_(tensor(v1, device), tensor(v2, device), alpha=3.0) is t
    np.testing.assert_allclose(to_numpy(t), m + 3.0 * np.outer(v1, v2))
    nan_in = tensor(np.full((2, 5), NAN), device)
    clean = gpugrad.addr(nan_in, tensor(v1, device), tensor(v2, device), beta=0)
    np.testing.assert_allclose(to_numpy(clean), np.outer(v1, v2))   # beta=0 ignores nan
    with pytest.raises(RuntimeError, match="^addr: Expected 1-D argument vec1, but got 2-D$"):
        gpugrad.addr(nan_in, tensor(m, device), tensor(v2, device))
    s = tensor(m, device)
    s.addmm_(tensor(b1[0], device), tensor(b2[0], device), beta=2.0)
    np.testing.assert_allclose(to_numpy(s), 2.0 * m + b1[0] @ b2[0])
    u = tensor(m[0], device)
    u.addmv_(tensor(b2[0].T, device), tensor(b1[0, 0], device))
    np.testing.assert_allclose(to_numpy(u), m[0] + b2[0].T @ b1[0, 0])


def test_bmm_checks_its_shapes():
    a, b = gpugrad.ones(2, 3, 4), gpugrad.ones(2, 4, 5)
    assert gpugrad.bmm(a, b).shape == (2, 3, 5)
    with pytest.raises(RuntimeError, match="^batch1 must be a 3D tensor$"):
        gpugrad.bmm(gpugrad.ones(3, 4), b)
    with pytest.raises(RuntimeError, match="^batch2 must be a 3D tensor$"):
        gpugrad.bmm(a, gpugrad.ones(4, 5))
    with pytest.raises(RuntimeError, match=r"^Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[2, 4\] but got: \[2, 5\]\.$"):
        gpugrad.bmm(a, gpugrad.ones(2, 5, 4))


def test_einsum_of_three_contracts_the_cheap_pair_first(device, monkeypatch):
    # left to right, ij,jk would build a 64 x 64 intermediate; numpy's greedy plan contracts
    # jk,kl (2 x 2) first, and the backward runs through the same small products
    shapes, bmm = [], products.bmm

    def spy(a, b):
        y = bmm(a, b)
        shapes.append(tuple(y.shape))
        return y
    monkeypatch.setattr(products, "bmm", spy)
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(s) for s in ((64, 2), (2, 64), (64, 2)))
    ts = [tensor(m, device, requires_grad=True) for m in (a, b, c)]
    y = gpugrad.einsum("ij,jk,kl->il", *ts)
    assert shapes and max(math.prod(s) for s in shapes) <= 64 * 2, shapes
    np.testing.assert_allclose(to_numpy(y), a @ b @ c, rtol=1e-12)
    y.sum().backward()
    g = np.ones((64, 2))
    np.testing.assert_allclose(to_numpy(ts[0].grad), g @ (b @ c).T, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(ts[2].grad), (a @ b).T @ g, rtol=1e-12)
