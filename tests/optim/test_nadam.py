"""NAdam: its state and momentum schedule; the argument errors of NAdam, Adamax and Adadelta."""
from __future__ import annotations

import pytest

import gpugrad.optim as optim

from .params import _one_param


def test_nadam_state_and_momentum_schedule():
    p = _one_param([1.0], [1.0])
    opt = optim.NAdam([p], lr=0.1, momentum_decay=0.004)
    opt.step()
    opt.step()
    mu = [0.9 * (1 - 0.5 * 0.96 ** (t * 0.004)) for t in (1, 2)]
    assert opt.state[p]["mu_product"].item() == pytest.approx(mu[0] * mu[1], rel=1e-6)
    assert sorted(opt.state[p]) == ["exp_avg", "exp_avg_sq", "mu_product", "step"]
    with pytest.raises(ValueError, match="^Invalid momentum_decay value: -1$"):
        optim.NAdam([p], momentum_decay=-1)
    with pytest.raises(ValueError, match="^Invalid beta parameter at index 1: 1.0$"):
        optim.Adamax([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="^Invalid rho value: 1.5$"):
        optim.Adadelta([p], rho=1.5)
