"""GradScaler: scaling, unscaling, skipped steps and the scale schedule (against PyTorch's where it
is installed), and a mixed-precision training loop that learns."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad import amp
from tests.amp._autocast import F32, T, autocast
from tests.amp._errors import raises


# -- GradScaler ----------------------------------------------------------------------------------
def _step(scaler, opt, p, grad):
    opt.zero_grad()
    loss = (p * T(grad, p.device.type)).sum()
    scaler.scale(loss).backward()
    out = scaler.step(opt)
    scaler.update()
    return out


def test_grad_scaler_scales_unscales_and_steps(device):
    p = nn.Parameter(T([1.0, 2.0], device))
    opt = gpugrad.optim.SGD([p], lr=0.5)
    s = amp.GradScaler(device, init_scale=8.0)
    assert s.get_scale() == 8.0
    assert to_numpy(s.scale(T([1.0, 3.0], device))).tolist() == [8.0, 24.0]
    loss = (p * T([1.0, -2.0], device)).sum()
    s.scale(loss).backward()
    assert to_numpy(p.grad).tolist() == [8.0, -16.0]
    s.unscale_(opt)
    assert to_numpy(p.grad).tolist() == [1.0, -2.0]   # clip here, on true gradients
    s.step(opt)
    assert to_numpy(p).tolist() == [0.5, 3.0]
    s.update()
    assert s.get_scale() == 8.0 and s.state_dict()["_growth_tracker"] == 1
    scaled = s.scale({"a": [T([1.0], device)], "b": (T([2.0], device),)})
    assert to_numpy(scaled["b"][0]).tolist() == [16.0]


def test_grad_scaler_skips_steps_with_inf_and_schedules_the_scale(device):
    p = nn.Parameter(T([1.0], device))
    opt = gpugrad.optim.SGD([p], lr=1.0)
    s = amp.GradScaler(device, init_scale=4.0, growth_interval=2)
    assert _step(s, opt, p, [np.inf]) is None        # skipped
    assert to_numpy(p).tolist() == [1.0] and s.get_scale() == 2.0
    _step(s, opt, p, [1.0])
    assert to_numpy(p).tolist() == [0.0] and s.get_scale() == 2.0
    _step(s, opt, p, [1.0])
    assert s.get_scale() == 4.0                       # two clean steps: grown
    _step(s, opt, p, [np.nan])
    assert s.get_scale() == 2.0 and to_numpy(p).tolist() == [-1.0]
    s.update(new_scale=64.0)
    assert s.get_scale() == 64.0
    state = s.state_dict()
    assert state == {"scale": 64.0, "growth_factor": 2.0, "backoff_factor": 0.5,
                     "growth_interval": 2, "_growth_tracker": 0}
    t = amp.GradScaler(device)
    t.load_state_dict(state)
    assert t.get_scale() == 64.0 and t.get_growth_interval() == 2


def test_grad_scaler_misuse_errors(device):
    p = nn.Parameter(T([1.0], device))
    opt = gpugrad.optim.SGD([p], lr=1.0)
    s = amp.GradScaler(device)
    with raises(AssertionError, "Attempted step but _scale is None.  This may indicate your "
                "script did not use scaler.scale(loss or outputs) earlier in the iteration."):
        s.step(opt)
    s.scale(p.sum()).backward()
    s.unscale_(opt)
    with raises(RuntimeError, "unscale_() has already been called on this optimizer since the "
                "last update()."):
        s.unscale_(opt)
    s.step(opt)
    with raises(RuntimeError, "step() has already been called since the last update()."):
        s.step(opt)
    with raises(AssertionError, "The growth factor must be > 1.0."):
        amp.GradScaler(device, growth_factor=0.5)
    with raises(AssertionError, "new_scale should be a float or a 1-element tensor."):
        s.update(new_scale=3)
    off = amp.GradScaler(device, enabled=False)
    x = T([2.0], device)
    assert off.scale(x) is x and off.get_scale() == 1.0 and off.state_dict() == {}


def test_mixed_precision_training_loop_learns(device):
    gpugrad.manual_seed(0)
    data = gpugrad.randn(64, 4, device=device)
    target = (data[:, 0] > data[:, 1]).long()
    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    opt = gpugrad.optim.Adam(model.parameters(), lr=0.05)
    scaler = amp.GradScaler(device)

    def loss_now():
        with autocast(device):
            return F.cross_entropy(model(data), target)

    first = loss_now().item()
    for _ in range(60):
        opt.zero_grad()
        loss = loss_now()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
    assert all(p.dtype == F32 for p in model.parameters())
    assert loss_now().item() < 0.3 * first


def test_grad_scaler_schedule_matches_torch():
    torch = pytest.importorskip("torch")
    grads = [[1.0], [np.inf], [2.0], [3.0], [np.nan], [1.0], [1.0], [1.0]]
    ours_p = nn.Parameter(gpugrad.tensor([1.0]))
    theirs_p = torch.nn.Parameter(torch.tensor([1.0]))
    ours = amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    theirs = torch.amp.GradScaler("cpu", init_scale=16.0, growth_interval=2)
    o_opt, t_opt = gpugrad.optim.SGD([ours_p], lr=0.1), torch.optim.SGD([theirs_p], lr=0.1)
    for g in grads:
        _step(ours, o_opt, ours_p, g)
        t_opt.zero_grad()
        theirs.scale((theirs_p * torch.tensor(g)).sum()).backward()
        theirs.step(t_opt)
        theirs.update()
        assert ours.get_scale() == theirs.get_scale()
        np.testing.assert_allclose(to_numpy(ours_p), theirs_p.detach().numpy(), rtol=1e-6)
