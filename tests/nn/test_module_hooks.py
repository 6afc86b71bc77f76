"""Module hooks: full backward hooks and pre-hooks, the deprecated backward hook, forward hooks
with ``always_call`` and the global ``register_module_*`` hooks. Expected messages are
PyTorch 2.13's, word for word."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.modules.module as M
from gpugrad.nn.modules import _hooks as _backward_hooks
from tests.nn._tensors import arr

NO_INPUT_GRAD = (
    "Full backward hook is firing when gradients are computed with respect to module outputs "
    "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
    "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.")
MIXED = ("Cannot use both regular backward hooks and full backward hooks on a single Module. "
         "Please use only one of them.")
MIXED_GLOBAL = ("Cannot use both regular backward hooks and full backward hooks as a global "
                "Module hook. Please use only one of them.")
OLD_MULTIPLE = (
    "Using a non-full backward hook when the forward contains multiple autograd Nodes is "
    "deprecated and will be removed in future versions. This hook will be missing some "
    "grad_input. Please use register_full_backward_hook to get the documented behavior.")
OLD_INPUT = (
    "Using non-full backward hooks on a Module that does not take as input a single Tensor or "
    "a tuple of Tensors is deprecated and will be removed in future versions. This hook will "
    "be missing some of the grad_input. Please use register_full_backward_hook to get the "
    "documented behavior.")
INPLACE_INPUT = (
    "Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was "
    "created inside a custom Function (or because an input was returned as-is) and the "
    "autograd logic to handle view+inplace would override the custom backward associated with "
    "the custom Function, leading to incorrect gradients. This behavior is forbidden. You can "
    "fix this by cloning the output of the custom Function.")


def linear(device):
    """Linear(2, 2) with W = [[1, 2], [3, 4]], b = [0.5, -0.5] (float64)."""
    lin = nn.Linear(2, 2).double().to(device)
    with gpugrad.no_grad():
        lin.weight.copy_(tensor([[1., 2.], [3., 4.]], device))
        lin.bias.copy_(tensor([0.5, -0.5], device))
    return lin


def values(grads):
    return [None if g is None else to_numpy(g).tolist() for g in grads]


class TwoOut(nn.Module):
    """forward(x, c, k) = (2x, x*c + k): a tuple out, a tensor and a number in."""

    def forward(self, x, c, k):
        return x * 2, x * c + k


@pytest.fixture
def clean_globals(monkeypatch):
    """Global hooks are process state: each test starts with none and leaves none."""
    for name in ("_global_forward_pre_hooks", "_global_forward_hooks",
                 "_global_backward_pre_hooks", "_global_backward_hooks"):
        monkeypatch.setattr(_backward_hooks, name, [])
    monkeypatch.setattr(_backward_hooks, "_global_is_full_backward_hook", None)
    yield
    _backward_hooks._refresh()


# -- full backward hooks ------------------------------------------------------------------------
def test_full_backward_hook_linear_values(device):
    # y = x W^T + b, loss = sum(y * [1, 2]): grad_output [1, 2], grad_input [1, 2] @ W = [7, 10]
    lin = linear(device)
    seen = []
    lin.register_full_backward_pre_hook(lambda m, go: seen.append(("pre", m, values(go))))
    lin.register_full_backward_hook(lambda m, gi, go: seen.append(("full", values(gi),
                                                                   values(go))))
    x = tensor([[1., -1.]], device, requires_grad=True)
    y = lin(x)
    assert y.grad_fn.name() == "BackwardHookFunctionBackward"
    assert y.grad_fn.next_functions[0][0].name() == "AddmmBackward0"
    (y * tensor([[1., 2.]], device)).sum().backward()
    assert seen == [("pre", lin, [[[1., 2.]]]), ("full", [[[7., 10.]]], [[[1., 2.]]])]
    np.testing.assert_allclose(to_numpy(x.grad), [[7., 10.]])
    np.testing.assert_allclose(to_numpy(lin.weight.grad), [[1., -1.], [2., -2.]])
    np.testing.assert_allclose(to_numpy(lin.bias.grad), [1., 2.])


def test_hooks_modify_gradients(device):
    lin = linear(device)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] + 1,))
    x = tensor([[1., -1.]], device, requires_grad=True)
    lin(x).sum().backward()
    # grad_output doubled to [2, 2]: every gradient below doubles; grad_input then gets +1
    np.testing.assert_allclose(to_numpy(lin.weight.grad), [[2., -2.], [2., -2.]])
    np.testing.assert_allclose(to_numpy(lin.bias.grad), [2., 2.])
    np.testing.assert_allclose(to_numpy(x.grad), [[9., 13.]])


def test_hook_order_prepend_and_removal():
    lin = nn.Linear(2, 2)
    order = []
    handles = [lin.register_full_backward_hook(lambda m, gi, go: order.append("full a")),
               lin.register_full_backward_hook(lambda m, gi, go: order.append("full b")),
               lin.register_full_backward_hook(lambda m, gi, go: order.append("full first"),
                                               prepend=True),
               lin.register_full_backward_pre_hook(lambda m, go: order.append("pre a")),
               lin.register_full_backward_pre_hook(lambda m, go: order.append("pre first"),
                                                   prepend=True)]
    x = gpugrad.ones(1, 2, requires_grad=True)
    lin(x).sum().backward()
    assert order == ["pre first", "pre a", "full first", "full a", "full b"]
    handles[1].remove()
    handles[4].remove()
    order.clear()
    lin(x).sum().backward()
    assert order == ["pre a", "full first", "full a"]
    for h in handles:
        h.remove()
    order.clear()
    y = lin(x)
    assert y.grad_fn.name() == "AddmmBackward0"
    y.sum().backward()
    assert order == []


def test_tuple_output_and_inputs_without_grad(device):
    m = TwoOut()
    seen = []
    m.register_full_backward_pre_hook(lambda mod, go: seen.append(values(go)))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((values(gi), values(go))))
    x = tensor([1., 1.], device, requires_grad=True)
    c = tensor([3., 3.], device)
    a, b = m(x, c, 3)
    assert a.grad_fn is b.grad_fn and (a.output_nr, b.output_nr) == (0, 1)
    assert a.grad_fn.name() == "BackwardHookFunctionBackward"
    a.sum().backward()
    # as PyTorch: None for an output without gradient and for the number; zeros for c
    assert seen == [[[1., 1.], None], ([[2., 2.], [0., 0.], None], [[1., 1.], None])]
    seen.clear()
    a, b = m(x, c, 3)
    b.sum().backward()
    assert seen == [[None, [1., 1.]], ([[3., 3.], [0., 0.], None], [None, [1., 1.]])]


def test_no_input_requires_grad_fires_on_outputs():
    lin = nn.Linear(2, 2)
    seen = []
    h = lin.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    with pytest.warns(UserWarning) as rec:
        lin(gpugrad.ones(1, 2)).sum().backward()
    assert [str(w.message) for w in rec] == [NO_INPUT_GRAD]
    assert rec[0].filename == __file__
    assert seen == [(None,)]
    h.remove()
    lin.register_full_backward_hook(lambda m, gi, go: (gpugrad.ones(1, 2),))
    with pytest.warns(UserWarning, match="Full backward hook is firing"):
        with pytest.raises(RuntimeError, match=re.escape(
                "Backward hook for Modules where no input requires gradient should always "
                "return None or None for all gradients.")):
            lin(gpugrad.ones(1, 2)).sum().backward()


def test_wrong_number_of_gradients_from_hooks():
    lin = nn.Linear(2, 2)
    x = gpugrad.ones(1, 2, requires_grad=True)
    h = lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match=re.escape(
            "Backward hook returned an invalid number of grad_input, got 2, but expected 1")):
        lin(x).sum().backward()
    h.remove()
    lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match=re.escape(
            "Backward pre hook returned an invalid number of grad_output, got 2, but "
            "expected 1")):
        lin(x).sum().backward()


def test_hooks_fire_once_per_backward_and_per_call(device):
    lin = linear(device)
    seen = []
    lin.register_full_backward_hook(lambda m, gi, go: seen.append((values(gi), values(go))))
    x = tensor([[1., 0.]], device, requires_grad=True)
    z = lin(lin(x))   # y = [1.5, 2.5]; z = y W^T + b
    z.sum().backward(retain_graph=True)
    # outer call first: grad_output [1, 1], grad_input [4, 6]; inner: grad_output [4, 6]
    assert seen == [([[[4., 6.]]], [[[1., 1.]]]), ([[[22., 32.]]], [[[4., 6.]]])]
    z.sum().backward()
    assert len(seen) == 4


def test_no_hooks_under_no_grad():
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_full_backward_hook(lambda *a: seen.append(a))
    lin.register_full_backward_pre_hook(lambda *a: seen.append(a))
    with gpugrad.no_grad():
        y = lin(gpugrad.ones(1, 2, requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad and seen == []


def test_sequential_inner_hooks(device):
    seq = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)).double().to(device)
    order = []
    for name, mod in seq.named_modules():
        name = name or "seq"
        mod.register_full_backward_pre_hook(lambda m, go, n=name: order.append(("pre", n)))
        mod.register_full_backward_hook(lambda m, gi, go, n=name: order.append(("full", n)))
    x = tensor([[0.5, -1.]], device, requires_grad=True)
    seq(x).sum().backward()
    assert order == [("pre", "seq"), ("pre", "2"), ("full", "2"), ("pre", "1"), ("full", "1"),
                     ("pre", "0"), ("full", "0"), ("full", "seq")]
    grads = [to_numpy(p.grad) for p in seq.parameters()] + [to_numpy(x.grad)]
    plain = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)).double().to(device)
    plain.load_state_dict(seq.state_dict())
    x2 = tensor([[0.5, -1.]], device, requires_grad=True)
    plain(x2).sum().backward()
    for g, p in zip(grads, [to_numpy(p.grad) for p in plain.parameters()] + [to_numpy(x2.grad)]):
        np.testing.assert_allclose(g, p)


def test_full_and_deprecated_hooks_do_not_mix(clean_globals):
    a, b = nn.Linear(1, 1), nn.Linear(1, 1)
    a.register_full_backward_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match=re.escape(MIXED)):
        a.register_backward_hook(lambda *args: None)
    b.register_backward_hook(lambda *args: None)
    with pytest.raises(RuntimeError, match=re.escape(MIXED)):
        b.register_full_backward_hook(lambda *args: None)
    b.register_full_backward_pre_hook(lambda *args: None)   # pre-hooks mix with either
    h = M.register_module_backward_hook(lambda *args: None)
    h.remove()   # the kind stays chosen, as in PyTorch
    with pytest.raises(RuntimeError, match=re.escape(MIXED_GLOBAL)):
        M.register_module_full_backward_hook(lambda *args: None)


def test_inplace_on_input_inside_forward_raises():
    relu = nn.ReLU(inplace=True)
    relu.register_full_backward_hook(lambda *args: None)
    x = gpugrad.tensor([-1., 2.], requires_grad=True) * 1
    with pytest.raises(RuntimeError, match=re.escape(INPLACE_INPUT)):
        relu(x)


def test_inplace_on_outputs_keeps_gradients_right(device):
    def grads(hooked, op):
        lin = linear(device)
        if hooked:
            lin.register_full_backward_hook(lambda *args: None)
            lin.register_full_backward_pre_hook(lambda *args: None)
        x = tensor([[1., -1.]], device, requires_grad=True)
        y = lin(x)
        op(y)
        y.pow(2).sum().backward()
        return [to_numpy(t.grad) for t in (lin.weight, lin.bias, x)]

    for op in (lambda y: y.add_(1), lambda y: y.mul_(3), lambda y: y.relu_()):
        for a, b in zip(grads(True, op), grads(False, op)):
            np.testing.assert_allclose(a, b)
    # the alias shares the version counter: a saved output changed in place is caught
    sig = nn.Sigmoid()
    sig.register_full_backward_hook(lambda *args: None)
    y = sig(tensor([0.5], device, requires_grad=True))
    y.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_non_tensor_output_warns():
    class Dict(nn.Module):
        def forward(self, x):
            return {"y": x * 2}

    m = Dict()
    m.register_full_backward_hook(lambda *args: None)
    with pytest.warns(UserWarning) as rec:
        m(gpugrad.ones(2, requires_grad=True))
    assert [str(w.message) for w in rec] == [
        "For backward hooks to be called, module output should be a Tensor or a tuple of "
        "Tensors but received <class 'dict'>"]


# -- the deprecated register_backward_hook --------------------------------------------------------
def test_deprecated_backward_hook_sees_last_node():
    lin = nn.Linear(3, 4)
    seen = []
    lin.register_backward_hook(lambda m, gi, go: seen.append(
        ([None if g is None else tuple(g.shape) for g in gi], [tuple(g.shape) for g in go])))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # registering does not warn
        lin.register_backward_hook(lambda m, gi, go: tuple(
            None if g is None else g * 0 for g in gi))
    x = gpugrad.randn(2, 3, requires_grad=True)
    with pytest.warns(FutureWarning) as rec:
        y = lin(x)
    assert [str(w.message) for w in rec] == [OLD_MULTIPLE]
    assert y.grad_fn.name() == "AddmmBackward0"
    y.sum().backward()
    # AddmmBackward0's gradients: bias, input, weight^T (the last hook zeroed them)
    assert seen == [([(4,), (2, 3), (3, 4)], [(2, 4)])]
    assert not to_numpy(x.grad).any() and not to_numpy(lin.weight.grad).any()
    relu = nn.ReLU()
    relu.register_backward_hook(lambda m, gi, go: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # one node fed by the input: PyTorch is silent
        relu(x * 1)
    with pytest.warns(FutureWarning) as rec:
        TwoIn()(x * 1, 3)
    assert [str(w.message) for w in rec] == [OLD_INPUT]


class TwoIn(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_backward_hook(lambda m, gi, go: None)

    def forward(self, x, k):
        return x * k


def test_deprecated_hook_wrong_count():
    lin = nn.Linear(2, 2)
    lin.register_backward_hook(lambda m, gi, go: (gi[0],))
    with pytest.warns(FutureWarning):
        y = lin(gpugrad.ones(1, 2, requires_grad=True))
    with pytest.raises(RuntimeError, match=re.escape(
            "hook '<lambda>' has returned an incorrect number of values (got 1, but "
            "expected 3)")):
        y.sum().backward()


# -- forward hooks: always_call, with_kwargs ------------------------------------------------------
class Failing(nn.Module):
    def forward(self, x, scale=1):
        raise ValueError("boom")


def test_always_call_runs_when_forward_raises():
    m = Failing()
    seen = []
    m.register_forward_hook(lambda mod, a, o: seen.append("plain"))
    m.register_forward_hook(lambda mod, a, o: seen.append(("always", o)), always_call=True)
    m.register_forward_hook(lambda mod, a, kw, o: seen.append(("kwargs", kw, o)),
                            always_call=True, with_kwargs=True)

    def bad(mod, a, o):
        raise KeyError("hookboom")
    m.register_forward_hook(bad, always_call=True)
    with pytest.warns(UserWarning) as rec, pytest.raises(ValueError, match="boom"):
        m(gpugrad.ones(1), scale=2)
    assert seen == [("always", None), ("kwargs", {"scale": 2}, None)]
    assert [str(w.message) for w in rec] == [
        "module forward hook with ``always_call=True`` raised an exception that was silenced "
        "as another error was raised in forward: 'hookboom'"]


def test_always_call_hook_runs_once_and_with_kwargs():
    class Scale(nn.Module):
        def forward(self, x, scale=1):
            return x * scale

    m = Scale()
    seen = []
    m.register_forward_hook(lambda mod, a, kw, o: seen.append((kw, o.item())), with_kwargs=True,
                            always_call=True)

    def fails(mod, a, o):
        seen.append("fails")
        raise RuntimeError("in hook")
    m.register_forward_hook(fails, always_call=True)
    with pytest.raises(RuntimeError, match="in hook"):
        m(gpugrad.ones(1), scale=2)
    assert seen == [({"scale": 2}, 2.0), "fails"]   # nothing runs twice
    pre = Scale()
    pre.register_forward_pre_hook(lambda mod, a, kw: "bad", with_kwargs=True)
    with pytest.raises(RuntimeError, match=re.escape(
            "forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got "
            "bad.")):
        pre(gpugrad.ones(1))


# -- global hooks ---------------------------------------------------------------------------------
def test_global_hooks_run_before_the_modules_own(clean_globals):
    seq = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    seen = []
    seq[0].register_forward_hook(lambda m, a, o: seen.append("own fwd"))
    seq[0].register_full_backward_hook(lambda m, gi, go: seen.append("own full"))
    seq[0].register_full_backward_pre_hook(lambda m, go: seen.append("own pre"))
    handles = [
        M.register_module_forward_pre_hook(lambda m, a: seen.append(("fpre", m._get_name()))),
        M.register_module_forward_hook(lambda m, a, o: seen.append(("fwd", m._get_name()))),
        M.register_module_full_backward_pre_hook(
            lambda m, go: seen.append(("bpre", m._get_name()))),
        M.register_module_full_backward_hook(
            lambda m, gi, go: seen.append(("bfull", m._get_name())))]
    y = seq(gpugrad.ones(1, 2, requires_grad=True))
    assert seen == [("fpre", "Sequential"), ("fpre", "Linear"), ("fwd", "Linear"), "own fwd",
                    ("fpre", "Tanh"), ("fwd", "Tanh"), ("fwd", "Sequential")]
    seen.clear()
    y.sum().backward()
    assert seen == [("bpre", "Sequential"), ("bpre", "Tanh"), ("bfull", "Tanh"),
                    ("bpre", "Linear"), "own pre", ("bfull", "Linear"), "own full",
                    ("bfull", "Sequential")]
    for h in handles:
        h.remove()
    seen.clear()
    nn.Tanh()(gpugrad.ones(1, requires_grad=True)).sum().backward()
    assert seen == []
    assert gpugrad.nn.modules.Module is nn.Module and M.Module is nn.Module


def test_global_forward_hook_always_call_and_kwargs(clean_globals):
    seen = []
    with M.register_module_forward_hook(lambda m, a, kw, o: seen.append((kw, o)),
                                        with_kwargs=True, always_call=True):
        with pytest.raises(ValueError):
            Failing()(gpugrad.ones(1), scale=3)
    assert seen == [({"scale": 3}, None)]
    assert not _backward_hooks._global_forward_hooks


# -- PyTorch as the oracle --------------------------------------------------------------------
def _mlp_trace(mod, weights, x):
    """Hook calls and gradients for an MLP with every kind of hook on every layer."""
    seq = mod.nn.Sequential(mod.nn.Linear(3, 4), mod.nn.ReLU(), mod.nn.Linear(4, 4),
                            mod.nn.Tanh(), mod.nn.Linear(4, 2)).double()
    with mod.no_grad():
        for p, w in zip(seq.parameters(), weights):
            p.copy_(mod.tensor(w, dtype=mod.float64))
    log = []

    def rec(*items):   # gradient tuples become lists of arrays (or None)
        log.append(tuple([None if g is None else g.detach().numpy().copy() for g in i]
                         if isinstance(i, tuple) else i for i in items))

    for name, m in seq.named_modules():
        name = name or "seq"
        m.register_forward_pre_hook(lambda m, a, n=name: rec("fpre", n))
        m.register_forward_hook(lambda m, a, o, n=name: rec("fwd", n))
        m.register_full_backward_pre_hook(lambda m, go, n=name: rec("bpre", n, go))
        m.register_full_backward_hook(lambda m, gi, go, n=name: rec("bfull", n, gi, go))
    seq[2].register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
    seq[4].register_full_backward_hook(lambda m, gi, go: (gi[0] - 1,))
    xt = mod.tensor(x, dtype=mod.float64, requires_grad=True)
    (seq(xt) ** 2).sum().backward()
    return log, [p.grad.numpy() for p in seq.parameters()] + [xt.grad.numpy()]


def test_hooks_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    shapes = [(4, 3), (4,), (4, 4), (4,), (2, 4), (2,)]
    weights = [rng.uniform(-1, 1, size=s) for s in shapes]
    x = rng.uniform(-1, 1, size=(5, 3))
    log, grads = _mlp_trace(gpugrad, weights, x)
    want_log, want_grads = _mlp_trace(torch, weights, x)
    assert [e[:2] for e in log] == [e[:2] for e in want_log]
    for got, want in zip(log, want_log):
        for a, b in zip(got[2:], want[2:]):
            assert len(a) == len(b)
            for ga, gb in zip(a, b):
                assert (ga is None) == (gb is None)
                if gb is not None:
                    np.testing.assert_allclose(ga, gb, rtol=1e-9, atol=1e-12)
    for a, b in zip(grads, want_grads):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


# -- forward hooks and pre-hooks -------------------------------------------------------------------
def test_forward_hooks():
    m = nn.Linear(2, 2)
    seen = []
    h1 = m.register_forward_hook(lambda mod, args, out: seen.append((mod, args[0].shape)))
    h2 = m.register_forward_hook(lambda mod, args, out: out * 0)
    pre = m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    x = gpugrad.zeros(1, 2)
    assert m(x).sum().item() == 0
    assert seen == [(m, (1, 2))]
    h2.remove()
    np.testing.assert_allclose(arr(m(x))[0], arr(m.weight).sum(1) + arr(m.bias), rtol=1e-6)
    pre.remove()
    h1.remove()
    m(x)
    assert len(seen) == 2
    h = m.register_forward_hook(lambda mod, args, kwargs, out: (args, kwargs), with_kwargs=True)
    assert m(x) == ((x,), {})
    h.remove()
