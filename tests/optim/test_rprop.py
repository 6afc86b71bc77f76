"""Rprop: steps by hand, clamped step sizes and maximize, argument errors with PyTorch's
messages."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad.optim as optim

from .params import param, set_grad, values


def test_rprop_steps_by_hand(device):
    p = param([1.0, 2.0, 3.0], device)
    opt = optim.Rprop([p], lr=0.1)
    for g in ([1.0, -1.0, 2.0],    # no history: every step size stays lr
              [2.0, 1.0, 0.0],     # same sign: x1.2; flipped: x0.5 and no move; zero: no move
              [3.0, -1.0, -1.0]):  # after a flip the gradient counts as 0: size kept
        set_grad(p, g)
        opt.step()
    np.testing.assert_allclose(values(p), [1 - 0.1 - 0.12 - 0.144, 2.1 + 0.05, 2.9 + 0.1],
                               rtol=1e-15)
    st = opt.state[p]
    np.testing.assert_allclose(to_numpy(st["step_size"]), [0.144, 0.05, 0.1], rtol=1e-15)
    np.testing.assert_array_equal(to_numpy(st["prev"]), [3.0, -1.0, -1.0])
    assert float(st["step"]) == 3.0


def test_rprop_clamps_step_sizes_and_maximizes():
    p = param([0.0, 0.0])
    opt = optim.Rprop([p], lr=0.1, etas=(0.25, 2.0), step_sizes=(0.03, 0.15), maximize=True)
    for g in ([1.0, 1.0], [1.0, -1.0], [1.0, -1.0]):
        set_grad(p, g)
        opt.step()
    # sizes: [0.1, 0.1] -> [0.15 (0.2 clamped), 0.03 (0.025 clamped)] -> [0.15, 0.03]
    np.testing.assert_allclose(values(p), [0.1 + 0.15 + 0.15, 0.1 + 0.0 - 0.03], rtol=1e-15)


def test_rprop_argument_errors():
    with pytest.raises(ValueError, match="^Invalid learning rate: -0.1$"):
        optim.Rprop([param([0.0])], lr=-0.1)
    for etas in ((1.5, 1.2), (0.5, 0.9), (0.0, 1.2)):
        with pytest.raises(ValueError, match=f"^Invalid eta values: {etas[0]}, {etas[1]}$"):
            optim.Rprop([param([0.0])], etas=etas)
