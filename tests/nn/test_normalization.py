"""Layer, RMS and local response normalisation: values, gradients, double backward, errors
and reprs."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._tensors import f64


def test_layer_norm_module_normalises_the_last_dims(rng):
    m = nn.LayerNorm((3, 4)).to(gpugrad.float64)
    assert repr(m) == "LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, bias=True)"
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m.weight.shape == (3, 4) and (m.weight.detach().numpy() == 1).all()
    with gpugrad.no_grad():
        m.weight.mul_(2.0)
        m.bias.add_(0.5)
    x = rng.standard_normal((2, 3, 4))
    y = m(f64(x, requires_grad=True))
    d = x - x.mean(axis=(1, 2), keepdims=True)
    want = d / np.sqrt((d ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5) * 2.0 + 0.5
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12)
    assert y.grad_fn.name() == "NativeLayerNormBackward0"
    bare = nn.LayerNorm(4, elementwise_affine=False)
    assert bare.weight is None and bare.bias is None and list(bare.state_dict()) == []
    assert list(nn.LayerNorm(4, bias=False).state_dict()) == ["weight"]


def test_layer_norm_gradients_and_double_backward(rng):
    x = f64(rng.standard_normal((3, 5)), requires_grad=True)
    w = f64(rng.standard_normal(5), requires_grad=True)
    b = f64(rng.standard_normal(5), requires_grad=True)

    def f(x, w, b):
        return F.layer_norm(x, 5, w, b, eps=1e-3)
    assert gradcheck(f, (x, w, b)) and gradgradcheck(f, (x, w, b))
    # the normalised rows have zero mean, so sum over a row of the output's x-gradient is 0
    y = F.layer_norm(x, 5)
    (g,) = gpugrad.autograd.grad(y, x, f64(rng.standard_normal((3, 5))))
    np.testing.assert_allclose(g.numpy().sum(axis=1), 0.0, atol=1e-12)


def test_layer_norm_shape_errors():
    x = gpugrad.zeros(2, 3)
    with pytest.raises(RuntimeError, match=re.escape(
            "Given normalized_shape=[4], expected input with shape [*, 4], but got input of "
            "size[2, 3]")):
        F.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            "[4] and normalized_shape = [3]")):
        F.layer_norm(x, [3], gpugrad.ones(4))
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected bias to be of same shape as normalized_shape, but got bias of shape [4] "
            "and normalized_shape = [3]")):
        F.layer_norm(x, [3], None, gpugrad.ones(4))


def test_rms_norm(device, rng):
    y = F.rms_norm(tensor([[3.0, 4.0]], device), (2,), eps=0.0)
    np.testing.assert_allclose(to_numpy(y), [[3 / math.sqrt(12.5), 4 / math.sqrt(12.5)]],
                               rtol=1e-15)
    x, w = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4))
    eps = np.finfo(np.float64).eps   # the default eps: the dtype's machine epsilon
    want = x / np.sqrt((x * x).mean((1, 2), keepdims=True) + eps) * w
    np.testing.assert_allclose(to_numpy(F.rms_norm(tensor(x, device), (3, 4), tensor(w, device))),
                               want, rtol=1e-12)
    m = nn.RMSNorm([3, 4], eps=1e-3).to(device).double()
    np.testing.assert_allclose(to_numpy(m(tensor(x, device))),
                               x / np.sqrt((x * x).mean((1, 2), keepdims=True) + 1e-3),
                               rtol=1e-12)
    a, wt = tensor(x, device, requires_grad=True), tensor(w[0], device, requires_grad=True)
    assert gradcheck(lambda a, w: F.rms_norm(a, (4,), w), (a, wt))
    assert gradgradcheck(lambda a, w: F.rms_norm(a, (4,), w), (a, wt))


def test_rms_norm_errors_and_repr():
    x = tensor(np.ones((2, 3)))
    with pytest.raises(RuntimeError, match=r"^Given normalized_shape=\[4\], expected input with "
                                           r"shape \[\*4\], but got input of size\[2, 3\]$"):
        F.rms_norm(x, (4,))
    with pytest.raises(ValueError, match="^Input tensor must have at least 3 dimensions, but "
                                         "got 2$"):
        F.rms_norm(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match=r"^Expected weight to be of same shape as "
                                           r"normalized_shape, but got weight of shape \[2\] "
                                           r"and normalized_shape = \[3\]$"):
        F.rms_norm(x, (3,), tensor(np.ones(2)))
    with pytest.raises(RuntimeError, match="^Expected normalized_shape to be at least "
                                           "1-dimensional"):
        F.rms_norm(x, ())
    assert repr(nn.RMSNorm(3)) == "RMSNorm((3,), eps=None, elementwise_affine=True)"
    m = nn.RMSNorm([2, 3], eps=1e-3, elementwise_affine=False)
    assert repr(m) == "RMSNorm((2, 3), eps=0.001, elementwise_affine=False)"
    assert m.weight is None and to_numpy(nn.RMSNorm(3).weight).tolist() == [1.0, 1.0, 1.0]


def np_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    out = np.empty_like(x)
    for i in range(c):   # the window: size // 2 channels before, (size - 1) // 2 after
        lo, hi = max(0, i - size // 2), min(c, i + (size - 1) // 2 + 1)
        s = (x[:, lo:hi] ** 2).sum(1)
        out[:, i] = x[:, i] / (k + alpha / size * s) ** beta
    return out


@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((2, 5, 3), 2), ((1, 4, 2, 3), 4)])
def test_local_response_norm(shape, size, device, rng):
    x = rng.standard_normal(shape)
    y = F.local_response_norm(tensor(x, device), size, 0.5, 0.75, 2.0)
    np.testing.assert_allclose(to_numpy(y), np_lrn(x, size, 0.5, 0.75, 2.0), rtol=1e-12)
    a = tensor(x, device, requires_grad=True)
    assert gradcheck(lambda a: nn.LocalResponseNorm(size, 0.5, 0.75, 2.0)(a), (a,))
    assert gradgradcheck(lambda a: F.local_response_norm(a, size, 0.5, 0.75, 2.0), (a,))


def test_local_response_norm_errors_and_repr():
    with pytest.raises(ValueError, match=r"^Expected 3D or higher dimensionality +input \(got "
                                         r"2 dimensions\)$"):
        F.local_response_norm(tensor(np.ones((2, 3))), 2)
    assert F.local_response_norm(tensor(np.ones((2, 3, 0))), 2).shape == (2, 3, 0)
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
