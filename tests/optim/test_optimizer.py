"""gpugrad.optim: one step of each optimizer against hand-computed numbers, groups, state dicts,
schedules, and (when PyTorch is installed) a training step against torch."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim

EPS = 1e-8


def param(values=(1.0, 2.0)):
    return nn.Parameter(gpugrad.tensor(values, dtype=gpugrad.float64))


def set_grad(p, values):
    p.grad = gpugrad.tensor(values, dtype=p.dtype)


def steps(opt, p, grads):
    for g in grads:
        set_grad(p, g)
        opt.step()
    return p.tolist()


G1, G2 = [0.5, -1.0], [1.0, 1.0]


# -- SGD ----------------------------------------------------------------------------------------
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


# -- Adam / AdamW ---------------------------------------------------------------------------------
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


# -- Optimizer base -------------------------------------------------------------------------------
def test_step_bumps_the_version_counter():
    p = param()
    y = (p * p).sum()
    opt = optim.SGD([p], lr=0.1)
    v = p._version
    set_grad(p, G1)
    opt.step()
    assert p._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_zero_grad_both_ways():
    p = param()
    opt = optim.SGD([p], lr=0.1)
    set_grad(p, G1)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_param_groups():
    a, b = param(), param()
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1, momentum=0.5)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["params"] == [b]
    set_grad(a, G1)
    set_grad(b, G1)
    opt.step()
    assert a.tolist() == pytest.approx([0.95, 2.1]) and b.tolist() == pytest.approx([0.5, 3.0])
    c = param()
    opt.add_param_group({"params": [c], "lr": 0.5})
    assert opt.param_groups[2]["momentum"] == 0.5
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [a]})


def test_optimizer_repr():
    opt = optim.SGD([param()], lr=0.1, momentum=0.9)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
                         "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
                         "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)")


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1),
                                  lambda ps: optim.AdamW(ps, lr=0.1)],
                         ids=["sgd", "adam", "adamw"])
def test_optimizer_state_dict_round_trip(make):
    gpugrad.manual_seed(0)
    grads = [gpugrad.randn(2, dtype=gpugrad.float64).tolist() for _ in range(4)]
    p = param()
    opt = make([p])
    steps(opt, p, grads[:2])
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"] and sd["param_groups"][0]["params"] == [0]
    q = param(p.tolist())
    other = make([q])
    other.load_state_dict(sd)
    assert other.state[q] and all(v is not w for v, w in zip(other.state[q].values(),
                                                             opt.state[p].values()))
    assert steps(opt, p, grads[2:]) == steps(other, q, grads[2:])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict({"state": {}, "param_groups": []})


# -- schedules ------------------------------------------------------------------------------------
def test_step_lr():
    opt = optim.SGD([param()], lr=1.0)
    sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(4):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]


def test_cosine_annealing_lr():
    opt = optim.SGD([param()], lr=1.0)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4, eta_min=0.0)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(4):
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    expect = [1.0, (1 + math.cos(math.pi / 4)) / 2, 0.5, (1 + math.cos(3 * math.pi / 4)) / 2, 0.0]
    assert lrs == pytest.approx(expect, abs=1e-15)
    state = sched.state_dict()
    assert state["last_epoch"] == 4 and "optimizer" not in state


# -- oracle ---------------------------------------------------------------------------------------
def _twin_models():
    torch = pytest.importorskip("torch")
    gpugrad.manual_seed(0)
    ours = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                 torch.nn.Linear(8, 3)).double()
    with torch.no_grad():
        for (_, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    return torch, ours, theirs


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("Adam", dict(lr=0.01, weight_decay=0.01)),
    ("AdamW", dict(lr=0.01)),
])
def test_training_steps_match_torch(name, kwargs):
    torch, ours, theirs = _twin_models()
    opt_a = getattr(optim, name)(ours.parameters(), **kwargs)
    opt_b = getattr(torch.optim, name)(theirs.parameters(), **kwargs)
    rng = np.random.default_rng(0)
    for _ in range(3):
        x, y = rng.standard_normal((5, 4)), rng.integers(0, 3, 5)
        losses = []
        for model, opt, lib in ((ours, opt_a, gpugrad), (theirs, opt_b, torch)):
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(lib.tensor(x)), lib.tensor(y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_schedules_match_torch():
    torch = pytest.importorskip("torch")
    w = torch.zeros(1, requires_grad=True)
    for make_a, make_b in (
            (lambda o: optim.lr_scheduler.StepLR(o, 3, 0.3),
             lambda o: torch.optim.lr_scheduler.StepLR(o, 3, 0.3)),
            (lambda o: optim.lr_scheduler.CosineAnnealingLR(o, 5, 0.01),
             lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 5, 0.01))):
        oa, ob = optim.SGD([param()], lr=0.5), torch.optim.SGD([w], lr=0.5)
        sa, sb = make_a(oa), make_b(ob)
        for _ in range(8):
            oa.step()
            ob.step()
            sa.step()
            sb.step()
            assert sa.get_last_lr()[0] == pytest.approx(sb.get_last_lr()[0], rel=1e-12)


# -- RMSprop, Adagrad ---------------------------------------------------------------------------
def _one_param(value, grad, device="cpu"):
    p = gpugrad.nn.Parameter(gpugrad.tensor(np.asarray(value, np.float64), device=device))
    p.grad = gpugrad.tensor(np.asarray(grad, np.float64), device=device)
    return p


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


def test_adagrad_accumulates_squares_and_decays_the_rate(device):
    p = _one_param([1.0], [2.0], device)
    opt = optim.Adagrad([p], lr=0.5, lr_decay=0.1, initial_accumulator_value=1.0)
    assert opt.state[p]["sum"].item() == 1.0   # created with the optimizer, as PyTorch does
    opt.step()
    opt.step()
    x = 1.0 - 0.5 * 2.0 / (np.sqrt(5.0) + 1e-10)
    x -= 0.5 / 1.1 * 2.0 / (np.sqrt(9.0) + 1e-10)
    assert to_numpy(p.detach())[0] == pytest.approx(x, rel=1e-12)


def test_adaptive_optimizers_reject_bad_hyperparameters():
    p = _one_param([1.0], [1.0])
    with pytest.raises(ValueError, match="^Invalid learning rate: -1$"):
        optim.RMSprop([p], lr=-1)
    with pytest.raises(ValueError, match="^Invalid alpha value: -0.5$"):
        optim.RMSprop([p], alpha=-0.5)
    with pytest.raises(ValueError, match="^Invalid lr_decay value: -1$"):
        optim.Adagrad([p], lr_decay=-1)


# -- more schedules ------------------------------------------------------------------------------
def _lrs(make, steps, metrics=None):
    p = _one_param([0.0], [0.0])
    opt = optim.SGD([p], lr=0.5)
    sched = make(opt)
    out = []
    for i in range(steps):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        out.append(opt.param_groups[0]["lr"])
    return out


def test_exponential_multistep_and_linear_schedules():
    L = optim.lr_scheduler
    assert _lrs(lambda o: L.ExponentialLR(o, 0.5), 3) == [0.25, 0.125, 0.0625]
    assert _lrs(lambda o: L.MultiStepLR(o, [2, 4, 4], 0.1), 5) == pytest.approx(
        [0.5, 0.05, 0.05, 0.0005, 0.0005])
    assert _lrs(lambda o: L.LinearLR(o, 0.5, 1.0, 4), 5) == pytest.approx(
        [0.3125, 0.375, 0.4375, 0.5, 0.5])


def test_reduce_lr_on_plateau_waits_for_patience_then_cools_down():
    L = optim.lr_scheduler
    metrics = [1.0, 0.9] + [0.9] * 7
    lrs = _lrs(lambda o: L.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1, min_lr=0.1),
               len(metrics), metrics)
    # three bad epochs (> patience 2) halve the rate at step 5; the cooldown swallows step 6's
    # bad epoch, so the next three end at step 9
    assert lrs == [0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.125]
    lrs = _lrs(lambda o: L.ReduceLROnPlateau(o, mode="max", factor=0.1, patience=0,
                                             min_lr=0.2), 3, [1.0, 0.5, 0.5])
    assert lrs == [0.5, 0.2, 0.2]   # never below min_lr


def test_one_cycle_rises_to_max_then_falls_and_cycles_momentum(tmp_path):
    L = optim.lr_scheduler
    p = _one_param([0.0], [0.0])
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    sched = L.OneCycleLR(opt, max_lr=1.0, total_steps=10, pct_start=0.3)
    lrs, moms = [], []
    for _ in range(10):
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
        opt.step()
        sched.step()
    assert lrs[0] == pytest.approx(1.0 / 25) and moms[0] == pytest.approx(0.95)
    assert lrs[2] == pytest.approx(1.0) and moms[2] == pytest.approx(0.85)   # step pct*10 - 1
    assert lrs[9] == pytest.approx(1.0 / 25 / 1e4)                           # the last step
    assert lrs.index(max(lrs)) == 2 and moms.index(min(moms)) == 2
    with pytest.raises(ValueError, match="^Tried to step 11 times. The specified number of total "
                                         "steps is 10$"):
        sched.step()
    gpugrad.save(sched.state_dict(), tmp_path / "s.npz")   # plain data, saved without pickle
    adam = optim.Adam([p], lr=0.1)
    L.OneCycleLR(adam, max_lr=0.5, epochs=2, steps_per_epoch=5)
    assert adam.param_groups[0]["betas"][0] == pytest.approx(0.95)   # beta1 cycles for Adam
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        L.OneCycleLR(adam, max_lr=0.5)
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        L.OneCycleLR(optim.Adagrad([p]), max_lr=0.5, total_steps=5)


# -- Adamax, NAdam, RAdam, Adadelta ------------------------------------------------------------
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


def test_adadelta_first_step_is_analytic(device):
    p = _one_param([1.0], [2.0], device)
    optim.Adadelta([p], lr=1.0, rho=0.9, eps=1e-6).step()
    s = 0.1 * 4.0
    delta = np.sqrt(1e-6) / np.sqrt(s + 1e-6) * 2.0
    assert to_numpy(p.detach())[0] == pytest.approx(1.0 - delta, rel=1e-12)


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


@pytest.mark.parametrize("name, kwargs", [
    ("Adamax", dict(lr=0.01, weight_decay=0.01)),
    ("Adamax", dict(lr=0.01, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.01)),
])
def test_more_optimizers_match_torch_for_eight_steps(name, kwargs):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3))
    a, b = gpugrad.nn.Parameter(gpugrad.tensor(w.copy())), torch.nn.Parameter(torch.tensor(w))
    oa, ob = getattr(optim, name)([a], **kwargs), getattr(torch.optim, name)([b], **kwargs)
    for _ in range(8):   # past RAdam's switch to adaptive steps (step 6)
        g = rng.standard_normal((4, 3))
        a.grad, b.grad = gpugrad.tensor(g), torch.tensor(g)
        oa.step()
        ob.step()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-15)
    assert sorted(oa.state[a]) == sorted(ob.state[b])


# -- polynomial, constant, warm restarts, sequential ----------------------------------------------
def test_polynomial_constant_and_warm_restart_schedules():
    L = optim.lr_scheduler
    assert _lrs(lambda o: L.PolynomialLR(o, total_iters=4, power=2.0), 5) == pytest.approx(
        [0.5 * 0.75 ** 2, 0.5 * 0.25, 0.5 * 0.0625, 0.0, 0.0])
    assert _lrs(lambda o: L.ConstantLR(o, factor=0.5, total_iters=2), 3) == [0.25, 0.5, 0.5]
    lrs = _lrs(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2), 7)
    # cycles of 2, 4, then 8 epochs: restarts (lr back to 0.5) at epochs 2 and 6
    assert lrs == pytest.approx([0.25, 0.5, 0.5 * (1 + np.cos(np.pi / 4)) / 2, 0.25,
                                 0.5 * (1 + np.cos(3 * np.pi / 4)) / 2, 0.5,
                                 0.5 * (1 + np.cos(np.pi / 8)) / 2])
    with pytest.raises(ValueError, match="^Expected positive integer T_0, but got 0$"):
        _lrs(lambda o: L.CosineAnnealingWarmRestarts(o, T_0=0), 1)


def test_sequential_lr_hands_over_at_the_milestones():
    L = optim.lr_scheduler
    lrs = _lrs(lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.1, total_iters=2),
                                            L.ExponentialLR(o, 0.5)], milestones=[2]), 4)
    assert lrs == pytest.approx([0.05, 0.5, 0.25, 0.125])   # ExponentialLR from its epoch 0
    p = _one_param([0.0], [0.0])
    opt = optim.SGD([p], lr=0.5)
    with pytest.raises(ValueError, match="expects number of schedulers provided to be one more"):
        L.SequentialLR(opt, [L.ConstantLR(opt), L.ExponentialLR(opt, 0.5)], milestones=[])


def test_more_schedules_match_torch():
    torch = pytest.importorskip("torch")
    cases = [
        lambda o, L: L.PolynomialLR(o, total_iters=10, power=2.0),
        lambda o, L: L.ConstantLR(o, factor=0.5, total_iters=4),
        lambda o, L: L.CosineAnnealingWarmRestarts(o, 3, 2, 0.01),
        lambda o, L: L.SequentialLR(o, [L.LinearLR(o, 0.1, total_iters=3),
                                        L.CosineAnnealingLR(o, 6)], [3]),
    ]
    for case in cases:
        w = torch.zeros(1, requires_grad=True)
        oa, ob = optim.SGD([param()], lr=0.5), torch.optim.SGD([w], lr=0.5)
        sa, sb = case(oa, optim.lr_scheduler), case(ob, torch.optim.lr_scheduler)
        assert oa.param_groups[0]["lr"] == pytest.approx(ob.param_groups[0]["lr"], rel=1e-12)
        for _ in range(20):
            oa.step()
            ob.step()
            sa.step()
            sb.step()
            assert sa.get_last_lr()[0] == pytest.approx(sb.get_last_lr()[0], rel=1e-12,
                                                        abs=1e-15)
