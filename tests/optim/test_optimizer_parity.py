"""The optimizers against torch.optim (skipped without PyTorch): float64 steps of SGD, Adam,
AdamW, Adamax, NAdam, RAdam, Adadelta, Rprop and ASGD, and the Optimizer API (named parameters,
hooks, state dicts, key order, the module of the global hooks)."""
from __future__ import annotations

import importlib

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim

from .params import values


def _twin_models():
    torch = pytest.importorskip("torch")
    gpugrad.manual_seed(0)
    ours = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                 torch.nn.Linear(8, 3)).double()
    with torch.no_grad():
        for (_, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return torch, ours, theirs


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.01)),
    ("AdamW", dict(lr=0.01)),
])
def test_training_steps_match_torch(name, kwargs):
    torch, ours, theirs = _twin_models()
    opt_a = getattr(optim, name)(ours.parameters(), **kwargs)
    opt_b = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, y = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)
        losses = []
        for model, opt, lib in ((ours, opt_a, gpugrad), (theirs, opt_b, torch)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, kwargs", [
    ("Adamax", dict(lr=0.01, weight_decay=0.01)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.01)),
])
def test_more_optimizers_match_torch_for_eight_steps(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3))
    a, b = gpugrad.nn.Parameter(gpugrad.tensor(w.copy())), torch.nn.Parameter(torch.tensor(w))
    oa, ob = getattr(optim, name)([a], **kwargs), getattr(torch.optim, name)([b], **kwargs)
    for _ in range(8):   # past RAdam's switch to adaptive steps (step 6)
        g = rng.standard_normal((4, 3))
        a.grad, b.grad = gpugrad.tensor(g), torch.tensor(g)
        oa.step()
        ob.step()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-15)
    assert sorted(oa.state[a]) == sorted(ob.state[b])


@pytest.mark.parametrize("name, kwargs", [
    ("Rprop", {}),
    ("Rprop", dict(lr=0.1, etas=(0.3, 1.7), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", {}),
    ("ASGD", dict(lr=0.05, lambd=1e-3, t0=3)),
    ("ASGD", dict(lr=0.1, weight_decay=0.1, t0=2, alpha=0.5, maximize=True)),
])
def test_rprop_and_asgd_match_torch_for_eight_steps(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3))
    a, b = gpugrad.nn.Parameter(gpugrad.tensor(w.copy())), torch.nn.Parameter(torch.tensor(w))
    oa, ob = getattr(optim, name)([a], **kwargs), getattr(torch.optim, name)([b], **kwargs)
    for i in range(8):
        g = rng.standard_normal((4, 3))
        g[0, i % 3] = 0.0                        # zero gradients and sign flips on the way
        a.grad, b.grad = gpugrad.tensor(g), torch.tensor(g)
        oa.step()
        ob.step()
    np.testing.assert_allclose(values(a), b.detach().numpy(), rtol=1e-12, atol=1e-15)
    assert sorted(oa.state[a]) == sorted(ob.state[b])
    for key, theirs in ob.state[b].items():
        np.testing.assert_allclose(to_numpy(oa.state[a][key]), theirs.numpy(), rtol=1e-12,
                                   atol=1e-15)
        assert str(oa.state[a][key].dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def test_optimizer_api_matches_torch(torch):
    def run(mod):
        model = mod.nn.Linear(2, 1)
        named = mod.optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)
        log = []
        named.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), k)))
        named.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), k)))
        model(mod.ones(3, 2)).sum().backward()
        named.step()
        sd = named.state_dict()
        plain = mod.optim.SGD([model.weight, model.bias], lr=0.5)
        plain.load_state_dict(sd)
        optimizers = [getattr(mod.optim, n)([mod.zeros(2, 2, requires_grad=True)])
                      for n in ("RMSprop", "Adagrad", "Adadelta", "NAdam", "RAdam", "Muon",
                                "SparseAdam")]
        return (list(named.param_groups[0]), sd["param_groups"], sorted(sd["state"]), log,
                list(plain.param_groups[0]), plain.param_groups[0]["param_names"],
                [(list(o.defaults), list(o.param_groups[0])) for o in optimizers])

    assert run(gpugrad) == run(torch)


def test_global_hook_module_path_matches_torch(torch):
    for mod in (gpugrad, torch):
        module = importlib.import_module(mod.__name__ + ".optim.optimizer")
        h = module.register_optimizer_step_pre_hook(lambda *a: None)
        h.remove()
