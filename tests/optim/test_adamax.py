"""Adamax: the first steps by hand."""
from __future__ import annotations

import numpy as np
from conftest import to_numpy

import gpugrad
import gpugrad.optim as optim

from .params import _one_param


def test_adamax_first_steps_are_analytic(device):
    p = _one_param([1.0, -1.0], [0.5, -2.0], device)
    opt = optim.Adamax([p], lr=0.1, betas=(0.8, 0.9), eps=1e-8)
    opt.step()
    m, u = 0.2 * np.array([0.5, -2.0]), np.array([0.5, 2.0]) + 1e-8
    want = np.array([1.0, -1.0]) - 0.1 / 0.2 * m / u
    np.testing.assert_allclose(to_numpy(p.detach()), want, rtol=1e-12)
    p.grad = gpugrad.tensor([0.1, -0.1], dtype=gpugrad.float64, device=device)
    opt.step()
    m = 0.8 * m + 0.2 * np.array([0.1, -0.1])
    u = np.maximum(0.9 * u, np.array([0.1, 0.1]) + 1e-8)   # the old infinity norm, decayed
    np.testing.assert_allclose(to_numpy(p.detach()), want - 0.1 / (1 - 0.8 ** 2) * m / u,
                               rtol=1e-12)
