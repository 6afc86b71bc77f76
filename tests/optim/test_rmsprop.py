"""RMSprop: the first steps by hand (plain, centered, with momentum); the hyperparameter errors
of RMSprop and Adagrad."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad.optim as optim

from .params import _one_param


def test_rmsprop_first_steps_are_analytic(device):
    p = _one_param([1.0, -2.0], [2.0, 0.5], device)
    opt = optim.RMSprop([p], lr=0.1, alpha=0.9)
    opt.step()
    s = 0.1 * np.array([4.0, 0.25])
    np.testing.assert_allclose(to_numpy(p.detach()), [1.0, -2.0] - 0.1 * np.array([2.0, 0.5])
                               / (np.sqrt(s) + 1e-8), rtol=1e-12)
    q = _one_param([1.0], [2.0], device)
    opt = optim.RMSprop([q], lr=0.1, alpha=0.5, momentum=0.9, centered=True)
    opt.step()
    opt.step()   # s = 0.5 * 4 + 0.5 * 4 * 0.5 ... computed step by step below
    s, ga, buf, x = 0.0, 0.0, 0.0, 1.0
    for _ in range(2):
        s, ga = 0.5 * s + 0.5 * 4.0, 0.5 * ga + 0.5 * 2.0
        buf = 0.9 * buf + 2.0 / (np.sqrt(s - ga * ga) + 1e-8)
        x -= 0.1 * buf
    assert to_numpy(q.detach())[0] == pytest.approx(x, rel=1e-12)
    assert opt.state[q]["step"].item() == 2


def test_adaptive_optimizers_reject_bad_hyperparameters():
    p = _one_param([1.0], [1.0])
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        optim.RMSprop([p], lr=-1)
    with pytest.raises(ValueError, match="^Invalid alpha value: -0.5$"):
        optim.RMSprop([p], alpha=-0.5)
    with pytest.raises(ValueError, match="^Invalid lr_decay value: -1$"):
        optim.Adagrad([p], lr_decay=-1)
