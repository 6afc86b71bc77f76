"""Dropout: eval is the identity, training scales; alpha and feature-alpha dropout, Dropout1d/2d/3d
zeroing whole channels, in-place forms, warnings and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from tests.nn._tensors import arr


def test_dropout_eval_is_identity_and_train_scales():
    gpugrad.manual_seed(0)
    d = nn.Dropout(p=0.25)
    x = gpugrad.ones(2000, requires_grad=True)
    y = d(x)
    np.testing.assert_allclose(np.unique(arr(y)), [0.0, 1 / 0.75], rtol=1e-6)
    kept = (arr(y) > 0).mean()
    assert 0.7 < kept < 0.8
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_allclose(arr(x.grad), arr(y))   # gradient = the scaled mask
    d.eval()
    assert d(x) is x
    assert F.dropout(x, 1.0).sum().item() == 0
    assert repr(d) == "Dropout(p=0.25, inplace=False)"
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout(1.5)


f64 = gpugrad.float64


ALPHA = 1.7580993408473766   # SELU's alpha * scale


@pytest.mark.parametrize("feature", [False, True])
def test_alpha_dropout_law(feature, device):
    p = 0.3
    a = 1 / math.sqrt((ALPHA ** 2 * p + 1) * (1 - p))
    fn = F.feature_alpha_dropout if feature else F.alpha_dropout
    shape = (20, 3, 10) if feature else (20, 30)
    x = tensor(np.linspace(-2, 2, 600).reshape(shape), device, requires_grad=True)
    gpugrad.manual_seed(3)
    y = fn(x, p, True)
    gpugrad.manual_seed(3)
    module = (nn.FeatureAlphaDropout if feature else nn.AlphaDropout)(p)
    np.testing.assert_array_equal(to_numpy(module(x)), to_numpy(y))
    xv, yv = to_numpy(x), to_numpy(y)
    kept = np.isclose(yv, a * xv + a * ALPHA * p, rtol=0, atol=1e-12)
    dropped = np.isclose(yv, -a * ALPHA * (1 - p), rtol=0, atol=1e-12)
    assert np.all(kept | dropped) and 0.2 < dropped.mean() < 0.4
    if feature:   # one decision per (sample, channel)
        assert np.all(kept.all(-1) | dropped.all(-1))
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), np.where(kept, a, 0.0), rtol=1e-15)
    assert fn(x, p) is x and fn(x, 0.0, True) is x and module.eval()(x) is x
    np.testing.assert_array_equal(to_numpy(fn(x, 1.0, True)), 0.0)


def test_alpha_dropout_keeps_selu_statistics(device):
    gpugrad.manual_seed(0)
    x = gpugrad.randn(400_000, dtype=f64, device=device)
    y = to_numpy(F.alpha_dropout(x, 0.2, True))
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01


def test_dropout3d(device):
    x = tensor(np.ones((4, 6, 2, 3, 2)), device, requires_grad=True)
    gpugrad.manual_seed(1)
    y = to_numpy(F.dropout3d(x, 0.5))
    per_channel = y.reshape(4, 6, -1)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert np.all(per_channel.min(-1) == per_channel.max(-1))   # whole channels
    u = tensor(np.ones((6, 2, 3, 2)), device)   # unbatched: channels are dim 0
    z = to_numpy(nn.Dropout3d(0.5)(u)).reshape(6, -1)
    assert np.all(z.min(-1) == z.max(-1))
    assert nn.Dropout3d().eval()(x) is x
    with pytest.warns(UserWarning, match="^dropout3d: Received a 3-D input to dropout3d"):
        F.dropout3d(tensor(np.ones((2, 3, 4))), 0.5)
    with pytest.raises(ValueError, match="^dropout probability has to be between 0 and 1, but "
                                         "got 1.5$"):
        nn.Dropout3d(1.5)
    with pytest.raises(RuntimeError, match="^Feature dropout requires at least 2 dimensions in "
                                           "the input$"):
        F.feature_alpha_dropout(tensor(np.ones(3)), 0.5, True)
    assert repr(nn.AlphaDropout()) == "AlphaDropout(p=0.5, inplace=False)"
    assert repr(nn.FeatureAlphaDropout(0.2)) == "FeatureAlphaDropout(p=0.2, inplace=False)"
    assert repr(nn.Dropout3d()) == "Dropout3d(p=0.5, inplace=False)"


@pytest.mark.parametrize("fn,shape,channels", [
    (F.dropout2d, (3, 4, 5, 6), (3, 4)), (F.dropout1d, (3, 4, 5), (3, 4)),
    (F.dropout1d, (4, 5), (4,))])
def test_channel_dropout_zeroes_whole_channels(fn, shape, channels, device):
    x = gpugrad.ones(shape, device=device, dtype=f64)
    gpugrad.manual_seed(0)
    y = to_numpy(fn(x, 0.5))
    per_channel = y.reshape(channels + (-1,))
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).mean() < 1
    assert np.all(per_channel == per_channel[..., :1])   # one decision per channel
    gpugrad.manual_seed(0)
    np.testing.assert_array_equal(to_numpy(fn(x, 0.5)), y)
    assert fn(x, 0.5, training=False) is x and fn(x, 0.0) is x
    assert np.all(to_numpy(fn(x, 1.0)) == 0)


def test_channel_dropout_modules_inplace_warnings_and_errors():
    m = nn.Dropout2d(0.5)
    assert repr(m) == "Dropout2d(p=0.5, inplace=False)" and repr(nn.Dropout1d()) == (
        "Dropout1d(p=0.5, inplace=False)")
    x = gpugrad.ones(2, 8, 3, 3)
    assert m.eval()(x) is x
    y = gpugrad.ones(2, 8, 3, 3)
    gpugrad.manual_seed(0)
    assert nn.Dropout2d(0.5, inplace=True)(y) is y and (to_numpy(y) == 0).any()
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        F.dropout2d(gpugrad.ones(2, 3, 4))
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        F.dropout2d(gpugrad.ones(2, 3))
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 1D"):
        F.dropout1d(gpugrad.ones(3))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1"):
        nn.Dropout2d(1.5)
