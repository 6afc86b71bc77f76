"""gpugrad.autograd.functional: Jacobians, Hessians and vector products against the analytic
derivatives, finite differences and (when installed) PyTorch."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.autograd import functional as AF


def t(data, device="cpu", requires_grad=False):
    return gpugrad.tensor(np.asarray(data, dtype=np.float64), device=device,
                          requires_grad=requires_grad)


def f_vec(x):            # R^3 -> R^2
    return gpugrad.stack([x[0] * x[1], gpugrad.sin(x[2]) * x[0]])


def f_vec_np(x):
    return np.array([x[0] * x[1], np.sin(x[2]) * x[0]])


def fd_jacobian(f, x, h=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


def test_jacobian_of_one_input_and_output_is_analytic(device):
    x = np.array([0.5, -1.5, 2.0])
    J = AF.jacobian(f_vec, t(x, device))
    assert J.shape == (2, 3) and not J.requires_grad
    np.testing.assert_allclose(to_numpy(J), [[x[1], x[0], 0.0],
                                             [np.sin(x[2]), 0.0, x[0] * np.cos(x[2])]],
                               rtol=1e-12)
    np.testing.assert_allclose(to_numpy(J), fd_jacobian(f_vec_np, x), rtol=1e-7, atol=1e-9)


def test_jacobian_keeps_shapes_and_tuple_nesting(device):
    a, b = t(np.ones((2, 2)), device), t([1.0, 2.0, 3.0], device)
    out = AF.jacobian(lambda a, b: (a * 2, (b ** 2).sum()), (a, b))
    (daa, dab), (dba, dbb) = out
    assert daa.shape == (2, 2, 2, 2) and dab.shape == (2, 2, 3)
    assert dba.shape == (2, 2) and dbb.shape == (3,)
    np.testing.assert_array_equal(to_numpy(daa).reshape(4, 4), 2 * np.eye(4))
    assert not to_numpy(dab).any() and not to_numpy(dba).any()   # independent: zeros
    np.testing.assert_array_equal(to_numpy(dbb), [2.0, 4.0, 6.0])


def test_jacobian_create_graph_is_differentiable(device):
    x = t([1.0, 2.0], device, requires_grad=True)
    J = AF.jacobian(lambda x: x ** 3, x, create_graph=True)
    assert J.requires_grad
    (J * gpugrad.eye(2, dtype=gpugrad.float64, device=device)).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [6.0, 12.0])   # d/dx sum 3 x^2


def test_hessian_single_and_several_inputs(device):
    x = np.array([0.3, -0.7])
    H = AF.hessian(lambda x: (x[0] ** 2 * x[1] + gpugrad.exp(x[1])), t(x, device))
    np.testing.assert_allclose(to_numpy(H), [[2 * x[1], 2 * x[0]],
                                             [2 * x[0], np.exp(x[1])]], rtol=1e-12)
    (haa, hab), (hba, hbb) = AF.hessian(lambda a, b: (a * b).sum() ** 2,
                                        (t([1.0, 2.0], device), t([3.0, 4.0], device)))
    a, b = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    np.testing.assert_allclose(to_numpy(haa), 2 * np.outer(b, b))
    np.testing.assert_allclose(to_numpy(hab), 2 * np.outer(b, a) + 2 * (a @ b) * np.eye(2))
    np.testing.assert_allclose(to_numpy(hba), to_numpy(hab).T)
    np.testing.assert_allclose(to_numpy(hbb), 2 * np.outer(a, a))


def test_vector_products_match_the_jacobian_and_hessian(device):
    x = np.array([0.5, -1.5, 2.0])
    J = to_numpy(AF.jacobian(f_vec, t(x, device)))
    u, v = np.array([0.3, -2.0]), np.array([1.0, 0.5, -1.0])
    out, g = AF.vjp(f_vec, t(x, device), t(u, device))
    np.testing.assert_allclose(to_numpy(out), f_vec_np(x), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(g), u @ J, rtol=1e-12)
    out, jv = AF.jvp(f_vec, t(x, device), t(v, device))
    np.testing.assert_allclose(to_numpy(jv), J @ v, rtol=1e-12)

    def f(x):
        return (x ** 3).sum() + x[0] * x[2]
    H = to_numpy(AF.hessian(f, t(x, device)))
    for fn in (AF.hvp, AF.vhp):
        out, hv = fn(f, t(x, device), t(v, device))
        assert out.item() == pytest.approx((x ** 3).sum() + x[0] * x[2])
        np.testing.assert_allclose(to_numpy(hv), H @ v, rtol=1e-12)


def test_scalar_defaults_and_misuse_messages():
    out, g = AF.vjp(lambda x: (x ** 2).sum(), t([1.0, 2.0]))
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    _, jv = AF.jvp(lambda x: x * 3, t(2.0))
    assert jv.item() == 3.0
    with pytest.raises(RuntimeError, match=re.escape(
            "The vector v can only be None if the user-provided function returns a single "
            "Tensor with a single element.")):
        AF.vjp(lambda x: x * 2, t([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=re.escape(
            "v has invalid size: should be gpugrad.Size([2]) but got gpugrad.Size([3]).")):
        AF.vjp(lambda x: x * 2, t([1.0, 2.0]), t([1.0, 1.0, 1.0]))
    with pytest.raises(RuntimeError, match=re.escape(
            "Output 0 of the user-provided function is independent of input 1. This is not "
            "allowed in strict mode.")):
        AF.jacobian(lambda a, b: a * 2, (t([1.0]), t([2.0])), strict=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "The output of the user-provided function is independent of input 1. This is not "
            "allowed in strict mode.")):
        AF.vjp(lambda a, b: a * 2, (t([1.0]), t([2.0])), t([1.0]), strict=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "Output 0 of the user-provided function does not require gradients. The outputs "
            "must be computed in a differentiable manner from the input when running in strict "
            "mode.")):
        AF.jvp(lambda a: a.detach(), t([1.0]), t([1.0]), strict=True)
    for hess in (lambda: AF.hessian(lambda a: a.sum(), t([1.0, 2.0]), strict=True),
                 lambda: AF.vhp(lambda a: a.sum(), t([1.0, 2.0]), t([1.0, 1.0]), strict=True)):
        with pytest.raises(RuntimeError, match=re.escape(
                "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input 0 is independent of the input.")):
            hess()
    with pytest.raises(RuntimeError, match=re.escape(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together.")):
        AF.jacobian(lambda a: a, t([1.0]), strict=True, vectorize=True)
    with pytest.raises(TypeError, match=re.escape(
            "The outputs of the user-provided function given to vjp must be either a Tensor or "
            "a tuple of Tensors but the value at index 1 has type <class 'int'>.")):
        AF.vjp(lambda a: (a, 3), t([1.0]), (t([1.0]), t([1.0])))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(lambda a: a, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="^The Tensor returned by the function given to "
                                           "hessian should contain a single element$"):
        AF.hessian(lambda x: x * 2, t([1.0, 2.0]))


def test_inputs_are_not_modified_and_results_are_detached():
    x = t([1.0, 2.0], requires_grad=True)
    J = AF.jacobian(lambda x: x * x, x)
    assert x.grad is None and J.grad_fn is None and x.is_leaf


def test_matches_pytorch():
    torch = pytest.importorskip("torch")
    x = np.array([0.5, -1.5, 2.0])

    def f(T, x):
        return T.stack([x[0] * x[1] * x[2], T.tanh(x[1]) * x[0] ** 2])

    ours = AF.jacobian(lambda x: f(gpugrad, x), t(x))
    theirs = torch.autograd.functional.jacobian(lambda x: f(torch, x), torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    ours = AF.hessian(lambda x: f(gpugrad, x).sum(), t(x))
    theirs = torch.autograd.functional.hessian(lambda x: f(torch, x).sum(), torch.tensor(x))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


# -- einsum (lives in gpugrad.ops.einsum; tested here with the other multi-operand maths) ------
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("i,j->ij", [(3,), (4,)]), ("i,i->", [(3,), (3,)]),
    ("ij->ji", [(2, 3)]), ("ij->", [(2, 3)]), ("ji", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 5, 2, 3), (5, 3, 4)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("abc,cd,b->ad", [(2, 3, 4), (4, 5), (3,)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]), ("ij,kj->ik", [(2, 3), (1, 3)]),
    ("...,...->...", [(2, 3), (3,)]), ("ijk,ikj->i", [(2, 3, 4), (2, 4, 3)]),
]


@pytest.mark.parametrize("equation, shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_matches_numpy_and_its_gradients_are_exact(equation, shapes, device):
    rng = np.random.default_rng(len(equation))
    arrays = [rng.standard_normal(s) for s in shapes]
    ts = [t(a, device, requires_grad=True) for a in arrays]
    y = gpugrad.einsum(equation, *ts)
    np.testing.assert_allclose(to_numpy(y), np.einsum(equation, *arrays), rtol=1e-12,
                               atol=1e-12)
    assert gpugrad.autograd.gradcheck(lambda *xs: gpugrad.einsum(equation, *xs), ts)


def test_einsum_accepts_a_list_and_reports_misuse():
    a, b = t(np.ones((2, 3))), t(np.ones((3, 4)))
    assert gpugrad.einsum("ij,jk->ik", [a, b]).tolist() == [[3.0] * 4] * 2
    with pytest.raises(RuntimeError, match=re.escape(
            "einsum(): more operands were provided than specified in the equation")):
        gpugrad.einsum("ij->ji", a, b)
    with pytest.raises(RuntimeError, match=re.escape(
            "einsum(): the number of subscripts in the equation (3) does not match the number "
            "of dimensions (2) for operand 0 and no ellipsis was given")):
        gpugrad.einsum("ijk,jk->i", a, b)
    with pytest.raises(RuntimeError, match=re.escape(
            "einsum(): operands do not broadcast: subscript 'j' has size 3 and 4")):
        gpugrad.einsum("ij,ij->i", a, t(np.ones((2, 4))))
    with pytest.raises(RuntimeError, match=re.escape(
            "einsum(): output subscript z does not appear in the equation for any input "
            "operand")):
        gpugrad.einsum("ij->z", a)
    with pytest.raises(NotImplementedError, match="diagonals are not supported"):
        gpugrad.einsum("ii->i", t(np.eye(2)))


def test_einsum_matches_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((2, 3, 4), (4, 5), (3,))]
    ours = [t(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    yo, yt = gpugrad.einsum("abc,cd,b->ad", *ours), torch.einsum("abc,cd,b->ad", *theirs)
    np.testing.assert_allclose(yo.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    g = rng.standard_normal((2, 5))
    yo.backward(gpugrad.tensor(g))
    yt.backward(torch.tensor(g))
    for o, th in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), th.grad.numpy(), rtol=1e-12)
