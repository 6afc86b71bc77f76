"""``gpugrad.func`` (PyTorch's ``torch.func`` transforms): values, composition (grad of grad,
per-sample gradients with vmap of grad), pytrees, linearize, stack_module_state, and PyTorch's
errors."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import func, nn
from gpugrad import func as F


def _t(values, device="cpu"):
    return gpugrad.tensor(np.asarray(values, np.float64), device=device)


def test_grad_of_a_scalar_function_and_of_its_gradient(device):
    x = _t([0.5, -1.0, 2.0], device)
    g = F.grad(lambda x: (x ** 3).sum())(x)
    np.testing.assert_allclose(to_numpy(g), 3 * to_numpy(x) ** 2, rtol=1e-12)
    assert not g.requires_grad   # detached at the outermost level
    gg = F.grad(F.grad(lambda x: (x ** 3).sum()))(_t(2.0, device))
    assert gg.item() == pytest.approx(12.0)


def test_grad_argnums_has_aux_and_pytrees(device):
    x, y = _t([1.0, 2.0], device), _t([3.0, 4.0], device)
    gx, gy = F.grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y)
    np.testing.assert_array_equal(to_numpy(gx), [3.0, 4.0])
    np.testing.assert_array_equal(to_numpy(gy), [1.0, 2.0])
    g, aux = F.grad(lambda a: ((a ** 2).sum(), a.sum()), has_aux=True)(x)
    np.testing.assert_array_equal(to_numpy(g), [2.0, 4.0])
    assert aux.item() == 3.0
    g = F.grad(lambda d: (d["w"] * d["b"][0]).sum())({"w": x, "b": (y,)})
    assert set(g) == {"w", "b"} and isinstance(g["b"], tuple)
    np.testing.assert_array_equal(to_numpy(g["b"][0]), [1.0, 2.0])
    (g, value) = F.grad_and_value(lambda a: (a * a).sum())(x)
    assert value.item() == 5.0


def test_inputs_that_require_grad_keep_the_graph():
    x = gpugrad.tensor([1.0, 2.0], dtype=gpugrad.float64, requires_grad=True)
    g = F.grad(lambda a: (a ** 3).sum())(x)
    assert g.requires_grad
    g.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [6.0, 12.0])


def test_per_sample_gradients_with_vmap_of_grad(device, rng):
    w = _t(rng.standard_normal(3), device)
    xs, ys = _t(rng.standard_normal((5, 3)), device), _t(rng.standard_normal(5), device)

    def loss(w, x, y):
        return ((x * w).sum() - y) ** 2
    per = F.vmap(F.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    W, X, Y = to_numpy(w), to_numpy(xs), to_numpy(ys)
    want = 2 * ((X @ W) - Y)[:, None] * X
    np.testing.assert_allclose(to_numpy(per), want, rtol=1e-12)


def test_vmap_dims_and_errors():
    out = F.vmap(lambda a, b: a * b, in_dims=(1, None))(gpugrad.ones(2, 3), gpugrad.tensor(2.0))
    assert tuple(out.shape) == (3, 2)
    a, s = F.vmap(lambda a: (a, a.sum()), out_dims=(1, 0))(gpugrad.ones(3, 2))
    assert tuple(a.shape) == (2, 3) and tuple(s.shape) == (3,)
    with pytest.raises(ValueError, match=r"^vmap: Expected all tensors to have the same size in "
                                         r"the mapped dimension, got sizes \[3, 4\]"):
        F.vmap(lambda a, b: a + b)(gpugrad.ones(3), gpugrad.ones(4))
    with pytest.raises(ValueError, match="that input is a Tensor of dimensionality 0"):
        F.vmap(lambda a: a)(gpugrad.tensor(1.0))


def test_vjp_jvp_jacobians_and_hessian(device):
    x = _t([0.3, -0.2, 1.1], device)
    out, vjp_fn = F.vjp(lambda a: a.sin(), x)
    (g,) = vjp_fn(_t([1.0, 2.0, 3.0], device))
    np.testing.assert_allclose(to_numpy(g), np.cos(to_numpy(x)) * [1, 2, 3], rtol=1e-12)
    _, t = F.jvp(lambda a: a.sin(), (x,), (_t([1.0, 0.0, 2.0], device),))
    np.testing.assert_allclose(to_numpy(t), np.cos(to_numpy(x)) * [1, 0, 2], rtol=1e-12)
    j = F.jacrev(lambda a: a.sin())(x)
    np.testing.assert_allclose(to_numpy(j), np.diag(np.cos(to_numpy(x))), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.jacfwd(lambda a: a.sin())(x)), to_numpy(j))
    h = F.hessian(lambda a: (a ** 3).sum())(x)
    np.testing.assert_allclose(to_numpy(h), np.diag(6 * to_numpy(x)), rtol=1e-12)


def test_functional_call_swaps_parameters_for_one_call():
    gpugrad.manual_seed(0)
    m = nn.Linear(3, 2)
    x = gpugrad.randn(4, 3)
    zeros = {"weight": gpugrad.zeros(2, 3), "bias": gpugrad.ones(2)}
    np.testing.assert_array_equal(to_numpy(F.functional_call(m, zeros, (x,))), np.ones((4, 2)))
    assert float(m.weight.abs().sum()) > 0   # the module's own parameters are back
    params = {k: v.detach() for k, v in m.named_parameters()}
    g = F.grad(lambda p, x: F.functional_call(m, p, (x,)).sum())(params, x)
    np.testing.assert_allclose(to_numpy(g["weight"]), np.tile(to_numpy(x).sum(0), (2, 1)),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        F.functional_call(m, ({"bias": zeros["bias"]}, {"bias": zeros["bias"]}), (x,))


def test_errors_as_pytorch():
    x = gpugrad.ones(3)
    with pytest.raises(RuntimeError, match=r"^grad_and_value\(f\)\(\*args\): Expected f\(\*args\) "
                                           r"to return a scalar Tensor, got tensor with 1 dims"):
        F.grad(lambda a: a * 2)(x)
    with pytest.raises(RuntimeError, match="^Got argnum=2, but only 2 positional inputs$"):
        F.grad(lambda a, b: (a * b).sum(), argnums=2)(x, x)
    with pytest.raises(ValueError, match="^Thing passed to transform API must be Tensor, got "
                                         "<class 'float'>$"):
        F.grad(lambda a: a.sum())(3.0)
    with pytest.raises(RuntimeError, match="output of function f should be a tuple"):
        F.grad(lambda a: (a ** 2).sum(), has_aux=True)(x)


def test_same_values_as_torch_func(rng):
    torch = pytest.importorskip("torch")
    w, xs, ys = rng.standard_normal(3), rng.standard_normal((4, 3)), rng.standard_normal(4)
    out = {}
    for lib, fn in ((gpugrad, F), (torch, torch.func)):
        def loss(w, x, y, lib=lib):
            return (lib.tanh(x * w).sum() - y) ** 2
        per = fn.vmap(fn.grad(loss), in_dims=(None, 0, 0))(
            lib.tensor(w), lib.tensor(xs), lib.tensor(ys))
        hess = fn.hessian(lambda a, lib=lib: (lib.sin(a) * a).sum())(lib.tensor(w))
        out[lib.__name__] = (per.numpy(), hess.numpy())
    for a, b in zip(out["gpugrad"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# -- func.linearize / func.stack_module_state -----------------------------------------------------
def test_linearize_returns_the_output_and_the_jvp(device):
    x, y = tensor([0.5, 1.0, -2.0], device), tensor([3.0, -1.0, 0.25], device)
    out, jvp_fn = func.linearize(lambda a, b: a.sin() * b, x, y)
    xs, ys = to_numpy(x), to_numpy(y)
    np.testing.assert_allclose(to_numpy(out), np.sin(xs) * ys)
    tx, ty = np.array([1.0, 2.0, -1.0]), np.array([0.5, 0.0, 4.0])
    np.testing.assert_allclose(to_numpy(jvp_fn(tensor(tx, device), tensor(ty, device))),
                               np.cos(xs) * ys * tx + np.sin(xs) * ty, rtol=1e-13)
    with pytest.raises(RuntimeError, match=re.escape("tangent:1 with shape")):
        jvp_fn(tensor(tx, device), tensor([1.0], device))


def test_stack_module_state_stacks_along_a_new_first_dim():
    models = [nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).double() for _ in range(4)]
    params, buffers = func.stack_module_state(models)
    assert list(params) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert list(buffers) == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    assert params["0.weight"].shape == (4, 2, 3) and buffers["1.running_var"].shape == (4, 2)
    assert params["0.weight"].is_leaf and params["0.weight"].requires_grad
    assert not buffers["1.running_mean"].requires_grad
    np.testing.assert_array_equal(to_numpy(params["0.bias"]),
                                  np.stack([to_numpy(m[0].bias) for m in models]))
    for m in models:
        m.eval()
    params, buffers = func.stack_module_state(models)
    x = tensor(np.random.default_rng(0).standard_normal((5, 3)))
    out = func.vmap(lambda p, b, x: func.functional_call(models[0], (p, b), (x,)),
                    in_dims=(0, 0, None))(params, buffers, x)
    np.testing.assert_allclose(to_numpy(out), np.stack([to_numpy(m(x)) for m in models]),
                               rtol=1e-12)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0."):
        func.stack_module_state([])
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.eval()
    with pytest.raises(RuntimeError, match="Expected all models to have the same training/eval"):
        func.stack_module_state([a, b])
    with pytest.raises(RuntimeError, match="Expected all models to be of the same class."):
        func.stack_module_state([a, nn.Identity()])
    b.train()
    b.bias.requires_grad_(False)
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected bias from each model to have the same .requires_grad")):
        func.stack_module_state([a, b])
