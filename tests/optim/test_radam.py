"""RAdam: SGD steps until the variance of the adaptive rate is tractable, then the rectified
step, by hand."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad.optim as optim

from .params import _one_param


def test_radam_takes_sgd_steps_until_the_variance_is_tractable(device):
    p = _one_param([0.0], [1.0], device)
    opt = optim.RAdam([p], lr=0.1)
    x = 0.0
    for t in range(1, 6):   # rho_t <= 5 for the first five steps with beta2 = 0.999
        opt.step()
        x -= 0.1   # m_hat = 1 for a constant gradient
        assert to_numpy(p.detach())[0] == pytest.approx(x, rel=1e-12), t
    opt.step()   # step 6: rectified adaptive step, m_hat / sqrt(v_hat) = 1
    rho_inf = 2 / 0.001 - 1
    rho = rho_inf - 2 * 6 * 0.999 ** 6 / (1 - 0.999 ** 6)
    rect = np.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
    v = 1 - 0.999 ** 6
    step = 0.1 * np.sqrt(v) / (np.sqrt(v) + 1e-8) * rect
    assert to_numpy(p.detach())[0] == pytest.approx(x - step, rel=1e-10)
