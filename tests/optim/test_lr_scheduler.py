"""gpugrad.optim.lr_scheduler: every schedule's rates worked out by hand, chainable schedules
(two on one optimizer compose, hand edits of the lr are kept, resuming through state_dict or
last_epoch), their warnings and state dicts with PyTorch's messages and keys, and (when PyTorch is
installed) short runs against torch.optim.lr_scheduler; ``test_lr_scheduler_parity`` replays
every schedule against torch systematically."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

import gpugrad
import gpugrad.optim as optim

from .params import _one_param, messages, param, sgd

L = optim.lr_scheduler

BEFORE_OPT_STEP = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and "
    "later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value "
    "of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")
OVERRIDDEN = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. "
    "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate")
EPOCH_DEPRECATED = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")
GET_LR = "To get the last learning rate computed by the scheduler, please use `get_last_lr()`."


def epochs(opt, scheds, n, edit=None):
    """The group-0 lr after each of n epochs (optimizer step, then every scheduler's step);
    ``edit(epoch, group)`` may change the lr by hand after an epoch."""
    out = []
    for e in range(1, n + 1):
        opt.step()
        for s in scheds:
            s.step()
        if edit is not None:
            edit(e, opt.param_groups[0])
        out.append(opt.param_groups[0]["lr"])
    return out


# -- schedules by epoch ----------------------------------------------------------------------------
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


def lrs(make, steps, opt=None, key=None):
    """The lr (and optionally another group entry) after construction and after each step."""
    opt = opt or optim.SGD([param([0.0])], lr=1.0, momentum=0.9)
    sched = make(opt)
    out = [opt.param_groups[0][key or "lr"]]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(opt.param_groups[0][key or "lr"])
    return out


def test_multiplicative_lr_multiplies_the_previous_rate():
    assert lrs(lambda o: L.MultiplicativeLR(o, lambda e: 0.5), 3) == [1.0, 0.5, 0.25, 0.125]
    assert lrs(lambda o: L.MultiplicativeLR(o, lambda e: e), 4) == [1.0, 1.0, 2.0, 6.0, 24.0]
    opt = optim.SGD([param([0.0])], lr=1.0)
    with pytest.raises(ValueError, match="^Expected 1 lr_lambdas, but got 2$"):
        L.MultiplicativeLR(opt, [lambda e: 1.0] * 2)
    with pytest.raises(TypeError, match="^lr_lambda should be a function, but got float$"):
        L.MultiplicativeLR(opt, 0.5)
    # a plain function is not state: PyTorch saves None in its place
    assert L.MultiplicativeLR(opt, lambda e: 0.9).state_dict()["lr_lambdas"] == [None]


def test_chained_scheduler_composes_the_factors():
    got = lrs(lambda o: L.ChainedScheduler([L.StepLR(o, 2, 0.5), L.ExponentialLR(o, 0.9)]), 6)
    assert got == pytest.approx([0.5 ** (e // 2) * 0.9 ** e for e in range(7)], rel=1e-14)
    got = lrs(lambda o: L.ChainedScheduler([L.LinearLR(o, 0.5, total_iters=2),
                                            L.ConstantLR(o, 0.5, total_iters=3)]), 4)
    assert got == pytest.approx([0.25, 0.375, 0.5, 1.0, 1.0], rel=1e-14)
    got = lrs(lambda o: L.ChainedScheduler([L.ExponentialLR(o, 0.5),
                                            L.MultiplicativeLR(o, lambda e: 0.1)]), 2)
    assert got == pytest.approx([1.0, 0.05, 0.0025], rel=1e-14)
    got = lrs(lambda o: L.ChainedScheduler([L.ExponentialLR(o, 0.5),
                                            L.LambdaLR(o, lambda e: 0.1 * (e + 1))]), 2)
    assert got == pytest.approx([0.1, 0.2, 0.3], rel=1e-14)   # LambdaLR sets the rate outright


def test_chained_scheduler_state_dict_nests_its_schedulers():
    opt = optim.SGD([param([0.0])], lr=1.0)
    chained = L.ChainedScheduler([L.StepLR(opt, 2, 0.5), L.ExponentialLR(opt, 0.9)])
    for _ in range(3):
        chained.step()
    state = chained.state_dict()
    assert "optimizer" not in state and [s["last_epoch"] for s in state["_schedulers"]] == [3, 3]
    opt2 = optim.SGD([param([0.0])], lr=1.0)
    resumed = L.ChainedScheduler([L.StepLR(opt2, 2, 0.5), L.ExponentialLR(opt2, 0.9)])
    resumed.load_state_dict(state)
    opt2.param_groups[0]["lr"] = opt.param_groups[0]["lr"]   # the optimizer's own state
    for _ in range(3):
        chained.step()
        resumed.step()
        assert resumed.get_last_lr() == pytest.approx(chained.get_last_lr(), rel=1e-15)


def test_chained_scheduler_errors():
    opt, other = optim.SGD([param([0.0])], lr=1.0), optim.SGD([param([0.0])], lr=1.0)
    with pytest.raises(ValueError, match="^ChainedScheduler expects at least one scheduler to be "
                                         "chained, but got no scheduler.$"):
        L.ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau` scheduler as it "
                                         "requires additional kwargs .* at index 1 "):
        L.ChainedScheduler([L.StepLR(opt, 2), L.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer, "
                                         "but got scheduler ExponentialLR at index 1"):
        L.ChainedScheduler([L.StepLR(opt, 2), L.ExponentialLR(other, 0.9)])
    with pytest.raises(TypeError, match="at index 0 should have `optimizer` as its attribute"):
        L.ChainedScheduler([object()], optimizer=opt)


# -- cyclic schedules ------------------------------------------------------------------------------
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


def test_cyclic_lr_triangular_modes():
    tri = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2), 8)
    assert tri == pytest.approx([0.1, 0.55, 1.0, 0.55, 0.1, 0.55, 1.0, 0.55, 0.1], abs=1e-15)
    tri2 = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode="triangular2"), 8)
    assert tri2 == pytest.approx([0.1, 0.55, 1.0, 0.55, 0.1, 0.325, 0.55, 0.325, 0.1],
                                 abs=1e-15)
    exp = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2, mode="exp_range", gamma=0.5), 3)
    assert exp == pytest.approx([0.1, 0.1 + 0.45 * 0.5, 0.1 + 0.9 * 0.25, 0.1 + 0.45 * 0.125],
                                abs=1e-15)
    asym = lrs(lambda o: L.CyclicLR(o, 0.0, 1.0, step_size_up=1, step_size_down=3), 4)
    assert asym == pytest.approx([0.0, 1.0, 2 / 3, 1 / 3, 0.0], abs=1e-15)
    custom = lrs(lambda o: L.CyclicLR(o, 0.0, 1.0, step_size_up=1, scale_fn=lambda x: 0.1 * x,
                                      scale_mode="iterations"), 3)
    assert custom == pytest.approx([0.0, 0.1, 0.0, 0.3], abs=1e-15)


def test_cyclic_lr_cycles_momentum_and_adams_beta1():
    moms = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, step_size_up=2), 4, key="momentum")
    assert moms == pytest.approx([0.9, 0.85, 0.8, 0.85, 0.9], abs=1e-15)
    adam = optim.Adam([param([0.0])], lr=1e-3)
    betas = lrs(lambda o: L.CyclicLR(o, 1e-3, 1e-2, step_size_up=1, base_momentum=0.85,
                                     max_momentum=0.95), 2, opt=adam, key="betas")
    assert [b[0] for b in betas] == pytest.approx([0.95, 0.85, 0.95], abs=1e-15)
    assert all(b[1] == 0.999 for b in betas)
    plain = lrs(lambda o: L.CyclicLR(o, 0.1, 1.0, 2, cycle_momentum=False), 2, key="momentum")
    assert plain == [0.9, 0.9, 0.9]


def test_cyclic_lr_errors_and_state_dict():
    opt = optim.SGD([param([0.0])], lr=1.0)
    with pytest.raises(ValueError, match="^mode is invalid and scale_fn is None$"):
        L.CyclicLR(opt, 0.1, 1.0, mode="sawtooth")
    with pytest.raises(ValueError, match="^optimizer must support momentum or beta1 with "
                                         "`cycle_momentum` option enabled$"):
        L.CyclicLR(optim.Adagrad([param([0.0])]), 0.1, 1.0)
    with pytest.raises(ValueError, match="^max_lr must have the same length as "
                                         "optimizer.param_groups. max_lr has 2 values, "
                                         "param_groups has 1.$"):
        L.CyclicLR(opt, 0.1, [1.0, 2.0])
    with pytest.raises(TypeError, match="^int is not an Optimizer$"):
        L.CyclicLR(5, 0.1, 1.0)
    sched = L.CyclicLR(opt, 0.1, 1.0, step_size_up=3, mode="triangular2")
    for _ in range(4):
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 4
    other = optim.SGD([param([0.0])], lr=1.0)
    resumed = L.CyclicLR(other, 0.1, 1.0, step_size_up=3, mode="triangular2")
    resumed.load_state_dict(state)
    for _ in range(5):
        sched.step()
        resumed.step()
        assert resumed.get_last_lr() == sched.get_last_lr()


# -- chainable schedules, by hand ------------------------------------------------------------------
def test_two_schedules_on_one_optimizer_compose():
    opt = sgd(0.1)
    step, exp = L.StepLR(opt, 2, 0.5), L.ExponentialLR(opt, 0.9)
    got = epochs(opt, [step, exp], 4)
    assert got == pytest.approx([0.09, 0.0405, 0.03645, 0.0164025], rel=1e-14)
    assert step.get_last_lr() == pytest.approx([0.0182250], rel=1e-14)   # before exp's step
    assert exp.get_last_lr() == [opt.param_groups[0]["lr"]]
    opt = sgd(1.0)   # ConstantLR: x0.5 at epoch 0, /0.5 back at epoch 2; ExponentialLR: x0.5
    sched = [L.ConstantLR(opt, 0.5, total_iters=2), L.ExponentialLR(opt, 0.5)]
    assert opt.param_groups[0]["lr"] == 0.5
    assert epochs(opt, sched, 3) == [0.25, 0.25, 0.125]


def test_hand_edits_of_the_lr_are_kept():
    opt = sgd(1.0)
    sched = L.StepLR(opt, 2, 0.5)
    edit = lambda e, g: g.update(lr=0.3) if e == 2 else None
    assert epochs(opt, [sched], 4, edit) == [1.0, 0.3, 0.3, 0.15]
    opt = sgd(1.0)
    sched = L.MultiplicativeLR(opt, lambda e: 0.5)
    edit = lambda e, g: g.update(lr=g["lr"] * 4) if e == 1 else None
    assert epochs(opt, [sched], 3, edit) == [2.0, 1.0, 0.5]


def test_each_chainable_form_step_by_step():
    opt = sgd(1.0)   # factor 0.5 -> 0.75 -> 1.0: ratios 1.5, then 4/3
    assert opt.param_groups[0]["lr"] == 1.0
    assert epochs(opt, [L.LinearLR(opt, 0.5, 1.0, total_iters=2)], 3) == pytest.approx(
        [0.75, 1.0, 1.0], rel=1e-15)
    opt = sgd(1.0)   # ratios (1 - e/4) / (1 - (e-1)/4)
    assert epochs(opt, [L.PolynomialLR(opt, total_iters=4)], 5) == pytest.approx(
        [0.75, 0.5, 0.25, 0.0, 0.0], abs=1e-15)
    opt = sgd(1.0)   # a milestone listed twice multiplies by gamma twice
    assert epochs(opt, [L.MultiStepLR(opt, [2, 2, 3], 0.1)], 4) == pytest.approx(
        [1.0, 0.01, 0.001, 0.001], rel=1e-15)
    opt = sgd(1.0)
    assert epochs(opt, [L.MultiplicativeLR(opt, lambda e: e)], 4) == [1.0, 2.0, 6.0, 24.0]


def test_cosine_annealing_recursion_keeps_edits_until_the_bottom():
    opt = sgd(1.0)   # T_max 2: 1 -> 0.5 -> 0 (bottom) -> back up by (base - eta_min) / 2 -> 1
    got = epochs(opt, [L.CosineAnnealingLR(opt, 2)], 4)
    assert got == pytest.approx([0.5, 0.0, 0.5, 1.0], abs=1e-15)
    opt = sgd(1.0)   # eta_min 0.1: each step scales lr - eta_min by the cosine ratio
    edit = lambda e, g: g.update(lr=0.5) if e == 1 else None
    got = epochs(opt, [L.CosineAnnealingLR(opt, 4, eta_min=0.1)], 2, edit)
    r = (1 + math.cos(math.pi / 2)) / (1 + math.cos(math.pi / 4))
    assert got == pytest.approx([0.5, 0.1 + 0.4 * r], rel=1e-14)


def test_lambda_lr_sets_the_rate_from_base_lrs():
    opt = sgd(1.0)   # LambdaLR is a closed form: stepped last, it overrides the other schedule
    exp, lam = L.ExponentialLR(opt, 0.5), L.LambdaLR(opt, lambda e: 1.0)
    assert epochs(opt, [exp, lam], 3) == [1.0, 1.0, 1.0]
    opt = sgd(1.0)
    lam, exp = L.LambdaLR(opt, lambda e: 1.0), L.ExponentialLR(opt, 0.5)
    assert epochs(opt, [lam, exp], 3) == [0.5, 0.5, 0.5]


def test_chained_and_sequential_schedules():
    opt = sgd(0.1)
    chained = L.ChainedScheduler([L.StepLR(opt, 2, 0.5), L.ExponentialLR(opt, 0.9)])
    assert epochs(opt, [chained], 4) == pytest.approx([0.09, 0.0405, 0.03645, 0.0164025],
                                                      rel=1e-14)
    assert chained.get_last_lr() == [opt.param_groups[0]["lr"]]
    opt = sgd(1.0)   # ExponentialLR takes over at epoch 2 with its closed form at its epoch 0
    seq = L.SequentialLR(opt, [L.ConstantLR(opt, 0.1, total_iters=2), L.ExponentialLR(opt, 0.5)],
                         milestones=[2])
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1)
    assert epochs(opt, [seq], 4) == pytest.approx([0.1, 1.0, 0.5, 0.25], rel=1e-15)


def test_resuming_with_last_epoch_continues_from_the_current_rate():
    opt = sgd(0.1)
    opt.param_groups[0]["initial_lr"] = 0.1
    assert L.StepLR(opt, 2, 0.5, last_epoch=3).get_last_lr() == [0.05]   # epoch 4 halves it
    opt = sgd(0.1)
    opt.param_groups[0]["initial_lr"] = 0.1
    sched = L.CosineAnnealingLR(opt, 10, last_epoch=3)
    assert sched.get_last_lr() == [0.1] and sched.last_epoch == 4
    opt.step()
    sched.step()
    r = (1 + math.cos(math.pi / 2)) / (1 + math.cos(2 * math.pi / 5))
    assert sched.get_last_lr() == pytest.approx([0.1 * r], rel=1e-14)
    with pytest.raises(KeyError) as err:
        L.StepLR(sgd(0.1), 2, last_epoch=3)
    assert err.value.args[0] == (
        "param 'initial_lr' is not specified in param_groups[0] when resuming scheduler with "
        "last_epoch >= 0.\nThis typically happens when:\n1. You're trying to resume training "
        "from a checkpoint but haven't properly loaded the optimizer state\n2. You're using "
        "last_epoch >= 0 for a fresh training run (not recommended)")


def test_resuming_through_state_dict():
    opt = sgd(1.0)
    sched = L.StepLR(opt, 2, 0.5)
    epochs(opt, [sched], 3)
    fresh = sgd(1.0)
    resumed = L.StepLR(fresh, 5, 0.9)
    fresh.load_state_dict(opt.state_dict())
    resumed.load_state_dict(sched.state_dict())
    assert (resumed.step_size, resumed.gamma, resumed.last_epoch) == (2, 0.5, 3)
    assert epochs(fresh, [resumed], 3) == [0.25, 0.25, 0.125]


def test_multistep_state_survives_save_and_load(tmp_path):
    opt = sgd(1.0)
    sched = L.MultiStepLR(opt, [1, 3, 3], 0.5)
    gpugrad.save(sched.state_dict(), tmp_path / "sched.pt")
    fresh = sgd(1.0)
    resumed = L.MultiStepLR(fresh, [9])
    resumed.load_state_dict(gpugrad.load(tmp_path / "sched.pt"))
    assert resumed.milestones == {1: 1, 3: 2}
    fresh.step()
    with pytest.warns(UserWarning, match="The epoch parameter"):
        resumed.step(3)
    assert resumed.get_last_lr() == [0.125]


def test_step_with_an_epoch_uses_the_closed_form_and_warns():
    opt = sgd(1.0)
    sched = L.StepLR(opt, 2, 0.5)
    opt.param_groups[0]["lr"] = 7.0   # the closed form ignores the current rate
    opt.step()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        sched.step(5)
    assert messages(record) == [EPOCH_DEPRECATED]
    assert sched.get_last_lr() == [0.25] and sched.last_epoch == 5
    plateau = L.ReduceLROnPlateau(sgd())
    with pytest.warns(UserWarning) as record:
        plateau.step(1.0, 4)
    assert messages(record) == [EPOCH_DEPRECATED] and plateau.last_epoch == 4


def test_scheduler_warnings_word_for_word():
    opt = sgd()
    sched = L.ExponentialLR(opt, 0.5)
    with pytest.warns(UserWarning) as record:
        sched.step()   # before any optimizer.step()
    assert messages(record) == [BEFORE_OPT_STEP]
    with pytest.warns(UserWarning) as record:
        assert sched.get_lr() == [0.25]   # outside step(): the next rate, with a warning
    assert messages(record) == [GET_LR]
    opt = sgd()
    sched = L.ExponentialLR(opt, 0.5)
    opt.step = lambda closure=None: None
    with pytest.warns(UserWarning) as record:
        sched.step()
    assert messages(record) == [OVERRIDDEN]
    opt = sgd()
    sched = L.ExponentialLR(opt, 0.5)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()   # the right order: silent
        sched.step()   # checked on the first step only


def test_scheduler_types_and_errors():
    opt = sgd()
    assert isinstance(L.ReduceLROnPlateau(opt), L.LRScheduler)
    assert issubclass(L._LRScheduler, L.LRScheduler)
    with pytest.raises(TypeError, match="^int is not an Optimizer$"):
        L.StepLR(3, 2)
    plateau = L.ReduceLROnPlateau(opt, min_lr=[0.0], patience=0)
    opt.add_param_group({"params": [gpugrad.zeros(1, requires_grad=True)]})
    plateau.step(1.0)
    with pytest.raises(RuntimeError, match=re.escape(
            "The number of param groups in the `optimizer` (2) differs from when "
            "`ReduceLROnPlateau` was initialized (1), usually due to a new param group being "
            "added to the optimizer. Please modify the `min_lrs` field to match the length of "
            "the `optimizer` param groups.")):
        plateau.step(2.0)


COMMON = ["_get_lr_called_within_step", "_is_initial", "_last_lr", "_step_count", "base_lrs",
          "last_epoch"]
STATE_KEYS = [   # sorted(state_dict()) of PyTorch 2.13's schedulers
    (lambda o: L.StepLR(o, 2), COMMON + ["gamma", "step_size"]),
    (lambda o: L.MultiStepLR(o, [2]), COMMON + ["gamma", "milestones"]),
    (lambda o: L.ConstantLR(o), COMMON + ["factor", "total_iters"]),
    (lambda o: L.LinearLR(o), COMMON + ["end_factor", "start_factor", "total_iters"]),
    (lambda o: L.ExponentialLR(o, 0.9), COMMON + ["gamma"]),
    (lambda o: L.PolynomialLR(o), COMMON + ["power", "total_iters"]),
    (lambda o: L.CosineAnnealingLR(o, 10), ["T_max"] + COMMON + ["eta_min"]),
    (lambda o: L.LambdaLR(o, lambda e: 1.0), COMMON + ["lr_lambdas"]),
    (lambda o: L.MultiplicativeLR(o, lambda e: 1.0), COMMON + ["lr_lambdas"]),
    (lambda o: L.SequentialLR(o, [L.ConstantLR(o), L.ExponentialLR(o, 0.9)], [3]),
     ["_last_lr", "_milestones", "_schedulers", "last_epoch"]),
    (lambda o: L.ChainedScheduler([L.ConstantLR(o), L.ExponentialLR(o, 0.9)]),
     ["_last_lr", "_schedulers"]),
    (lambda o: L.CyclicLR(o, 0.01, 0.1),
     COMMON[:3] + ["_scale_fn_custom", "_step_count", "base_lrs", "base_momentums",
                   "cycle_momentum", "gamma", "last_epoch", "max_lrs", "max_momentums", "mode",
                   "scale_mode", "step_ratio", "total_size", "use_beta1"]),
    (lambda o: L.OneCycleLR(o, 0.1, total_steps=10),
     ["_anneal_func_type"] + COMMON[:3] + ["_schedule_phases", "_step_count", "base_lrs",
                                           "cycle_momentum", "last_epoch", "total_steps",
                                           "use_beta1"]),
    (lambda o: L.CosineAnnealingWarmRestarts(o, 3), ["T_0", "T_cur", "T_i", "T_mult"] + COMMON
     + ["eta_min"]),
    (lambda o: L.ReduceLROnPlateau(o),
     ["_last_lr", "best", "cooldown", "cooldown_counter", "default_min_lr", "eps", "factor",
      "last_epoch", "min_lrs", "mode", "mode_worse", "num_bad_epochs", "patience", "threshold",
      "threshold_mode"]),
]


@pytest.mark.parametrize("make, keys", STATE_KEYS, ids=[f"{i}" for i in range(len(STATE_KEYS))])
def test_state_dict_keys_are_pytorchs(make, keys):
    sched = make(sgd(0.1, momentum=0.9))
    assert sorted(sched.state_dict()) == sorted(keys)
    assert "optimizer" not in sched.state_dict()


def test_step_count_and_lr_lambdas_state():
    opt = sgd()
    sched = L.StepLR(opt, 2)
    assert sched.state_dict()["_step_count"] == 1
    epochs(opt, [sched], 2)
    assert sched.state_dict()["_step_count"] == 3
    warm = L.CosineAnnealingWarmRestarts(opt, 3)   # its own step() does not count
    warm.step()
    assert warm.state_dict()["_step_count"] == 0

    class Factor:
        def __init__(self, f):
            self.f = f

        def __call__(self, epoch):
            return self.f

    lam = L.LambdaLR(opt, [Factor(0.5)])
    assert lam.state_dict()["lr_lambdas"] == [{"f": 0.5}]
    other = L.LambdaLR(sgd(), [Factor(0.9)])
    other.load_state_dict(lam.state_dict())
    assert other.lr_lambdas[0].f == 0.5


# -- against PyTorch -------------------------------------------------------------------------------
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


SCHEDULES = [
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, step_size_up=4)),
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, 3, 5, mode="triangular2")),
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, 3, mode="exp_range", gamma=0.9)),
    ("SGD", lambda o, S: S.CyclicLR(o, 0.1, 1.0, 3, scale_fn=lambda x: 0.5 ** x,
                                    scale_mode="iterations")),
    ("Adam", lambda o, S: S.CyclicLR(o, 1e-3, 1e-2, 3, base_momentum=0.85, max_momentum=0.95)),
    ("SGD", lambda o, S: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 1.05)),
    ("SGD", lambda o, S: S.ChainedScheduler([S.StepLR(o, 3, 0.5), S.ExponentialLR(o, 0.9)])),
    ("SGD", lambda o, S: S.ChainedScheduler([S.LinearLR(o, 0.2, total_iters=4),
                                             S.CosineAnnealingLR(o, 6, 0.01)])),
    ("SGD", lambda o, S: S.ChainedScheduler([S.ConstantLR(o, 0.5, total_iters=3),
                                             S.MultiplicativeLR(o, lambda e: 0.95),
                                             S.PolynomialLR(o, 10, 2.0)])),
    ("SGD", lambda o, S: S.ChainedScheduler([S.MultiStepLR(o, [2, 5, 5], 0.5),
                                             S.LambdaLR(o, lambda e: 1 / (e + 1)),
                                             S.ExponentialLR(o, 0.9)])),
]


@pytest.mark.parametrize("name, make", SCHEDULES)
def test_new_schedules_match_torch(name, make):
    torch = pytest.importorskip("torch")
    kwargs = dict(lr=0.5, momentum=0.9) if name == "SGD" else dict(lr=0.01)
    oa = getattr(optim, name)([param([0.0])], **kwargs)
    ob = getattr(torch.optim, name)([torch.zeros(1, requires_grad=True)], **kwargs)
    sa, sb = make(oa, optim.lr_scheduler), make(ob, torch.optim.lr_scheduler)
    key = "momentum" if name == "SGD" else "betas"
    for _ in range(25):
        ga, gb = oa.param_groups[0], ob.param_groups[0]
        assert ga["lr"] == pytest.approx(gb["lr"], rel=1e-12, abs=1e-15)
        assert np.allclose(ga[key], gb[key], rtol=1e-12, atol=0)
        oa.step()
        ob.step()
        sa.step()
        sb.step()
        assert sa.get_last_lr() == pytest.approx(sb.get_last_lr(), rel=1e-12, abs=1e-15)
    assert math.isfinite(sa.get_last_lr()[0])
