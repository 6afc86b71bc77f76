"""Saved-tensor hooks (``gpugrad.autograd.graph.saved_tensors_hooks``, ``save_on_cpu``,
``disable_saved_tensors_hooks``): when pack and unpack run, what they receive, PyTorch's errors,
and that gradients (first and second order) are those of the unhooked graph."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.autograd import fusion
from gpugrad.autograd.graph import (
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)


def _logged():
    log = []

    def pack(t):
        log.append(("pack", t))
        return ("packed", t)

    def unpack(p):
        log.append(("unpack", p[1]))
        return p[1]
    return log, pack, unpack


def test_pack_receives_each_saved_tensor_and_unpack_runs_on_each_read(device):
    x = gpugrad.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    log, pack, unpack = _logged()
    with saved_tensors_hooks(pack, unpack):
        y = x.exp()               # saves its result
        z = (y * x).sum()         # saves both factors
    assert [e[0] for e in log] == ["pack"] * 3
    assert {id(e[1]) for e in log} == {id(x), id(y)}   # the tensors themselves
    log.clear()
    z.backward(retain_graph=True)
    assert [e[0] for e in log] == ["unpack"] * 3
    log.clear()
    assert y.grad_fn._saved_result is y and [e[0] for e in log] == ["unpack"]
    v = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(to_numpy(x.grad), np.exp(v) * (1 + v), rtol=1e-6)


def test_nothing_is_packed_without_a_graph(device):
    x = gpugrad.ones(3, device=device, requires_grad=True)
    log, pack, unpack = _logged()
    with saved_tensors_hooks(pack, unpack):
        with gpugrad.no_grad():
            x.exp()
        gpugrad.ones(3, device=device).exp()   # no input requires grad
    assert log == []


def test_packed_values_can_live_anywhere(device):
    """Pack to a host numpy copy, unpack to a new tensor on the original device: the node keeps
    no reference to the saved tensor."""
    x = gpugrad.tensor([0.1, 0.2, 0.3], device=device, requires_grad=True)
    with saved_tensors_hooks(lambda t: (t.device, t.detach().cpu().numpy().copy()),
                             lambda p: gpugrad.tensor(p[1], device=p[0])):
        y = x.sin() * x.cos()
    y.sum().backward()
    v = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(to_numpy(x.grad), np.cos(2 * v), rtol=1e-6)


def test_save_on_cpu_gives_the_same_gradients(device, rng):
    v = rng.standard_normal((4, 5)).astype(np.float32)
    grads = []
    for hooked in (False, True):
        x = gpugrad.tensor(v, device=device, requires_grad=True)
        w = gpugrad.tensor(v.T.copy(), device=device, requires_grad=True)
        if hooked:
            with save_on_cpu(pin_memory=True):
                loss = gpugrad.tanh(x @ w).pow(2).mean()
        else:
            loss = gpugrad.tanh(x @ w).pow(2).mean()
        loss.backward()
        grads.append((to_numpy(x.grad), to_numpy(w.grad)))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_innermost_hooks_apply(device):
    x = gpugrad.ones(2, device=device, requires_grad=True)
    order = []
    with saved_tensors_hooks(lambda t: order.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: order.append("inner") or t, lambda t: t):
            x.exp()
        x.exp()
    assert order == ["inner", "outer"]


def test_custom_function_saved_tensors_go_through_the_hooks(device):
    class Double(gpugrad.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            return g * 2 + a * 0

    x = gpugrad.ones(3, device=device, requires_grad=True)
    log, pack, unpack = _logged()
    with saved_tensors_hooks(pack, unpack):
        y = Double.apply(x)
    assert [e[0] for e in log] == ["pack"] and log[0][1] is x
    y.sum().backward()
    assert [e[0] for e in log] == ["pack", "unpack"]
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 2.0, 2.0])


def test_double_backward_through_hooked_values(device):
    x = gpugrad.tensor([0.3, -0.7], device=device, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = (x.sin() * x).sum()
    (gx,) = gpugrad.autograd.grad(y, x, create_graph=True)
    (ggx,) = gpugrad.autograd.grad(gx.sum(), x)
    v = np.array([0.3, -0.7])
    np.testing.assert_allclose(to_numpy(gx), np.cos(v) * v + np.sin(v), rtol=1e-6)
    np.testing.assert_allclose(to_numpy(ggx), 2 * np.cos(v) - v * np.sin(v), rtol=1e-6)


def test_hooked_values_are_not_version_checked(device):
    # as in PyTorch: what unpack returns is what backward uses
    x = gpugrad.tensor([1.0, 2.0], device=device, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        a = x * 1.0
        y = (a * a).sum()
    a.detach().add_(10.0)   # would make the unhooked graph fail
    y.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2.0, 4.0])


def test_hooked_nodes_are_not_fused_and_unpack_once(device):
    x = gpugrad.tensor([0.5, 1.5], device=device, requires_grad=True)
    log, pack, unpack = _logged()
    with fusion.using("always" if device == "cpu" else "auto"):
        fusion.reset_stats()
        with saved_tensors_hooks(pack, unpack):
            y = (x.tanh() * x.sigmoid()).sum()
        y.backward()
    assert fusion.stats["regions"] == 0
    assert [e[0] for e in log].count("unpack") == [e[0] for e in log].count("pack") == 4


def test_second_backward_still_fails(device):
    x = gpugrad.ones(2, device=device, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


# -- PyTorch's errors -----------------------------------------------------------------------------
def test_unpack_must_return_a_tensor():
    x = gpugrad.ones(2, requires_grad=True)
    with saved_tensors_hooks(lambda t: 3, lambda p: p):
        y = x.exp().sum()
    with pytest.raises(TypeError, match="^Output of saved tensor unpack_hook expected to be a "
                                        "Tensor but got result of type int$"):
        y.backward()


def test_pack_must_not_modify_its_input():
    x = gpugrad.ones(2, requires_grad=True).clone()
    with pytest.raises(RuntimeError, match="^A saved tensor pack hook is modifying its input in "
                                           "place. Tensors provided as input to pack hook cannot "
                                           "be modified"):
        with saved_tensors_hooks(lambda t: t.detach().add_(1), lambda t: t):
            x.exp()


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("hooks are off in this block"):
        with pytest.raises(RuntimeError, match="^hooks are off in this block$"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):   # fine again outside
        pass


def test_same_calls_as_pytorch():
    torch = pytest.importorskip("torch")

    def run(mod):
        calls = []
        x = mod.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with mod.autograd.graph.saved_tensors_hooks(
                lambda t: calls.append(("pack", tuple(t.shape))) or t,
                lambda t: calls.append(("unpack", tuple(t.shape))) or t):
            y = mod.tanh(x.exp()) * mod.sigmoid(x)
            loss = (y ** 2).sum()
        loss.backward()
        return sorted(calls), x.grad.detach().numpy()

    got, gx = run(gpugrad)
    want, tx = run(torch)
    assert got == want
    np.testing.assert_allclose(gx, tx, rtol=1e-6)
