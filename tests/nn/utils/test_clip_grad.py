"""nn.utils.clip_grad_norm_ / clip_grad_value_ / get_total_norm, with agreement with PyTorch."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
from gpugrad.nn import init
from tests.nn._tensors import f64


def _params_with_grads(rng, *shapes):
    ps = [nn.Parameter(f64(rng.standard_normal(s))) for s in shapes]
    for p in ps:
        p.grad = f64(rng.standard_normal(p.shape))
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_scales_all_gradients_by_their_joint_norm(rng, norm_type):
    ps = _params_with_grads(rng, (3, 4), (4,), (2,))
    before = [p.grad.numpy().copy() for p in ps]
    flat = np.concatenate([g.ravel() for g in before])
    want = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (
        1 / norm_type)
    total = nn.utils.clip_grad_norm_(ps, 0.5, norm_type=norm_type)
    assert total.item() == pytest.approx(want, rel=1e-12)
    scale = min(1.0, 0.5 / (want + 1e-6))
    for p, g in zip(ps, before):
        np.testing.assert_allclose(p.grad.numpy(), g * scale, rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_and_takes_one_tensor(rng):
    p = _params_with_grads(rng, (5,))[0]
    g = p.grad.numpy().copy()
    total = nn.utils.clip_grad_norm_(p, 1e6)
    assert total.item() == pytest.approx(np.linalg.norm(g), rel=1e-12)
    np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-12)   # scale min(1, ...) is 1


def test_clip_grad_norm_without_gradients_is_zero_and_skips_missing_ones(rng):
    a, b = nn.Parameter(f64([1.0, 2.0])), nn.Parameter(f64([3.0]))
    assert nn.utils.clip_grad_norm_([a, b], 1.0).item() == 0.0
    b.grad = f64([4.0])
    assert nn.utils.clip_grad_norm_([a, b], 1.0).item() == 4.0
    assert a.grad is None and b.grad.item() == pytest.approx(1.0 / (4.0 + 1e-6) * 4.0)


def test_clip_grad_norm_non_finite_error(rng):
    p = _params_with_grads(rng, (3,))[0]
    p.grad = f64([1.0, math.inf, 0.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "The total norm of order 2.0 for gradients from `parameters` is non-finite, so it "
            "cannot be clipped. To disable this error and scale the gradients by the non-finite "
            "norm anyway, set `error_if_nonfinite=False`")):
        nn.utils.clip_grad_norm_(p, 1.0, error_if_nonfinite=True)
    assert math.isinf(nn.utils.clip_grad_norm_(p, 1.0).item())   # the default scales anyway


def test_clip_grad_value_clamps_in_place(rng):
    a, b = _params_with_grads(rng, (2, 3), (3,))
    ga, gb = a.grad.numpy().copy(), b.grad
    assert nn.utils.clip_grad_value_([a, b], 0.25) is None
    np.testing.assert_array_equal(a.grad.numpy(), np.clip(ga, -0.25, 0.25))
    assert b.grad is gb and np.abs(b.grad.numpy()).max() <= 0.25


def _params(*grads):
    ps = []
    for g in grads:
        p = nn.Parameter(gpugrad.zeros(len(g)))
        p.grad = gpugrad.tensor(g)
        ps.append(p)
    return ps


def test_clip_grad_norm_minus_inf_is_the_smallest_entry():
    ps = _params([3.0, 4.0], [12.0])
    total = nn.utils.clip_grad_norm_(ps, 1.0, norm_type=-math.inf)
    assert total.item() == 3.0
    scale = 1.0 / (3.0 + 1e-6)
    np.testing.assert_allclose(to_numpy(ps[0].grad), [3 * scale, 4 * scale], rtol=1e-6)
    np.testing.assert_allclose(to_numpy(ps[1].grad), [12 * scale], rtol=1e-6)


def test_clip_grad_norm_inf_unchanged():
    ps = _params([3.0, -4.0], [2.0])
    assert nn.utils.clip_grad_norm_(ps, 100.0, norm_type="inf").item() == 4.0
    assert to_numpy(ps[0].grad).tolist() == [3.0, -4.0]


def test_against_torch():
    torch = pytest.importorskip("torch")
    for mod in (torch, gpugrad):
        mod.manual_seed(0)
    for norm_type in (-math.inf, 0.5, 1, 3):
        totals = []
        for mod in (torch, gpugrad):
            ps = []
            for g in ([3.0, -4.0], [12.0, 0.5]):
                p = mod.nn.Parameter(mod.zeros(2))
                p.grad = mod.tensor(g)
                ps.append(p)
            totals.append(mod.nn.utils.clip_grad_norm_(ps, 1.0, norm_type).item())
        assert totals[0] == pytest.approx(totals[1], rel=1e-6)
    t = torch.nn.init.trunc_normal_(torch.empty(200_000), a=-1.0, b=3.0).numpy()
    g = to_numpy(init.trunc_normal_(gpugrad.empty(200_000), a=-1.0, b=3.0))
    assert abs(t.std() - g.std()) < 0.01 and abs(t.mean() - g.mean()) < 0.01


def test_clip_grad_value_and_total_norm(device):
    a = tensor([1.0, -2.0], device, requires_grad=True)
    b = tensor([[0.5, 3.0]], device, requires_grad=True)
    a.grad, b.grad = tensor([0.3, -2.0], device), tensor([[0.5, 3.0]], device)
    assert nn.utils.clip_grad_value_([a, b], 1.0) is None
    assert to_numpy(a.grad).tolist() == [0.3, -1.0] and to_numpy(b.grad).tolist() == [[0.5, 1.0]]
    total = nn.utils.get_total_norm([a.grad, b.grad])
    assert total.item() == pytest.approx(np.sqrt(0.09 + 1 + 0.25 + 1))
    assert nn.utils.get_total_norm([a.grad, b.grad], "inf").item() == 1.0
    nn.utils.clip_grads_with_norm_([a, b], 1.0, total)
    np.testing.assert_allclose(to_numpy(a.grad), np.array([0.3, -1.0]) / (total.item() + 1e-6))
