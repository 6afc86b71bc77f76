"""Adafactor: the first step by hand, argument errors with PyTorch's messages, a float32 run on
the device, and (when PyTorch is installed) step-by-step agreement with torch.optim in float64."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim


def test_adafactor_first_step_by_hand():
    w0 = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0]])
    g = np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]])
    b0, gb = np.array([2.0, -1.0]), np.array([0.3, -0.4])
    w, b = nn.Parameter(tensor(w0)), nn.Parameter(tensor(b0))
    opt = optim.Adafactor([w, b], lr=0.01, weight_decay=0.1)
    w.grad, b.grad = tensor(g), tensor(gb)
    opt.step()
    # step 1: b2_t = 1, rho = min(lr, 1) = lr; the variance estimates become g^2 exactly
    eps1 = np.finfo(np.float64).eps
    rho = 0.01
    alpha = max(1e-3, np.sqrt(np.mean(w0 ** 2))) * rho
    row, col = (g ** 2).mean(1, keepdims=True), (g ** 2).mean(0, keepdims=True)
    v = row @ col / max(row.mean(), eps1)
    u = g / np.sqrt(np.maximum(v, eps1 ** 2))
    expect = w0 * (1 - 0.01 * 0.1) - alpha / max(1.0, np.sqrt(np.mean(u ** 2))) * u
    np.testing.assert_allclose(to_numpy(w), expect, rtol=1e-14)
    ub = gb / np.abs(gb)
    alpha_b = max(1e-3, np.sqrt(np.mean(b0 ** 2))) * rho
    np.testing.assert_allclose(to_numpy(b), b0 * (1 - 0.001) - alpha_b * ub, rtol=1e-14)
    st = opt.state[w]
    assert sorted(st) == ["col_var", "row_var", "step"]
    assert st["row_var"].shape == (2, 1) and st["col_var"].shape == (1, 3)
    assert sorted(opt.state[b]) == ["step", "variance"] and float(st["step"].item()) == 1.0


@pytest.mark.parametrize("kwargs", [dict(), dict(lr=0.05, beta2_decay=-0.5, d=1.5),
                                    dict(weight_decay=0.2, maximize=True, eps=(1e-10, 1e-2))])
def test_adafactor_matches_torch_step_by_step(kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    shapes = [(3, 4), (2, 3, 2), (5,), ()]
    start = [rng.standard_normal(s) for s in shapes]
    ours = [nn.Parameter(tensor(a.copy())) for a in start]
    theirs = [torch.nn.Parameter(torch.tensor(a.copy())) for a in start]
    oa, ob = optim.Adafactor(ours, **kwargs), torch.optim.Adafactor(theirs, **kwargs)
    for _ in range(6):
        for a, b, s in zip(ours, theirs, shapes):
            g = rng.standard_normal(s)
            a.grad, b.grad = tensor(g), torch.tensor(g)
        oa.step()
        ob.step()
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-12, atol=1e-15)
    for a, b in zip(ours, theirs):
        assert sorted(oa.state[a]) == sorted(ob.state[b])
        for k in oa.state[a]:
            np.testing.assert_allclose(to_numpy(oa.state[a][k]), ob.state[b][k].numpy(),
                                       rtol=1e-12, atol=1e-15)


def test_adafactor_runs_on_the_device_in_float32(device):
    w = nn.Parameter(gpugrad.ones(2, 3, device=device))
    opt = optim.Adafactor([w], lr=0.1)
    w.grad = gpugrad.full((2, 3), 0.5, device=device)
    opt.step()
    # g constant: u = sign(g) = 1, RMS(w) = 1, so w = 1 - lr
    np.testing.assert_allclose(to_numpy(w), np.full((2, 3), 0.9), rtol=1e-6)
    assert w.dtype == gpugrad.float32 and opt.state[w]["row_var"].device == w.device


@pytest.mark.parametrize("kwargs,message", [
    (dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
    (dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    (dict(eps=(-1.0, 1e-3)), "epsilon1 should be >= 0 but is: -1.0"),
    (dict(eps=(None, -1.0)), "epsilon2 should be >= 0 but is: -1.0"),
    (dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    (dict(weight_decay=-0.1), "weight_decay should be >= 0 but is: -0.1"),
])
def test_adafactor_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        optim.Adafactor([nn.Parameter(tensor([1.0]))], **kwargs)


def test_adafactor_rejects_complex_parameters():
    p = nn.Parameter(gpugrad.tensor([1 + 1j]))
    p.grad = gpugrad.tensor([1 + 0j])
    with pytest.raises(RuntimeError, match="Adafactor does not support complex parameters"):
        optim.Adafactor([p]).step()
