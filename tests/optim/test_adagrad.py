"""Adagrad: the sum of squares and the decayed rate, by hand."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad.optim as optim

from .params import _one_param


def test_adagrad_accumulates_squares_and_decays_the_rate(device):
    p = _one_param([1.0], [2.0], device)
    opt = optim.Adagrad([p], lr=0.5, lr_decay=0.1, initial_accumulator_value=1.0)
    assert opt.state[p]["sum"].item() == 1.0   # created with the optimizer, as PyTorch does
    opt.step()
    opt.step()
    x = 1.0 - 0.5 * 2.0 / (np.sqrt(5.0) + 1e-10)
    x -= 0.5 / 1.1 * 2.0 / (np.sqrt(9.0) + 1e-10)
    assert to_numpy(p.detach())[0] == pytest.approx(x, rel=1e-12)
