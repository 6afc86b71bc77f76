"""Small API gaps: nn.init.dirac_ / sparse_ and the deprecated init aliases,
autograd.graph.get_gradient_edge (GradientEdge in autograd.grad), autograd.Variable, and
func.linearize / func.stack_module_state."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import func, nn
from gpugrad.autograd import Variable
from gpugrad.autograd.graph import GradientEdge, get_gradient_edge
from gpugrad.nn import init


# -- nn.init.dirac_ / sparse_ ---------------------------------------------------------------------
@pytest.mark.parametrize("shape,groups", [((4, 3, 5), 1), ((6, 2, 3, 3), 2), ((3, 5, 1, 2, 3), 1),
                                          ((4, 4, 3, 3), 4)])
def test_dirac_puts_ones_at_the_kernel_centre(device, shape, groups):
    w = init.dirac_(gpugrad.full(shape, 7.0, device=device), groups)
    expect = np.zeros(shape)
    per = shape[0] // groups
    for g in range(groups):
        for d in range(min(per, shape[1])):
            expect[(g * per + d, d) + tuple(n // 2 for n in shape[2:])] = 1
    np.testing.assert_array_equal(to_numpy(w), expect)


def test_dirac_weight_makes_a_convolution_the_identity(device):
    x = tensor(np.random.default_rng(0).standard_normal((2, 3, 8)), device)
    w = init.dirac_(gpugrad.empty(3, 3, 3, dtype=gpugrad.float64, device=device))
    np.testing.assert_allclose(to_numpy(nn.functional.conv1d(x, w, padding=1)), to_numpy(x))


def test_dirac_matches_torch():
    torch = pytest.importorskip("torch")
    for shape, groups in (((6, 4, 3, 2), 3), ((5, 2, 4), 1)):
        ours = init.dirac_(gpugrad.empty(*shape), groups)
        theirs = torch.nn.init.dirac_(torch.empty(*shape), groups)
        np.testing.assert_array_equal(to_numpy(ours), theirs.numpy())


def test_dirac_and_sparse_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(gpugrad.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(gpugrad.empty(3, 3, 3), groups=2)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(gpugrad.empty(3, 3, 3), 0.5)


def test_sparse_zeros_a_fraction_of_each_column_of_normal_draws(device):
    rows, cols, sparsity, std = 7, 5, 0.3, 0.05
    w = gpugrad.empty(rows, cols, dtype=gpugrad.float64, device=device)
    init.sparse_(w, sparsity, std=std, generator=gpugrad.Generator().manual_seed(4))
    dense = gpugrad.empty(rows, cols, dtype=gpugrad.float64, device=device)
    dense.normal_(0, std, generator=gpugrad.Generator().manual_seed(4))
    a, d = to_numpy(w), to_numpy(dense)
    assert ((a == 0).sum(axis=0) == math.ceil(sparsity * rows)).all()
    np.testing.assert_array_equal(a[a != 0], d[a != 0])   # the rest: the generator's normals
    again = init.sparse_(gpugrad.empty(rows, cols, dtype=gpugrad.float64, device=device),
                         sparsity, std=std, generator=gpugrad.Generator().manual_seed(4))
    np.testing.assert_array_equal(to_numpy(again), a)


@pytest.mark.parametrize("old,args", [
    ("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("eye", ()), ("xavier_uniform", ()),
    ("xavier_normal", ()), ("kaiming_uniform", ()), ("kaiming_normal", ()), ("orthogonal", ()),
    ("sparse", (0.5,)), ("dirac", ())])
def test_deprecated_init_aliases_warn_and_do_the_same(old, args):
    shape = (3, 3, 3) if old == "dirac" else (4, 3)
    with pytest.warns(FutureWarning, match=re.escape(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`.")):
        got = getattr(init, old)(gpugrad.empty(*shape), *args,
                                 **({} if old in ("constant", "eye", "dirac") else
                                    {"generator": gpugrad.Generator().manual_seed(1)}))
    kwargs = {} if old in ("constant", "eye", "dirac") else \
        {"generator": gpugrad.Generator().manual_seed(1)}
    expect = getattr(init, old + "_")(gpugrad.empty(*shape), *args, **kwargs)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(expect))
    assert getattr(init, old).__name__ == old


# -- GradientEdge ---------------------------------------------------------------------------------
def test_gradient_edge_stands_for_its_tensor_in_autograd_grad(device):
    x = tensor([1.0, 2.0, 3.0], device, requires_grad=True)
    y = x * x
    out = (y * 3).sum()
    ex, ey = get_gradient_edge(x), get_gradient_edge(y)
    assert isinstance(ex, GradientEdge) and ex.output_nr == 0 and ex.ownership_token is None
    assert ex.node.variable is x and ey.node is y.grad_fn
    gx, gy = gpugrad.autograd.grad(out, [ex, ey], retain_graph=True)
    np.testing.assert_allclose(to_numpy(gx), [6.0, 12.0, 18.0])
    np.testing.assert_allclose(to_numpy(gy), [3.0, 3.0, 3.0])
    (g,) = gpugrad.autograd.grad(get_gradient_edge(y), x, grad_outputs=tensor([1.0, 0.0, 2.0],
                                                                               device))
    np.testing.assert_allclose(to_numpy(g), [2.0, 0.0, 12.0])


def test_gradient_edge_errors():
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a "
                                           "Tensor that does not require gradients"):
        get_gradient_edge(gpugrad.zeros(2))
    x = tensor([1.0, 2.0], requires_grad=True)
    unused = get_gradient_edge(tensor([1.0], requires_grad=True))
    out = (x * 2).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                           "not have been used in the graph"):
        gpugrad.autograd.grad(out, [x, unused], retain_graph=True)
    assert gpugrad.autograd.grad(out, [x, unused], retain_graph=True, allow_unused=True)[1] \
        is None
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given "
                                           "input is a GradientEdge"):
        gpugrad.autograd.grad(out, [x, unused], retain_graph=True, materialize_grads=True)
    with pytest.raises(RuntimeError, match="needs its grad_outputs"):
        gpugrad.autograd.grad(get_gradient_edge(x * 2), x)


def test_gradient_edge_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([0.5, -1.0, 2.0])
    results = []
    for lib in (gpugrad, torch):
        x = lib.tensor(a, requires_grad=True)
        h = x.sin()
        loss = (h * h).sum()
        edge = lib.autograd.graph.get_gradient_edge(h)
        results.append([to_numpy(g) if lib is gpugrad else g.numpy()
                        for g in lib.autograd.grad(loss, (edge, x))])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)


# -- Variable -------------------------------------------------------------------------------------
def test_variable_is_a_detached_alias_with_requires_grad():
    t = tensor([1.0, 2.0])
    v = Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and not t.requires_grad and v.is_leaf
    assert isinstance(t, Variable) and not isinstance(3, Variable)
    with gpugrad.no_grad():
        v.mul_(2)
    np.testing.assert_array_equal(to_numpy(t), [2.0, 4.0])     # same storage
    y = tensor([1.0], requires_grad=True) * 2
    assert Variable(y).grad_fn is None and not Variable(y).requires_grad
    assert Variable().shape == (0,)


def test_variable_errors_as_pytorch():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        Variable(3)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])
    with pytest.raises(ValueError, match="Variable can't be volatile and require_grad at the "
                                         "same time!"):
        Variable(tensor([1.0]), True, True)
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        Variable(tensor([1.0]), volatile=True)


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
