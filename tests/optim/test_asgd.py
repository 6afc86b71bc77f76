"""ASGD: steps and the running average by hand, weight decay and the dtype of the scalar state,
argument errors with PyTorch's messages."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.optim as optim

from .params import param, set_grad, values


def test_asgd_steps_and_averages_by_hand(device):
    lr, lambd, alpha = 0.5, 0.1, 0.75
    p = param([1.0, -2.0], device)
    opt = optim.ASGD([p], lr=lr, lambd=lambd, alpha=alpha, t0=0)
    x, eta, mu, ax = np.array([1.0, -2.0]), lr, 1.0, None
    iterates = []
    for t, g in enumerate(([0.5, 1.0], [1.0, -1.0], [-2.0, 0.5], [0.25, 0.25]), start=1):
        set_grad(p, g)
        opt.step()
        x = x * (1 - lambd * eta) - eta * np.array(g)
        ax = x.copy() if mu == 1 else ax + (x - ax) * mu
        iterates.append(x)
        # eta and mu are float32 scalars under a float32 default dtype, as in PyTorch
        eta = float(np.float32(lr / (1 + lambd * lr * t) ** alpha))
        mu = float(np.float32(1 / max(1, t)))
        np.testing.assert_array_equal(values(p), x)          # the same operations, in order
        np.testing.assert_array_equal(to_numpy(opt.state[p]["ax"]), ax)
        assert float(opt.state[p]["eta"]) == eta and float(opt.state[p]["mu"]) == mu
    # from t0 = 0 on, ax is the running mean of the iterates after the first
    np.testing.assert_allclose(ax, np.mean(iterates[1:], axis=0), rtol=1e-7)


def test_asgd_weight_decay_and_scalar_dtype():
    gpugrad.set_default_dtype(gpugrad.float64)   # restored by the conftest fixture
    p = param([2.0])
    opt = optim.ASGD([p], lr=0.1, weight_decay=0.5, lambd=0.0)
    set_grad(p, [1.0])
    opt.step()
    assert values(p).tolist() == pytest.approx([2.0 - 0.1 * (1.0 + 0.5 * 2.0)], abs=1e-15)
    assert opt.state[p]["eta"].dtype == gpugrad.float64
    assert sorted(opt.state[p]) == ["ax", "eta", "mu", "step"]


def test_asgd_argument_errors():
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        optim.ASGD([param([0.0])], lr=-1)
    with pytest.raises(ValueError, match="^Invalid weight_decay value: -0.5$"):
        optim.ASGD([param([0.0])], weight_decay=-0.5)
