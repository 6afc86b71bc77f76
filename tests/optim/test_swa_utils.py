"""swa_utils (AveragedModel, SWALR, update_bn, the averaging functions): values by hand,
argument errors with PyTorch's messages, and (when PyTorch is installed) agreement with
torch.optim.swa_utils in float64."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim
from gpugrad.optim import swa_utils


def linear_from(w, b, device="cpu"):
    m = nn.Linear(w.shape[1], w.shape[0]).double().to(device)
    with gpugrad.no_grad():
        m.weight.copy_(tensor(w, device))
        m.bias.copy_(tensor(b, device))
    return m


# -- AveragedModel ---------------------------------------------------------------------------------
def test_swa_average_is_the_running_mean_of_the_parameters(device):
    rng = np.random.default_rng(0)
    snaps = [(rng.standard_normal((2, 3)), rng.standard_normal(2)) for _ in range(5)]
    model = linear_from(*snaps[0], device)
    avg = swa_utils.AveragedModel(model)
    assert isinstance(avg.module, nn.Linear) and avg.module is not model
    assert int(avg.n_averaged.item()) == 0 and avg.n_averaged.dtype == gpugrad.int64
    for k, (w, b) in enumerate(snaps):
        with gpugrad.no_grad():
            model.weight.copy_(tensor(w, device))
            model.bias.copy_(tensor(b, device))
        avg.update_parameters(model)
        assert int(avg.n_averaged.item()) == k + 1
        np.testing.assert_allclose(to_numpy(avg.module.weight),
                                   np.mean([s[0] for s in snaps[:k + 1]], axis=0), rtol=1e-13)
        np.testing.assert_allclose(to_numpy(avg.module.bias),
                                   np.mean([s[1] for s in snaps[:k + 1]], axis=0), rtol=1e-13)
    x = tensor(rng.standard_normal((4, 3)), device)
    np.testing.assert_allclose(to_numpy(avg(x)), to_numpy(avg.module(x)))


@pytest.mark.parametrize("multi", [False, True])
def test_ema_average_follows_the_hand_recursion(device, multi):
    decay = 0.75
    rng = np.random.default_rng(1)
    snaps = [(rng.standard_normal((2, 3)), rng.standard_normal(2)) for _ in range(4)]
    model = linear_from(*snaps[0], device)
    fn = dict(multi_avg_fn=swa_utils.get_ema_multi_avg_fn(decay)) if multi else \
        dict(avg_fn=swa_utils.get_ema_avg_fn(decay))
    ema = swa_utils.AveragedModel(model, **fn)
    expect = None
    for w, b in snaps:
        with gpugrad.no_grad():
            model.weight.copy_(tensor(w, device))
            model.bias.copy_(tensor(b, device))
        ema.update_parameters(model)
        expect = w if expect is None else decay * expect + (1 - decay) * w
        np.testing.assert_allclose(to_numpy(ema.module.weight), expect, rtol=1e-13)


def test_averaged_model_copies_buffers_or_averages_them_with_use_buffers():
    model = nn.BatchNorm1d(2).double()
    plain = swa_utils.AveragedModel(model)
    with_buffers = swa_utils.AveragedModel(model, use_buffers=True)
    means = [np.array([1.0, 2.0]), np.array([3.0, 6.0])]
    for m in means:
        with gpugrad.no_grad():
            model.running_mean.copy_(tensor(m))
        plain.update_parameters(model)
        with_buffers.update_parameters(model)
    np.testing.assert_allclose(to_numpy(plain.module.running_mean), [3.0, 6.0])
    np.testing.assert_allclose(to_numpy(with_buffers.module.running_mean), [2.0, 4.0])


def test_averaging_functions_by_hand_and_errors():
    a, b = tensor([1.0, 3.0]), tensor([5.0, -1.0])
    np.testing.assert_allclose(to_numpy(swa_utils.get_swa_avg_fn()(a, b, 3)), [2.0, 2.0])
    np.testing.assert_allclose(to_numpy(swa_utils.get_ema_avg_fn(0.5)(a, b, 7)), [3.0, 1.0])
    x = [tensor([1.0, 3.0]), tensor([0.0])]
    swa_utils.get_swa_multi_avg_fn()(x, [tensor([5.0, -1.0]), tensor([4.0])], tensor(1))
    np.testing.assert_allclose(to_numpy(x[0]), [3.0, 1.0])
    np.testing.assert_allclose(to_numpy(x[1]), [2.0])
    for make in (swa_utils.get_ema_avg_fn, swa_utils.get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=re.escape(
                "Invalid decay value 1.5 provided. Please provide a value in [0,1] range.")):
            make(1.5)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be"):
        swa_utils.AveragedModel(nn.Linear(1, 1), avg_fn=lambda *a: a[0],
                                multi_avg_fn=lambda *a: None)


def test_averaged_model_matches_torch_with_a_training_loop():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    w, b = rng.standard_normal((2, 3)), rng.standard_normal(2)
    ours, theirs = linear_from(w, b), torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
        theirs.bias.copy_(torch.tensor(b))
    avg_o, avg_t = swa_utils.AveragedModel(ours), torch.optim.swa_utils.AveragedModel(theirs)
    opt_o = optim.SGD(ours.parameters(), lr=0.1)
    opt_t = torch.optim.SGD(theirs.parameters(), lr=0.1)
    for _ in range(4):
        x = rng.standard_normal((5, 3))
        for model, opt, lib in ((ours, opt_o, gpugrad), (theirs, opt_t, torch)):
            opt.zero_grad()
            (model(lib.tensor(x)) ** 2).sum().backward()
            opt.step()
        avg_o.update_parameters(ours)
        avg_t.update_parameters(theirs)
    np.testing.assert_allclose(to_numpy(avg_o.module.weight),
                               avg_t.module.weight.detach().numpy(), rtol=1e-12)
    assert int(avg_o.n_averaged.item()) == int(avg_t.n_averaged) == 4


# -- SWALR -----------------------------------------------------------------------------------------
def swalr_by_hand(lr0, swa_lr, epochs, strategy, k):
    t = min(1.0, k / max(1, epochs)) if epochs else 1.0
    a = (1 - math.cos(math.pi * t)) / 2 if strategy == "cos" else t
    return swa_lr * a + lr0 * (1 - a)


@pytest.mark.parametrize("strategy,epochs", [("cos", 4), ("linear", 3), ("cos", 0)])
def test_swalr_anneals_to_swa_lr_by_the_hand_formula(strategy, epochs):
    opt = optim.SGD([{"params": [nn.Parameter(tensor([0.0]))]},
                     {"params": [nn.Parameter(tensor([0.0]))], "lr": 0.5}], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=[0.1, 0.05], anneal_epochs=epochs,
                            anneal_strategy=strategy)
    assert [g["swa_lr"] for g in opt.param_groups] == [0.1, 0.05]
    for k in range(8):
        for g, lr0, swa in zip(opt.param_groups, (1.0, 0.5), (0.1, 0.05)):
            expect = swalr_by_hand(lr0, swa, epochs, strategy, k)
            assert g["lr"] == pytest.approx(expect, rel=1e-12)
        assert sched.get_last_lr() == [g["lr"] for g in opt.param_groups]
        opt.step()
        sched.step()


@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_swalr_matches_torch_after_another_schedule(strategy):
    torch = pytest.importorskip("torch")
    oo = optim.SGD([nn.Parameter(tensor([0.0]))], lr=0.3)
    ot = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.3)
    so, st = optim.lr_scheduler.StepLR(oo, 2, 0.5), torch.optim.lr_scheduler.StepLR(ot, 2, 0.5)
    for _ in range(3):
        oo.step()
        ot.step()
        so.step()
        st.step()
    wo = swa_utils.SWALR(oo, 0.02, anneal_epochs=5, anneal_strategy=strategy)
    wt = torch.optim.swa_utils.SWALR(ot, 0.02, anneal_epochs=5, anneal_strategy=strategy)
    for _ in range(9):
        assert oo.param_groups[0]["lr"] == pytest.approx(ot.param_groups[0]["lr"], rel=1e-12)
        oo.step()
        ot.step()
        wo.step()
        wt.step()
    assert oo.param_groups[0]["lr"] == pytest.approx(0.02, rel=1e-12)


def test_swalr_errors_and_state_dict():
    opt = optim.SGD([nn.Parameter(tensor([0.0]))], lr=1.0)
    with pytest.raises(ValueError, match=re.escape(
            "anneal_strategy must be one of 'cos' or 'linear', instead got exp")):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match=re.escape(
            "swa_lr must have the same length as optimizer.param_groups. swa_lr has 2 values, "
            "param_groups has 1.")):
        swa_utils.SWALR(opt, [0.1, 0.2])
    sched = swa_utils.SWALR(opt, 0.1, anneal_epochs=2, anneal_strategy="linear")
    state = sched.state_dict()
    assert "anneal_func" not in state and state["_anneal_strategy"] == "linear"
    with pytest.warns(UserWarning, match="please use `get_last_lr"):
        sched.get_lr()


# -- update_bn -------------------------------------------------------------------------------------
def test_update_bn_recomputes_running_stats_as_a_cumulative_average():
    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((n, 3)) * 2 + 1 for n in (4, 6, 5)]
    model = nn.Sequential(nn.Linear(3, 3).double(), nn.BatchNorm1d(3).double())
    with gpugrad.no_grad():
        model[0].weight.copy_(tensor(np.eye(3)))
        model[0].bias.zero_()
        model[1].running_mean.fill_(100.0)
    model.eval()
    loader = [(tensor(x), tensor([0])) for x in batches]     # (input, target) pairs
    swa_utils.update_bn(loader, model)
    bn = model[1]
    assert not model.training and bn.momentum == 0.1
    np.testing.assert_allclose(to_numpy(bn.running_mean),
                               np.mean([x.mean(0) for x in batches], axis=0), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(bn.running_var),
                               np.mean([x.var(0, ddof=1) for x in batches], axis=0), rtol=1e-12)
    assert int(bn.num_batches_tracked.item()) == 3


def test_update_bn_without_batchnorm_does_not_touch_the_loader():
    def loader():
        raise AssertionError("the loader must not be read")
        yield
    assert swa_utils.update_bn(loader(), nn.Linear(2, 2)) is None
