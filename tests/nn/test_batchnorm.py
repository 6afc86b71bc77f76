"""Batch normalisation: running statistics in training and eval, momentum=None, gradients,
errors, and SyncBatchNorm in one process."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._exact_errors import _raises
from tests.nn._tensors import f64


def test_batch_norm_training_updates_running_stats_and_eval_uses_them(rng):
    bn = nn.BatchNorm1d(3).to(gpugrad.float64)
    assert repr(bn) == ("BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                        "track_running_stats=True)")
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                     "num_batches_tracked"]
    x = rng.standard_normal((5, 3)) * 2 + 1
    y = bn(f64(x, requires_grad=True))
    want = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.var(0, ddof=1),
                               rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1 and bn.num_batches_tracked.dtype == gpugrad.int64
    bn.eval()
    z = bn(f64(x))
    np.testing.assert_allclose(z.detach().numpy(), (x - bn.running_mean.numpy())
                               / np.sqrt(bn.running_var.numpy() + 1e-5), rtol=1e-12)
    assert bn.num_batches_tracked.item() == 1   # eval leaves the statistics alone


def test_batch_norm_cumulative_average_and_no_tracking(rng):
    bn = nn.BatchNorm1d(2, momentum=None).to(gpugrad.float64)
    xs = [rng.standard_normal((4, 2)) for _ in range(3)]
    for x in xs:
        bn(f64(x))
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean([x.mean(0) for x in xs], 0),
                               rtol=1e-12)
    free = nn.BatchNorm1d(2, affine=False, track_running_stats=False)
    assert free.running_mean is None and list(free.state_dict()) == []
    free.eval()   # no running statistics: the batch's are used even in eval
    out = free(gpugrad.tensor(np.array([[1.0, 2.0], [3.0, 6.0]], dtype=np.float32)))
    np.testing.assert_allclose(out.numpy(), [[-1, -1], [1, 1]], rtol=1e-4)


def test_batch_norm_gradients_both_modes(rng):
    x = f64(rng.standard_normal((4, 3, 2)), requires_grad=True)
    w = f64(rng.standard_normal(3), requires_grad=True)
    b = f64(rng.standard_normal(3), requires_grad=True)
    rm, rv = f64(rng.standard_normal(3)), f64(rng.uniform(0.5, 2.0, 3))

    def train(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True)

    def infer(x, w, b):
        return F.batch_norm(x, rm, rv, w, b, training=False)
    for f in (train, infer):
        assert gradcheck(f, (x, w, b)) and gradgradcheck(f, (x, w, b))


def test_batch_norm_errors():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match=re.escape(
            "Expected more than 1 value per channel when training, got input size "
            "gpugrad.Size([1, 3])")):
        bn(gpugrad.zeros(1, 3))
    with pytest.raises(RuntimeError, match="^running_mean should contain 4 elements not 3$"):
        bn(gpugrad.zeros(2, 4))
    with pytest.raises(ValueError, match=re.escape("expected 2D or 3D input (got 1D input)")):
        bn(gpugrad.zeros(2))
    with pytest.raises(ValueError, match=re.escape("expected 4D input (got 2D input)")):
        nn.BatchNorm2d(3)(gpugrad.zeros(2, 3))


def test_sync_batch_norm_is_batch_norm_in_one_process(device):
    x = tensor(np.random.default_rng(11).standard_normal((4, 3, 2, 2, 2)), device)
    s = nn.SyncBatchNorm(3).to(device)
    y = s(x)
    mean, var = to_numpy(x).mean((0, 2, 3, 4)), to_numpy(x).var((0, 2, 3, 4))
    ref = (to_numpy(x) - mean[:, None, None, None]) / np.sqrt(var[:, None, None, None] + 1e-5)
    np.testing.assert_allclose(to_numpy(y), ref, rtol=1e-6, atol=1e-6)
    with _raises(ValueError, "expected at least 2D input (got 1D input)"):
        s(tensor([1.0, 2.0, 3.0], device))
    assert repr(s) == ("SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    net = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(3)))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert isinstance(conv[1], nn.SyncBatchNorm) and isinstance(conv[2][0], nn.SyncBatchNorm)
    assert conv[1].weight is net[1].weight and conv[1].running_mean is net[1].running_mean
