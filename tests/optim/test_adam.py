"""Adam and AdamW: the first steps against hand-computed numbers (L2 and decoupled weight
decay, AMSGrad) and the argument errors."""
from __future__ import annotations

import numpy as np
import pytest

import gpugrad
import gpugrad.optim as optim

from .params import G1, G2, param, steps

EPS = 1e-8


def test_adam_first_step():
    p = param()   # m-hat = g, v-hat = g^2: each coordinate moves by lr |g| / (|g| + eps)
    steps(optim.Adam([p], lr=0.1), p, [G1])
    assert p.tolist() == pytest.approx([1 - 0.1 * 0.5 / (0.5 + EPS), 2 + 0.1 / (1 + EPS)],
                                       abs=1e-15)


def test_adam_second_step():
    p = param()
    opt = optim.Adam([p], lr=0.1)
    steps(opt, p, [G1, G2])
    m = np.array([0.9 * 0.05 + 0.1, 0.9 * -0.1 + 0.1])               # [0.145, 0.01]
    v = np.array([0.999 * 0.00025 + 0.001, 0.999 * 0.001 + 0.001])   # [0.00124975, 0.001999]
    first = np.array([1 - 0.1 * 0.5 / (0.5 + EPS), 2 + 0.1 / (1 + EPS)])
    expect = first - 0.1 * (m / 0.19) / (np.sqrt(v / (1 - 0.999 ** 2)) + EPS)
    np.testing.assert_allclose(p.tolist(), expect, rtol=1e-13)
    st = opt.state[p]
    assert st["step"].item() == 2.0 and st["step"].dtype == gpugrad.float32
    np.testing.assert_allclose(st["exp_avg"].tolist(), m, rtol=1e-13)
    np.testing.assert_allclose(st["exp_avg_sq"].tolist(), v, rtol=1e-13)


def test_adam_l2_weight_decay():
    p = param()   # g + 0.1 p = [0.6, -0.8]
    steps(optim.Adam([p], lr=0.1, weight_decay=0.1), p, [G1])
    assert p.tolist() == pytest.approx([1 - 0.1 * 0.6 / (0.6 + EPS), 2 + 0.1 * 0.8 / (0.8 + EPS)],
                                       abs=1e-15)


def test_adamw_decoupled_weight_decay():
    p = param()   # p *= 1 - 0.1 * 0.1 first, then the plain Adam step
    opt = optim.AdamW([p], lr=0.1, weight_decay=0.1)
    steps(opt, p, [G1])
    assert p.tolist() == pytest.approx([0.99 - 0.1 * 0.5 / (0.5 + EPS), 1.98 + 0.1 / (1 + EPS)],
                                       abs=1e-15)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True


def test_adam_amsgrad_keeps_the_max_second_moment():
    p, q = param(), param()
    a = optim.Adam([p], lr=0.1, amsgrad=True)
    b = optim.Adam([q], lr=0.1)
    big, small = [10.0, 10.0], [0.1, 0.1]
    steps(a, p, [big, small])
    steps(b, q, [big, small])
    v = 0.999 * 0.001 * 100 + 0.001 * 0.01
    vmax = max(v, 0.001 * 100)
    assert a.state[p]["max_exp_avg_sq"].tolist() == pytest.approx([vmax] * 2, rel=1e-13)
    assert p.tolist() != q.tolist()


def test_adam_argument_errors():
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1: 1.0"):
        optim.Adam([param()], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Invalid epsilon value: -1"):
        optim.Adam([param()], eps=-1)


def test_adam_amsgrad_with_weight_decay_matches_pytorch_values():
    w = gpugrad.tensor([0.5, -1.0, 2.0], dtype=gpugrad.float64, requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True, weight_decay=0.01)
    for k in range(5):
        opt.zero_grad()
        ((w ** 3).sum() * (1 if k % 2 else -1)).backward()
        opt.step()
    # values printed by torch 2.13 for the same steps
    np.testing.assert_allclose(w.tolist(), [0.598088139803425, -0.8309698771165656,
                                            2.1313629064939064], rtol=1e-12)
    np.testing.assert_allclose(opt.state[w]["max_exp_avg_sq"].tolist(),
                               [0.004931883387374039, 0.03030980475237974, 0.8500242052010174],
                               rtol=1e-12)


@pytest.mark.parametrize("amsgrad, decoupled, wd", [(False, False, 0.0), (False, True, 0.1),
                                                    (True, False, 0.1)])
def test_the_capturable_step_takes_the_fused_steps_values(amsgrad, decoupled, wd):
    """capturable=True keeps the step count on the device and forms the bias corrections there
    (adam._device_step); three steps of it give the values of the fused step's reference."""
    from gpugrad import kernels
    from gpugrad.optim.adam import _amsgrad_step, _device_step
    rng = np.random.default_rng(0)
    p0, grads = rng.standard_normal(50), rng.standard_normal((3, 50))
    p, m, v, vmax = p0.copy(), np.zeros(50), np.zeros(50), np.zeros(50)
    q, mq, vq, vmaxq = p0.copy(), np.zeros(50), np.zeros(50), np.zeros(50)
    step = np.zeros((), np.float32)
    for t, g in enumerate(grads, 1):
        if amsgrad:
            _amsgrad_step(p, g, m, v, vmax, 0.01, 0.9, 0.999, 1e-8, wd, t, decoupled)
        else:
            kernels.adam_step(p, g, m, v, 0.01, 0.9, 0.999, 1e-8, wd, t, decoupled)
        step += 1
        _device_step(q, g, mq, vq, gpugrad.Tensor._make(vmaxq) if amsgrad else None, step,
                     0.01, 0.9, 0.999, 1e-8, wd, decoupled)
    np.testing.assert_allclose(q, p, rtol=1e-12, atol=1e-14)
