"""Hooks on tensors and nodes: replacing a gradient, order as in PyTorch, retain_grad, post-
accumulate-grad hooks, register_multi_grad_hook and increment_version; PyTorch's errors word for
word."""
from __future__ import annotations

import pytest
from conftest import to_numpy

import gpugrad
from tests.autograd._errors import first
from tests.autograd._tensors import t


# -- hooks ------------------------------------------------------------------------------------
def test_tensor_hook_replaces_the_gradient(device):
    x = t(1.0, device, True)
    y = x * 2
    y.register_hook(lambda g: g * 10)
    (y * 1).backward()
    assert x.grad.item() == 20.0


def test_leaf_hook_replaces_before_accumulation_and_remove(device):
    x = t(1.0, device, True)
    handle = x.register_hook(lambda g: g * 10)
    (x * 2).backward()
    assert x.grad.item() == 20.0
    handle.remove()
    (x * 2).backward()
    assert x.grad.item() == 22.0
    handle.remove()  # removing twice is harmless


def test_hook_returning_none_keeps_the_gradient(device):
    x = t(1.0, device, True)
    seen = []
    x.register_hook(lambda g: seen.append(g.item()))
    (x * 3).backward()
    assert seen == [3.0] and x.grad.item() == 3.0


def test_hook_order_matches_pytorch(device):
    log = []
    x = t(1.0, device, True)
    y = x * 2
    z = y * y
    z.grad_fn.register_prehook(lambda go: log.append(("pre", go[0].item())))
    z.grad_fn.register_hook(lambda gi, go: log.append(("post", gi[0].item(), go[0].item())))
    y.register_hook(lambda g: log.append(("y", g.item())))
    x.register_hook(lambda g: log.append(("x", g.item())))
    x.register_post_accumulate_grad_hook(lambda v: log.append(("acc", v.grad.item())))
    z.backward()
    assert log == [("pre", 1.0), ("post", 2.0, 1.0), ("y", 4.0), ("x", 8.0), ("acc", 8.0)]


def test_node_hooks_may_replace_gradients(device):
    x = t(1.0, device, True)
    y = x * 3
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.backward()
    assert x.grad.item() == 6.0
    x.grad = None
    y = x * 3
    handle = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 5, gi[1]))
    y.backward(retain_graph=True)
    assert x.grad.item() == 15.0
    handle.remove()
    y.backward()
    assert x.grad.item() == 18.0


@pytest.mark.parametrize("retain_first", [True, False])
def test_retain_grad_stores_the_post_hook_value(device, retain_first):
    x = t(1.0, device, True)
    y = x * 2
    if retain_first:
        y.retain_grad()
    y.register_hook(lambda g: g * 10)
    if not retain_first:
        y.retain_grad()
    (y * 1).backward()
    assert y.grad.item() == 10.0
    assert x.grad.item() == 20.0


def test_post_accumulate_grad_hook_sees_the_final_grad(device):
    x = t([1.0], device, True)
    seen = []
    x.register_post_accumulate_grad_hook(lambda v: seen.append(to_numpy(v.grad).tolist()))
    (x * 2 + x * 3).sum().backward()
    assert seen == [[5.0]]  # once, after both paths were summed
    with pytest.raises(RuntimeError):
        (x * 2).register_post_accumulate_grad_hook(lambda v: None)


def test_hook_errors_on_tensors_without_grad(device):
    x = t([1.0], device)
    with pytest.raises(RuntimeError, match=first(
            "cannot register a hook on a tensor that doesn't require gradient")):
        x.register_hook(lambda g: g)
    with pytest.raises(RuntimeError, match=first(
            "can't retain_grad on Tensor that has requires_grad=False")):
        x.retain_grad()


# -- register_multi_grad_hook, increment_version ------------------------------------------------
def _grads_of(calls):
    return lambda grads: calls.append([None if g is None else to_numpy(g).tolist()
                                       for g in grads])


def test_multi_grad_hook_all_waits_for_every_reached_tensor(device):
    from gpugrad.autograd.graph import register_multi_grad_hook
    a, b, c = (t([1.0, 1.0], device, True) for _ in range(3))
    calls = []
    handle = register_multi_grad_hook((a, b, c), _grads_of(calls))
    (a * 2 + b * 3).sum().backward()
    assert calls == [[[2.0, 2.0], [3.0, 3.0], None]]   # c is not in this graph: None, no wait
    (a * c).sum().backward()
    assert calls[1] == [[1.0, 1.0], None, [1.0, 1.0]]
    handle.remove()
    (a * b).sum().backward()
    assert len(calls) == 2


def test_multi_grad_hook_any_and_non_leaves(device):
    from gpugrad.autograd.graph import register_multi_grad_hook
    a, b = t([1.0, 1.0], device, True), t([1.0, 1.0], device, True)
    first = []
    with register_multi_grad_hook((a, b), lambda g: first.append(to_numpy(g).tolist()),
                                  mode="any"):
        (a * 2 + b * 3).sum().backward()
    assert first == [[3.0, 3.0]]   # b's accumulator runs first, as in PyTorch
    x = t([1.0, 1.0], device, True)
    y = x * 2
    z = y * 3
    calls = []
    handle = register_multi_grad_hook((y, z), _grads_of(calls))
    gpugrad.autograd.grad(z.sum(), x)
    assert calls == [[[3.0, 3.0], [1.0, 1.0]]]
    handle.remove()


def test_multi_grad_hook_errors():
    from gpugrad.autograd.graph import register_multi_grad_hook
    a = gpugrad.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got "
                                         r"some$"):
        register_multi_grad_hook((a,), print, mode="some")
    handle = register_multi_grad_hook((a,), print)
    with pytest.raises(RuntimeError, match="^A leaf node was passed to _will_engine_execute_node "
                                           "but we are currently running autograd.grad()"):
        gpugrad.autograd.grad((a * 5).sum(), a)
    handle.remove()


def test_increment_version_makes_saved_value_checks_notice():
    x = gpugrad.ones(2, requires_grad=True)
    s = x.sigmoid()
    y = (s * 2).sum() + (s * s).sum()
    before = s._version
    gpugrad.autograd.graph.increment_version(s)
    assert s._version == before + 1
    with pytest.raises(RuntimeError, match="^one of the variables needed for gradient computation "
                                           "has been modified by an inplace operation"):
        y.backward()
