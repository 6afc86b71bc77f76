"""Adadelta: the first step by hand."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad.optim as optim

from .params import _one_param


def test_adadelta_first_step_is_analytic(device):
    p = _one_param([1.0], [2.0], device)
    optim.Adadelta([p], lr=1.0, rho=0.9, eps=1e-6).step()
    s = 0.1 * 4.0
    delta = np.sqrt(1e-6) / np.sqrt(s + 1e-6) * 2.0
    assert to_numpy(p.detach())[0] == pytest.approx(1.0 - delta, rel=1e-12)
