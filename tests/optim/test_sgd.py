"""SGD: one step with momentum, dampening, Nesterov, weight decay and maximize against
hand-computed numbers, and its argument errors."""
from __future__ import annotations

import pytest

import gpugrad.optim as optim

from .params import G1, G2, param, set_grad, steps


def test_sgd_plain_step():
    p = param()
    assert steps(optim.SGD([p], lr=0.1), p, [G1]) == pytest.approx([0.95, 2.1], abs=1e-15)


def test_sgd_weight_decay():
    p = param()   # d = g + 0.1 p = [0.6, -0.8]
    assert steps(optim.SGD([p], lr=0.1, weight_decay=0.1), p, [G1]) == pytest.approx(
        [0.94, 2.08], abs=1e-15)


def test_sgd_momentum_two_steps():
    p = param()   # buf = g1, then 0.9 g1 + g2 = [1.45, 0.1]
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    assert steps(opt, p, [G1]) == pytest.approx([0.95, 2.1], abs=1e-15)
    assert steps(opt, p, [G2]) == pytest.approx([0.805, 2.09], abs=1e-15)
    assert opt.state[p]["momentum_buffer"].tolist() == pytest.approx([1.45, 0.1], abs=1e-15)


def test_sgd_dampening():
    p = param()   # second buf = 0.9 g1 + 0.5 g2 = [0.95, -0.4]
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.5)
    assert steps(opt, p, [G1, G2]) == pytest.approx([0.855, 2.14], abs=1e-15)


def test_sgd_nesterov():
    p = param()   # d = g + 0.9 buf: [0.95, -1.9], then [2.305, 1.09]
    opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True)
    assert steps(opt, p, [G1]) == pytest.approx([0.905, 2.19], abs=1e-15)
    assert steps(opt, p, [G2]) == pytest.approx([0.6745, 2.081], abs=1e-15)


def test_sgd_maximize_and_skips_params_without_grad():
    p, q = param(), param()
    opt = optim.SGD([p, q], lr=0.1, maximize=True)
    set_grad(p, G1)
    opt.step()
    assert p.tolist() == pytest.approx([1.05, 1.9], abs=1e-15) and q.tolist() == [1.0, 2.0]


def test_sgd_argument_errors():
    p = [param()]
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="Invalid momentum value: -0.5"):
        optim.SGD(p, momentum=-0.5)
    with pytest.raises(ValueError, match="Nesterov momentum requires a momentum and zero "
                                         "dampening"):
        optim.SGD(p, nesterov=True)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        optim.SGD([])
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        optim.SGD([p[0] * 2])
