"""Activation checkpointing (``gpugrad.utils.checkpoint``): both implementations give the
gradients of the plain graph, keep nothing the function saves, replay random draws, and raise
PyTorch's warnings and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

MODES = pytest.mark.parametrize("reentrant", [False, True], ids=["hooks", "reentrant"])


def _block(x, w):
    return gpugrad.tanh(x @ w).sin() * x


@MODES
def test_gradients_equal_the_plain_graph(device, reentrant, rng):
    xv, wv = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    grads = []
    for ckpt in (False, True):
        x = gpugrad.tensor(xv, device=device, requires_grad=True)
        w = gpugrad.tensor(wv, device=device, requires_grad=True)
        y = checkpoint(_block, x, w, use_reentrant=reentrant) if ckpt else _block(x, w)
        (y ** 2).sum().backward()
        grads.append((to_numpy(x.grad), to_numpy(w.grad)))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_the_graph_is_the_original_one_and_nothing_is_kept(device):
    """Without reentrancy the recorded nodes are the function's own; what they saved is a
    ticket, and the values come back only when backward asks (then are dropped)."""
    x = gpugrad.tensor([0.5, 1.0], device=device, dtype=gpugrad.float64, requires_grad=True)
    calls = []

    def f(a):
        calls.append(1)
        return a.sin().exp()
    y = checkpoint(f, x, use_reentrant=False)
    assert y.grad_fn.name() == "ExpBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "SinBackward0"
    assert all(not hasattr(v, "shape") for v in y.grad_fn._saved)   # tickets, not arrays
    assert calls == [1]
    y.sum().backward()
    assert calls == [1, 1]   # recomputed once for both nodes
    v = np.array([0.5, 1.0])
    np.testing.assert_allclose(to_numpy(x.grad), np.exp(np.sin(v)) * np.cos(v), rtol=1e-12)


def test_reentrant_is_one_node():
    x = gpugrad.ones(2, requires_grad=True)
    y = checkpoint(lambda a: a.exp(), x, use_reentrant=True)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"
    assert len(y.grad_fn.next_functions) == 1   # the tensor input only, as PyTorch


def test_autograd_grad_and_double_backward_through_hooks(device):
    x = gpugrad.tensor([0.3, -0.4], device=device, dtype=gpugrad.float64, requires_grad=True)
    y = checkpoint(lambda a: (a.sin() * a).sum(), x, use_reentrant=False)
    (g,) = gpugrad.autograd.grad(y, x, create_graph=True)
    (gg,) = gpugrad.autograd.grad(g.sum(), x)
    v = np.array([0.3, -0.4])
    np.testing.assert_allclose(to_numpy(g), np.cos(v) * v + np.sin(v), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(gg), 2 * np.cos(v) - v * np.sin(v), rtol=1e-12)


def test_reentrant_refuses_autograd_grad():
    x = gpugrad.ones(2, requires_grad=True)
    y = checkpoint(lambda a: a.exp(), x, use_reentrant=True)
    with pytest.raises(RuntimeError, match=r"^When use_reentrant=True, torch.utils.checkpoint is "
                                           r"incompatible with \.grad\(\)"):
        gpugrad.autograd.grad(y.sum(), x)


@MODES
def test_dropout_draws_the_same_mask_when_recomputed(device, reentrant):
    gpugrad.manual_seed(0)
    drop = nn.Dropout(0.5)
    x = gpugrad.randn(2000, device=device, requires_grad=True)
    y = checkpoint(lambda a: drop(a) * a, x, use_reentrant=reentrant)
    y.sum().backward()
    kept = to_numpy(y) != 0
    assert 0.4 < kept.mean() < 0.6
    np.testing.assert_allclose(to_numpy(x.grad), np.where(kept, 4 * to_numpy(x), 0),
                               rtol=1e-6, atol=1e-7)


def test_random_streams_continue_after_a_checkpoint():
    """Recomputing replays the draws, then the stream resumes where the forward left it."""
    gpugrad.manual_seed(1)
    x = gpugrad.ones(3, requires_grad=True)
    y = checkpoint(lambda a: a * gpugrad.rand(3), x, use_reentrant=False)
    after = gpugrad.rand(2)
    y.sum().backward()
    assert gpugrad.equal(gpugrad.rand(2), gpugrad.rand(2)) is False
    gpugrad.manual_seed(1)
    gpugrad.rand(3)
    np.testing.assert_array_equal(to_numpy(after), to_numpy(gpugrad.rand(2)))


def test_checkpoint_sequential_matches_the_model(rng):
    gpugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))
    x = gpugrad.tensor(rng.standard_normal((5, 3)), dtype=gpugrad.float32)
    model(x).sum().backward()
    want = [to_numpy(p.grad).copy() for p in model.parameters()]
    model.zero_grad()
    out = checkpoint_sequential(model, 2, x, use_reentrant=False)
    out.sum().backward()
    for p, w in zip(model.parameters(), want):
        np.testing.assert_allclose(to_numpy(p.grad), w, rtol=1e-5, atol=1e-6)


def test_keyword_arguments():
    x = gpugrad.ones(2, requires_grad=True)
    y = checkpoint(lambda a, scale=1.0: a * scale, x, scale=3.0, use_reentrant=False)
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 3.0])
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: scale$"):
        checkpoint(lambda a, scale=1.0: a * scale, x, scale=3.0, use_reentrant=True)


def test_use_reentrant_left_out_warns_and_uses_the_reentrant_path():
    x = gpugrad.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="^torch.utils.checkpoint: the use_reentrant parameter "
                                         "should be passed explicitly"):
        y = checkpoint(lambda a: a.exp(), x)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"


def test_reentrant_without_inputs_that_require_grad_warns():
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True"):
        y = checkpoint(lambda a: a.exp(), gpugrad.ones(2), use_reentrant=True)
    assert not y.requires_grad


@MODES
def test_second_backward_fails_as_the_plain_graph(reentrant):
    x = gpugrad.ones(2, requires_grad=True)
    y = checkpoint(lambda a: a.sin().exp(), x, use_reentrant=reentrant).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward()


def test_retain_graph_recomputes_again():
    x = gpugrad.tensor([0.2, 0.4], dtype=gpugrad.float64, requires_grad=True)
    calls = []
    y = checkpoint(lambda a: calls.append(1) or a.exp().sin(), x, use_reentrant=False).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert len(calls) == 3
    v = np.array([0.2, 0.4])
    np.testing.assert_allclose(to_numpy(x.grad), 2 * np.cos(np.exp(v)) * np.exp(v), rtol=1e-12)


def test_a_function_that_saves_differently_when_recomputed():
    state = {"n": 0}

    def fickle(a):
        state["n"] += 1
        return a.exp() if state["n"] == 1 else a.exp().sin().cos()
    x = gpugrad.ones(2, requires_grad=True)
    y = checkpoint(fickle, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved during "
                                              "the original forward and recomputation"):
        y.sum().backward()


def test_same_gradients_as_pytorch(rng):
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint
    xv = rng.standard_normal((3, 4))
    out = {}
    for mod, ck in ((gpugrad, checkpoint), (torch, torch_checkpoint)):
        for reentrant in (False, True):
            x = mod.tensor(xv, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                y = ck(lambda a, m=mod: m.tanh(a).exp() * a, x, use_reentrant=reentrant)
            y.sum().backward()
            out[(mod.__name__, reentrant)] = x.grad.detach().numpy()
    for reentrant in (False, True):
        np.testing.assert_allclose(out[("gpugrad", reentrant)], out[("torch", reentrant)],
                                   rtol=1e-12)
