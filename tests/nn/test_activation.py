"""Further activations, normalisations, layers and losses of gpugrad.nn: values worked out by
hand or with numpy, gradcheck/gradgradcheck in float64, the random layers' laws, PyTorch's
error messages and reprs, and an oracle comparison with PyTorch (skipped without it)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck

f64 = gpugrad.float64
ALPHA = 1.7580993408473766   # SELU's alpha * scale


def grads(fn, *arrays, device="cpu"):
    """fn's value and the gradients of its sum w.r.t. every input."""
    xs = [tensor(a, device, requires_grad=True) for a in arrays]
    y = fn(*xs)
    y.sum().backward()
    return to_numpy(y), [to_numpy(x.grad) for x in xs]


def smooth_points(rng, shape, avoid=(), gap=0.1):
    """Random float64 points at least ``gap`` away from every kink in ``avoid``."""
    x = rng.uniform(-4, 4, shape)
    for k in avoid:
        x = np.where(np.abs(x - k) < gap, k + gap * 2, x)
    return x


# -- activations --------------------------------------------------------------------------------
X7 = [-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0]
ACTIVATION_CASES = [
    # name, call, input, expected output, expected d sum / dx
    ("hardsigmoid", F.hardsigmoid, X7, [0, 0, 0.25, 0.5, 0.75, 1, 1],
     [0, 0, 1 / 6, 1 / 6, 1 / 6, 0, 0]),
    ("hardswish", F.hardswish, X7, [0, 0, -0.375, 0, 1.125, 3, 4], [0, 0, 0, 0.5, 1, 1, 1]),
    ("hardshrink", F.hardshrink, [-1, -0.5, 0.2, 0.5, 0.7], [-1, 0, 0, 0, 0.7], [1, 0, 0, 0, 1]),
    ("softshrink", F.softshrink, [-1, -0.5, 0.2, 0.5, 0.7], [-0.5, 0, 0, 0, 0.2],
     [1, 0, 0, 0, 1]),
    ("softshrink_lambd", lambda x: F.softshrink(x, 1.0), [-3, 1, 2], [-2, 0, 1], [1, 0, 1]),
    ("softsign", F.softsign, [-1, 0, 3], [-0.5, 0, 0.75], [0.25, 1, 1 / 16]),
    ("threshold", lambda x: F.threshold(x, 0.5, -2.0), [1, 0.5, 0], [1, -2, -2], [1, 0, 0]),
    ("rrelu_eval", lambda x: F.rrelu(x, 0.2, 0.4), [-1, 0, 2], [-0.3, 0, 2], [0.3, 0.3, 1]),
    ("rrelu_fixed_slope", lambda x: F.rrelu(x, 0.2, 0.2, training=True), [-1, 0, 2],
     [-0.2, 0, 2], [0.2, 0.2, 1]),
]


@pytest.mark.parametrize("name,fn,x,want,dwant", ACTIVATION_CASES,
                         ids=[c[0] for c in ACTIVATION_CASES])
def test_activation_values_and_grads(name, fn, x, want, dwant, device):
    y, (gx,) = grads(fn, np.array(x, float), device=device)
    np.testing.assert_allclose(y, want, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(gx, dwant, rtol=1e-15, atol=1e-15)


def test_tanhshrink_matches_formula(device, rng):
    x = rng.standard_normal(6)
    y, (gx,) = grads(F.tanhshrink, x, device=device)
    np.testing.assert_allclose(y, x - np.tanh(x), rtol=1e-12)
    np.testing.assert_allclose(gx, np.tanh(x) ** 2, rtol=1e-12)


@pytest.mark.parametrize("fn,kinks,twice", [
    (F.hardsigmoid, (-3, 3), False), (F.hardswish, (-3, 3), True), (F.hardshrink, (-.5, .5), False),
    (F.softshrink, (-.5, .5), False), (F.softsign, (), True), (F.tanhshrink, (), True),
    (lambda x: F.threshold(x, 0.3, 2.0), (0.3,), False),
    (lambda x: F.rrelu(x, 0.1, 0.3), (0,), False)])
def test_activation_gradcheck(fn, kinks, twice, device, rng):
    x = tensor(smooth_points(rng, (3, 4), kinks), device, requires_grad=True)
    assert gradcheck(fn, (x,))
    if twice:
        assert gradgradcheck(fn, (x,))


def test_softmax2d(device, rng):
    x = rng.standard_normal((2, 3, 2, 2))
    y = to_numpy(nn.Softmax2d()(tensor(x, device)))
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(nn.Softmax2d()(tensor(x[0], device))), y[0], rtol=1e-12)
    with pytest.raises(ValueError, match="^Softmax2d: expected input to be 3D or 4D, got 2D "
                                         "instead$"):
        nn.Softmax2d()(tensor(x[0, 0], device))


def test_rrelu_training_draws_slopes_from_the_generator(device):
    x = tensor(np.linspace(-3, 3, 400), device, requires_grad=True)
    gpugrad.manual_seed(7)
    y1 = F.rrelu(x, 0.1, 0.3, training=True)
    gpugrad.manual_seed(7)
    y2 = nn.RReLU(0.1, 0.3)(x)
    np.testing.assert_array_equal(to_numpy(y1), to_numpy(y2))
    xv, yv = to_numpy(x), to_numpy(y1)
    neg = xv < 0
    slope = yv[neg] / xv[neg]
    assert np.all((slope >= 0.1) & (slope <= 0.3)) and np.unique(slope).size > 100
    np.testing.assert_array_equal(yv[~neg], xv[~neg])
    y1.sum().backward()   # the gradient is each element's own slope
    np.testing.assert_allclose(to_numpy(x.grad)[neg], slope, rtol=1e-12)
    np.testing.assert_array_equal(to_numpy(x.grad)[xv > 0], 1.0)
    m = nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(to_numpy(m(tensor([-2.0], device))), [-0.4], rtol=1e-15)
    with pytest.raises(RuntimeError, match="^Lower bound should be less than or equal to the "
                                           "upper bound$"):
        F.rrelu(x, 0.5, 0.1, training=True)


@pytest.mark.parametrize("name,inplace,outplace", [
    ("elu_", lambda t: F.elu_(t, 0.5), lambda t: F.elu(t, 0.5)),
    ("leaky_relu_", lambda t: F.leaky_relu_(t, 0.2), lambda t: F.leaky_relu(t, 0.2)),
    ("hardtanh_", lambda t: F.hardtanh_(t, -0.5, 0.5), lambda t: F.hardtanh(t, -0.5, 0.5)),
    ("selu_", F.selu_, F.selu), ("celu_", lambda t: F.celu_(t, 2.0), lambda t: F.celu(t, 2.0)),
    ("threshold_", lambda t: F.threshold_(t, 0.1, 5.0), lambda t: F.threshold(t, 0.1, 5.0)),
    ("rrelu_", lambda t: F.rrelu_(t, 0.2, 0.4), lambda t: F.rrelu(t, 0.2, 0.4)),
    ("hardsigmoid", lambda t: F.hardsigmoid(t, inplace=True), F.hardsigmoid),
    ("hardswish", lambda t: F.hardswish(t, inplace=True), F.hardswish)])
def test_inplace_variants(name, inplace, outplace, device, rng):
    x = rng.standard_normal(8) * 2
    leaf, ref = tensor(x, device, requires_grad=True), tensor(x, device, requires_grad=True)
    mid = leaf * 1.0
    out = inplace(mid)
    assert out is mid
    want = outplace(ref * 1.0)
    np.testing.assert_allclose(to_numpy(mid), to_numpy(want), rtol=1e-15)
    w = rng.standard_normal(8)
    (mid * tensor(w, device)).sum().backward()
    (want * tensor(w, device)).sum().backward()
    np.testing.assert_allclose(to_numpy(leaf.grad), to_numpy(ref.grad), rtol=1e-15)


def test_activation_errors_and_reprs():
    with pytest.raises(RuntimeError, match=r"^lambda must be in range \[0, 1.79769e\+308\] for "
                                           r"input dtype Double, but found -1.5$"):
        F.softshrink(tensor([1.0]), -1.5)
    with pytest.raises(RuntimeError, match=r"^lambda must be in range \[0, 3.40282e\+38\] for "
                                           r"input dtype Float, but found -1$"):
        F.softshrink(tensor([1.0], dtype=gpugrad.float32), -1)
    with pytest.raises(ValueError, match="^min_val cannot be greater than max_val$"):
        F.hardtanh_(tensor([1.0]), 2.0, 1.0)
    reprs = {nn.Hardsigmoid(): "Hardsigmoid()", nn.Hardswish(True): "Hardswish()",
             nn.Hardshrink(): "Hardshrink(0.5)", nn.Softshrink(0.3): "Softshrink(0.3)",
             nn.Softsign(): "Softsign()", nn.Tanhshrink(): "Tanhshrink()",
             nn.Threshold(0.1, 20): "Threshold(threshold=0.1, value=20)",
             nn.Threshold(0.1, 20, True): "Threshold(threshold=0.1, value=20, inplace=True)",
             nn.RReLU(): "RReLU(lower=0.125, upper=0.3333333333333333)",
             nn.RReLU(0.1, 0.3, True): "RReLU(lower=0.1, upper=0.3, inplace=True)",
             nn.Softmax2d(): "Softmax2d()"}
    for m, want in reprs.items():
        assert repr(m) == want


# -- normalisation ------------------------------------------------------------------------------
def np_instance_norm(x, w=None, b=None, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    y = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    col = (-1,) + (1,) * (x.ndim - 2)
    return y * (1 if w is None else w.reshape(col)) + (0 if b is None else b.reshape(col))


def test_instance_norm_values_and_running_stats(device, rng):
    x = rng.standard_normal((2, 3, 5))
    w, b = rng.standard_normal(3), rng.standard_normal(3)
    y = F.instance_norm(tensor(x, device), weight=tensor(w, device), bias=tensor(b, device))
    np.testing.assert_allclose(to_numpy(y), np_instance_norm(x, w, b), rtol=1e-10)
    m = nn.InstanceNorm1d(3, momentum=0.25, track_running_stats=True).to(device)
    m.double()
    np.testing.assert_allclose(to_numpy(m(tensor(x, device))), np_instance_norm(x), rtol=1e-10)
    mean = x.mean(2).mean(0)                 # per-instance statistics, averaged over samples
    var = x.var(2, ddof=1).mean(0)
    np.testing.assert_allclose(to_numpy(m.running_mean), 0.25 * mean, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(m.running_var), 0.75 + 0.25 * var, rtol=1e-12)
    assert int(m.num_batches_tracked.item()) == 0   # as PyTorch: instance norm never counts
    m.eval()   # normalised by the running statistics now
    rm, rv = to_numpy(m.running_mean), to_numpy(m.running_var)
    np.testing.assert_allclose(to_numpy(m(tensor(x, device))), (x - rm[:, None]) / np.sqrt(
        rv[:, None] + 1e-5), rtol=1e-10)


def test_instance_norm_modules(device, rng):
    x = rng.standard_normal((3, 4, 5))
    m = nn.InstanceNorm2d(3, affine=True).to(device).double()
    with gpugrad.no_grad():
        m.weight.copy_(tensor([1.0, 2.0, 3.0], device))
    y = to_numpy(m(tensor(x, device)))   # unbatched (C, H, W)
    np.testing.assert_allclose(y, np_instance_norm(x[None], np.array([1.0, 2, 3]))[0],
                               rtol=1e-10)
    x3 = rng.standard_normal((2, 2, 2, 3, 2))
    np.testing.assert_allclose(to_numpy(nn.InstanceNorm3d(2)(tensor(x3, device))),
                               np_instance_norm(x3), rtol=1e-10)
    a = tensor(x.reshape(4, 3, 5), device, requires_grad=True)
    wt, bs = tensor([0.5, 1.5, 2.0], device, requires_grad=True), tensor([0.1, 0.2, 0.3], device,
                                                                         requires_grad=True)
    assert gradcheck(lambda a, w, b: F.instance_norm(a, weight=w, bias=b), (a, wt, bs))
    assert gradgradcheck(lambda a, w, b: F.instance_norm(a, weight=w, bias=b), (a, wt, bs))


def test_instance_norm_errors_and_reprs():
    with pytest.raises(ValueError, match="^Expected more than 1 spatial element when training, "
                                         "got input size"):
        F.instance_norm(tensor(np.ones((2, 3, 1))))
    with pytest.raises(ValueError, match=r"^expected 2D or 3D input \(got 4D input\)$"):
        nn.InstanceNorm1d(3)(tensor(np.ones((2, 3, 4, 5))))
    with pytest.raises(ValueError, match=r"^expected 3D or 4D input \(got 2D input\)$"):
        nn.InstanceNorm2d(3)(tensor(np.ones((2, 3))))
    with pytest.raises(ValueError, match=r"^expected input's size at dim=1 to match "
                                         r"num_features \(4\), but got: 3.$"):
        nn.InstanceNorm1d(4, affine=True)(tensor(np.ones((2, 3, 4))))
    with pytest.warns(UserWarning, match="^input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(4)(tensor(np.arange(24.0).reshape(2, 3, 4)))
    with pytest.raises(RuntimeError, match="^Expected running_mean and running_var to be "
                                           "defined when use_input_stats is false$"):
        F.instance_norm(tensor(np.ones((2, 3, 4))), use_input_stats=False)
    with pytest.raises(RuntimeError, match="^running_mean should contain 6 elements not 4$"):
        F.instance_norm(tensor(np.ones((2, 3, 4))), tensor(np.zeros(2)), tensor(np.ones(2)))
    assert repr(nn.InstanceNorm1d(3)) == ("InstanceNorm1d(3, eps=1e-05, momentum=0.1, "
                                          "affine=False, bias=False, track_running_stats=False)")
    m = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    assert repr(m) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    assert sorted(dict(m.named_buffers())) == ["num_batches_tracked", "running_mean",
                                               "running_var"]
    assert sorted(dict(m.named_parameters())) == ["bias", "weight"]


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


# -- layers -------------------------------------------------------------------------------------
def test_bilinear(device, rng):
    x1, x2 = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    w, b = rng.standard_normal((5, 3, 4)), rng.standard_normal(5)
    want = np.array([[x1[n] @ w[o] @ x2[n] + b[o] for o in range(5)] for n in range(2)])
    y = F.bilinear(tensor(x1, device), tensor(x2, device), tensor(w, device), tensor(b, device))
    np.testing.assert_allclose(to_numpy(y), want, rtol=1e-12)
    y1 = F.bilinear(tensor(x1[0], device), tensor(x2[0], device), tensor(w, device))
    np.testing.assert_allclose(to_numpy(y1), want[0] - b, rtol=1e-12)
    args = [tensor(a, device, requires_grad=True) for a in (x1, x2, w, b)]
    assert gradcheck(F.bilinear, tuple(args))
    assert gradgradcheck(F.bilinear, tuple(args))
    m = nn.Bilinear(20, 3, 30, device=device)
    assert m.weight.shape == (30, 20, 3) and m.bias.shape == (30,)
    for p in (m.weight, m.bias):   # U(-1/sqrt(in1), 1/sqrt(in1))
        v = to_numpy(p)
        assert np.abs(v).max() <= 1 / math.sqrt(20) and np.abs(v).max() > 0.8 / math.sqrt(20)
    assert nn.Bilinear(2, 3, 4, bias=False).bias is None
    assert repr(m) == "Bilinear(in1_features=20, in2_features=3, out_features=30, bias=True)"


@pytest.mark.parametrize("shapes,msg", [
    (((2, 3), (2, 2, 5), (6, 3, 5), None), "input dimensions do not match: got 2 and 3"),
    (((2, 3), (4, 5), (6, 3, 5), None), "input batch dimensions do not match at dim 0: got 2 "
                                        "and 4"),
    (((2, 3), (2, 5), (3, 5, 5), None), "input1 size does not match weight size: got 3 but "
                                        "expected 5"),
    (((2, 3), (2, 5), (6, 3, 4), None), "input2 size does not match weight size: got 5 but "
                                        "expected 4"),
    (((2, 3), (2, 5), (6, 3, 5), (5,)), "bias size does not match weight size: got 5 but "
                                        "expected 6")])
def test_bilinear_errors(shapes, msg):
    args = [None if s is None else tensor(np.ones(s)) for s in shapes]
    with pytest.raises(RuntimeError, match=r"^bilinear\(\): " + msg + "$"):
        F.bilinear(*args)


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


def test_channel_shuffle(device, rng):
    x = tensor(np.arange(12.0).reshape(1, 6, 2), device, requires_grad=True)
    y = F.channel_shuffle(x, 3)   # (3 groups of 2) -> channel order 0, 2, 4, 1, 3, 5
    np.testing.assert_array_equal(to_numpy(y)[0, :, 0], [0, 4, 8, 2, 6, 10])
    w = rng.standard_normal((1, 6, 2))
    (y * tensor(w, device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad)[0, [0, 2, 4, 1, 3, 5]], w[0])
    assert to_numpy(nn.ChannelShuffle(2)(tensor(np.arange(4.0).reshape(1, 4, 1, 1),
                                                device))).ravel().tolist() == [0, 2, 1, 3]
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    for args, msg in [(((2, 6, 3), 4), "Number of channels must be divisible by groups. Got 6 "
                                       "channels and 4 groups."),
                      (((2, 6, 3), 0), "Number of groups to divide channels in must be "
                                       "positive. Value of groups:0"),
                      (((2, 6), 2), "channel_shuffle expects input with > 2 dims, but got "
                                    "input with sizes [2, 6]")]:
        with pytest.raises(RuntimeError, match="^" + msg.replace("[", r"\[").replace(
                "]", r"\]").replace(".", r"\.") + "$"):
            F.channel_shuffle(tensor(np.ones(args[0])), args[1])


def test_gumbel_softmax(device, rng):
    logits = rng.standard_normal((5, 4))
    x = tensor(logits, device, requires_grad=True)
    gpugrad.manual_seed(11)
    soft = F.gumbel_softmax(x, tau=0.5)
    gpugrad.manual_seed(11)   # the same Exp(1) draws, so the same Gumbel noise -log(E)
    e = to_numpy(gpugrad.empty((5, 4), dtype=f64, device=device).exponential_())
    z = (logits - np.log(e)) / 0.5
    want = np.exp(z - z.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(to_numpy(soft), want, rtol=1e-12)
    gpugrad.manual_seed(11)
    hard = F.gumbel_softmax(x, tau=0.5, hard=True)
    np.testing.assert_array_equal(to_numpy(hard), np.eye(4)[want.argmax(1)])
    w = tensor(rng.standard_normal((5, 4)), device)
    g_soft = gpugrad.autograd.grad((soft * w).sum(), x)[0]
    g_hard = gpugrad.autograd.grad((hard * w).sum(), x)[0]   # straight through
    np.testing.assert_allclose(to_numpy(g_hard), to_numpy(g_soft), rtol=1e-12)
    with pytest.warns(UserWarning, match="^`eps` parameter is deprecated and has no effect.$"):
        F.gumbel_softmax(x, eps=1e-3)


def test_pdist(device, rng):
    rows = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]])
    y, (g,) = grads(F.pdist, rows, device=device)
    r2 = math.sqrt(2)
    np.testing.assert_allclose(y, [0, r2, r2], rtol=1e-15)
    # d |x_i - x_j| / d x_i is the unit vector from x_j to x_i (0 for equal rows)
    np.testing.assert_allclose(g, [[1 / r2, -1 / r2], [1 / r2, -1 / r2], [-r2, r2]], rtol=1e-15)
    for p, want in [(1, [0, 2, 2]), (math.inf, [0, 1, 1]), (0, [0, 2, 2])]:
        np.testing.assert_allclose(to_numpy(F.pdist(tensor(rows, device), p)), want)
    x = rng.standard_normal((4, 3))
    want = [np.linalg.norm(x[i] - x[j], 1.5) for i in range(4) for j in range(i + 1, 4)]
    np.testing.assert_allclose(to_numpy(F.pdist(tensor(x, device), 1.5)), want, rtol=1e-12)
    assert F.pdist(tensor(x[:1], device)).shape == (0,)
    a = tensor(x, device, requires_grad=True)
    assert gradcheck(F.pdist, (a,)) and gradgradcheck(F.pdist, (a,))
    for arr, p, msg in [(np.ones((2, 3, 4)), 2, "pdist only supports 2D tensors, got: 3D"),
                        (np.ones((2, 3)), -1, "pdist only supports non-negative p values")]:
        with pytest.raises(RuntimeError, match="^" + msg + "$"):
            F.pdist(tensor(arr), p)
    with pytest.raises(RuntimeError, match="^pdist only supports floating-point dtypes$"):
        F.pdist(gpugrad.ones(2, 3, dtype=gpugrad.int64))


def test_pool_with_indices_aliases(device, rng):
    x1, x2 = tensor(rng.standard_normal((1, 2, 6)), device), tensor(
        rng.standard_normal((1, 2, 6, 6)), device)
    pairs = [(F.max_pool1d_with_indices(x1, 2), F.max_pool1d(x1, 2, return_indices=True)),
             (F.max_pool2d_with_indices(x2, 3, 2, 1), F.max_pool2d(x2, 3, 2, 1,
                                                                   return_indices=True)),
             (F.adaptive_max_pool1d_with_indices(x1, 4), F.adaptive_max_pool1d(x1, 4, True)),
             (F.adaptive_max_pool2d_with_indices(x2, 2), F.adaptive_max_pool2d(x2, 2, True))]
    for (v, i), (v2, i2) in pairs:
        np.testing.assert_array_equal(to_numpy(v), to_numpy(v2))
        np.testing.assert_array_equal(to_numpy(i), to_numpy(i2))
    v, i = F.max_pool1d_with_indices(tensor([[[1.0, 5.0, 2.0, 0.0]]], device), 2)
    assert to_numpy(v).tolist() == [[[5.0, 2.0]]] and to_numpy(i).tolist() == [[[1, 2]]]


# -- losses -------------------------------------------------------------------------------------
X4 = [[0.1, 0.2, 0.4, 0.8]]
LOSS_CASES = [
    # name, call on tensors, input arrays (first ones differentiable), per-element 'none' values
    ("margin_ranking", lambda a, b, t: F.margin_ranking_loss(a, b, t, 0.5, reduction="none"),
     ([1.0, 2, 3], [2.0, 2, 1], [1.0, -1, 1]), [1.5, 0.5, 0]),
    ("hinge_embedding", lambda x, t: F.hinge_embedding_loss(x, t, reduction="none"),
     ([0.3, 2.0, -0.5, 0.3], [1.0, -1, -1, 0]), [0.3, 0, 1.5, 1.0]),
    ("cosine_embedding", lambda a, b, t: F.cosine_embedding_loss(a, b, t, -0.5, reduction="none"),
     ([[1.0, 0], [1, 1]], [[0.0, 1], [1, 0]], [-1.0, 1]), [0.5, 1 - 1 / math.sqrt(2)]),
    ("soft_margin", lambda x, t: F.soft_margin_loss(x, t, reduction="none"),
     ([2.0, -1, 0], [1.0, 1, -1]), [math.log1p(math.exp(-2)), math.log1p(math.e), math.log(2)]),
    ("multilabel_soft_margin", lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction="none"),
     ([[0.0, 2.0]], [[1.0, 0.0]]), [(math.log(2) + math.log1p(math.exp(2))) / 2]),
    ("multi_margin", lambda x: F.multi_margin_loss(x, gpugrad.tensor([3], device=x.device),
                                                   reduction="none"),
     (X4,), [(0.3 + 0.4 + 0.6) / 4]),
    ("multi_margin_p2_weight", lambda x: F.multi_margin_loss(
        x, gpugrad.tensor([3], device=x.device), p=2,
        weight=gpugrad.tensor([1.0, 1, 1, 2], dtype=f64, device=x.device),
        reduction="none"), (X4,), [2 * (0.09 + 0.16 + 0.36) / 4]),
    ("multilabel_margin", lambda x: F.multilabel_margin_loss(
        x, gpugrad.tensor([[3, 0, -1, 1]], device=x.device), reduction="none"), (X4,),
     [(1.0 + 2.4) / 4]),
    ("multilabel_margin_repeat", lambda x: F.multilabel_margin_loss(
        x, gpugrad.tensor([[3, 3, -1, 1]], device=x.device), reduction="none"), (X4,),
     [2 * 1.3 / 4]),
    ("triplet_margin", lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0, eps=0.0,
                                                             reduction="none"),
     ([[0.0, 0], [0, 0]], [[3.0, 4], [1, 0]], [[1.0, 0], [0, 6]]), [6.0, 0]),
    ("triplet_margin_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, 1.0, p=1, eps=0.0,
                                                                  swap=True, reduction="none"),
     ([[0.0, 0]], [[3.0, 0]], [[4.0, 0]]), [3.0]),   # d(p, n) = 1 replaces d(a, n) = 4
    ("triplet_with_distance", lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: ((u - v) ** 2).sum(-1), margin=0.5,
        reduction="none"), ([[0.0, 0]], [[1.0, 1]], [[1.0, 0]]), [1.5]),
    ("gaussian_nll", lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     ([0.5, 2.0], [0.0, 3.0], [1.0, 4.0]),
     [0.125 + 0.5 * math.log(2 * math.pi), 0.5 * (math.log(4) + 0.25 + math.log(2 * math.pi))]),
    ("poisson_nll", lambda x, t: F.poisson_nll_loss(x, t, reduction="none"),
     ([0.0, 1.0], [2.0, 3.0]), [1.0, math.e - 3]),
    ("poisson_nll_full", lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True,
                                                         eps=0.0, reduction="none"),
     ([0.5, 2.0], [0.0, 3.0]),
     [0.5, 2 - 3 * math.log(2) + 3 * math.log(3) - 3 + 0.5 * math.log(6 * math.pi)]),
]


@pytest.mark.parametrize("name,fn,arrays,want", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_values(name, fn, arrays, want, device):
    args = [tensor(a, device) for a in arrays]
    np.testing.assert_allclose(to_numpy(fn(*args)), want, rtol=1e-10, atol=1e-15)


LOSS_FNS = {
    "margin_ranking": (F.margin_ranking_loss, nn.MarginRankingLoss, 3),
    "hinge_embedding": (F.hinge_embedding_loss, nn.HingeEmbeddingLoss, 2),
    "cosine_embedding": (F.cosine_embedding_loss, nn.CosineEmbeddingLoss, 3),
    "soft_margin": (F.soft_margin_loss, nn.SoftMarginLoss, 2),
    "multilabel_soft_margin": (F.multilabel_soft_margin_loss, nn.MultiLabelSoftMarginLoss, 2),
    "triplet_margin": (F.triplet_margin_loss, nn.TripletMarginLoss, 3),
    "poisson_nll": (F.poisson_nll_loss, nn.PoissonNLLLoss, 2),
}


@pytest.mark.parametrize("name", sorted(LOSS_FNS))
def test_loss_reductions_and_modules(name, device, rng):
    fn, module, n = LOSS_FNS[name]
    shapes = {"cosine_embedding": [(4, 3), (4, 3), (4,)], "triplet_margin": [(4, 3)] * 3}.get(
        name, [(4, 3)] * n)
    arrays = [rng.standard_normal(s) for s in shapes]
    if name in ("margin_ranking", "hinge_embedding", "cosine_embedding", "soft_margin"):
        arrays[-1] = np.sign(arrays[-1])
    args = [tensor(a, device) for a in arrays]
    none = to_numpy(fn(*args, reduction="none"))
    np.testing.assert_allclose(to_numpy(fn(*args)), none.mean(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(fn(*args, reduction="sum")), none.sum(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(module(reduction="sum")(*args)), none.sum(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(module(size_average=False)(*args)), none.sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(to_numpy(module(reduce=False)(*args)), none, rtol=1e-12)
    msg = "" if name == "multilabel_soft_margin" else " a valid value for reduction"
    with pytest.raises(ValueError, match=f"^bad is not{msg} valid$" if not msg else
                       f"^bad is not{msg}$"):
        fn(*args, reduction="bad")
    assert repr(module()) == f"{module.__name__}()"


@pytest.mark.parametrize("name", ["margin_ranking", "hinge_embedding", "cosine_embedding",
                                  "soft_margin", "multilabel_soft_margin", "multi_margin",
                                  "multilabel_margin", "triplet_margin", "triplet_distance",
                                  "gaussian_nll", "poisson_nll"])
def test_loss_gradcheck(name, device, rng):
    r = lambda *s: tensor(rng.standard_normal(s), device, requires_grad=True)   # noqa: E731
    sign = tensor(np.array([1.0, -1, 1, -1]), device)
    labels = tensor(np.array([0, 2, 1, 2]), device, dtype=gpugrad.int64)
    cases = {   # (function, differentiable inputs, smooth: also gradgradcheck)
        "margin_ranking": (lambda a, b: F.margin_ranking_loss(a, b, sign, 0.1), (r(4), r(4)),
                           False),
        "hinge_embedding": (lambda a: F.hinge_embedding_loss(a, sign, 0.5, reduction="sum"),
                            (r(4),), False),
        "cosine_embedding": (lambda a, b: F.cosine_embedding_loss(a, b, sign, -0.9),
                             (r(4, 3), r(4, 3)), True),
        "soft_margin": (lambda a, t: F.soft_margin_loss(a, t), (r(4), r(4)), True),
        "multilabel_soft_margin": (lambda a, t, w: F.multilabel_soft_margin_loss(a, t, w),
                                   (r(4, 3), r(4, 3), r(3)), True),
        "multi_margin": (lambda a, w: F.multi_margin_loss(a, labels, 2, 0.7, w),
                         (r(4, 3), r(3)), False),
        "multilabel_margin": (lambda a: F.multilabel_margin_loss(a, tensor(
            np.array([[0, 2, -1], [1, -1, 0], [2, 1, 0], [-1, 0, 0]]), device,
            dtype=gpugrad.int64)), (r(4, 3),), False),
        "triplet_margin": (lambda a, p, n: F.triplet_margin_loss(a, p, n, 3.0, p=1.5, swap=True),
                           (r(4, 3), r(4, 3), r(4, 3)), False),
        "triplet_distance": (lambda a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=nn.PairwiseDistance(), margin=5.0, reduction="sum"),
            (r(4, 3), r(4, 3), r(4, 3)), False),
        "gaussian_nll": (lambda a, t, v: F.gaussian_nll_loss(a, t, v * v + 0.5, full=True),
                         (r(4, 3), r(4, 3), r(4, 1)), True),
        "poisson_nll": (lambda a, t: F.poisson_nll_loss(a, t * t + 2, full=True),
                        (r(4, 3), r(4, 3)), True),
    }
    fn, args, smooth = cases[name]
    assert gradcheck(fn, args)
    if smooth:
        assert gradgradcheck(fn, args)


def test_loss_shapes():
    x = tensor(np.array([0.1, 0.2, 0.4]))
    assert F.multi_margin_loss(x, gpugrad.tensor(2), reduction="none").shape == ()
    assert F.multi_margin_loss(x, gpugrad.tensor([2]), reduction="none").shape == (1,)
    assert F.multilabel_margin_loss(x, gpugrad.tensor([2, -1, 0]), reduction="none").shape == ()
    g = F.gaussian_nll_loss(tensor(np.zeros((2, 3))), tensor(np.ones((2, 3))),
                            tensor(np.array([1.0, 4.0])), reduction="none")   # one var per row
    np.testing.assert_allclose(to_numpy(g), np.array([[0.5], [0.5 * (math.log(4) + 0.25)]])
                               * np.ones((2, 3)), rtol=1e-12)
    g = F.gaussian_nll_loss(tensor(np.zeros(2)), tensor(np.ones(2)), 0.0, reduction="none")
    np.testing.assert_allclose(to_numpy(g), 0.5 * (math.log(1e-6) + 1e6), rtol=1e-12)


LOSS_ERRORS = [
    (lambda: F.margin_ranking_loss(tensor([1.0]), tensor([[1.0]]), tensor([1.0])), RuntimeError,
     r"^margin_ranking_loss : All input tensors should have same dimension but got sizes: "),
    (lambda: F.cosine_embedding_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                     tensor(1.0)), RuntimeError,
     r"^0D target tensor expects 1D input tensors, but found inputs with sizes \[2, 3\] and "
     r"\[2, 3\].$"),
    (lambda: F.cosine_embedding_loss(tensor(np.ones(3)), tensor(np.ones((2, 3))),
                                     tensor(np.ones(2))), RuntimeError,
     r"^1D target tensor expects 2D input tensors, but found inputs with sizes \[3\] and "
     r"\[2, 3\].$"),
    (lambda: F.cosine_embedding_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                     tensor(np.ones((2, 2)))), RuntimeError,
     "^0D or 1D target tensor expected, multi-target not supported$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 1]), p=3),
     ValueError, "^only p == 1 and p == 2 supported$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 1, 2])),
     RuntimeError, r"^multi_margin_loss: target tensor should be 1-D with size equal to the "
     r"number of input samples \(batch size\). Expected target size \[2\], but got \[3\]. Input "
     r"has shape \[2, 3\].$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3, 4))), gpugrad.tensor([0, 1])),
     RuntimeError, r"^Expected non-empty vector or matrix with optional 0-dim batch size, but "
     r"got: \[2, 3, 4\]$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 5])),
     RuntimeError, "^target out of range$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 1]),
                                 weight=tensor(np.ones(2))), RuntimeError,
     r"^inconsistent weight size, expected 3 but got \[2\]$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), tensor([0.0, 1.0])), RuntimeError,
     "^expected scalar type Long but found Double$"),
    (lambda: nn.MultiMarginLoss(weight=tensor(np.ones((2, 2)))), ValueError,
     "^MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead$"),
    (lambda: F.multilabel_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([[0, 1, -1]])),
     RuntimeError, r"^inconsistent target size: \[1, 3\] for input of size: \[2, 3\]$"),
    (lambda: F.multilabel_margin_loss(tensor(np.ones((1, 4))), gpugrad.tensor([[3, -1, 5, 1]])),
     RuntimeError, "^argument #2 'target' is out of range$"),
    (lambda: F.triplet_margin_loss(tensor(np.ones((2, 3))), tensor(np.ones(3)),
                                   tensor(np.ones((2, 3)))), RuntimeError,
     "^The anchor, positive, and negative tensors are expected to have the same number of "
     "dimensions, but got: anchor 2D, positive 1D, and negative 2D inputs$"),
    (lambda: F.triplet_margin_loss(tensor([1.0]), tensor([1.0]), tensor([1.0]), margin=-1),
     ValueError, "^margin must be greater than 0, got -1$"),
    (lambda: nn.TripletMarginLoss(margin=0), ValueError,
     "^TripletMarginLoss: expected margin to be greater than 0, got 0 instead$"),
    (lambda: F.triplet_margin_with_distance_loss(tensor([1.0]), tensor([1.0]), tensor([1.0]),
                                                 margin=0), ValueError,
     "^margin must be greater than 0, got 0$"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=-1), ValueError,
     "^TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead$"),
    (lambda: F.gaussian_nll_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                 tensor(-np.ones((2, 3)))), ValueError,
     "^var has negative entry/entries$"),
    (lambda: F.gaussian_nll_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                 tensor(np.ones((2, 2)))), ValueError,
     "^var is of incorrect size$"),
    (lambda: F.gaussian_nll_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                 tensor(np.ones((2, 3))), reduction="x"), ValueError,
     "^x is not valid$"),
    (lambda: F.multilabel_soft_margin_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                           reduction="x"), ValueError, "^x is not valid$"),
    (lambda: F.hinge_embedding_loss(tensor(np.ones(3)), tensor(np.ones(4))), RuntimeError,
     r"^The size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton "
     r"dimension 0$"),
]


@pytest.mark.parametrize("call,exc,msg", LOSS_ERRORS)
def test_loss_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_loss_module_reprs():
    assert repr(nn.TripletMarginWithDistanceLoss()) == (
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)")
    m = nn.MultiMarginLoss(weight=tensor(np.ones(3)))
    assert list(dict(m.named_buffers())) == ["weight"] and m.p == 1 and m.margin == 1.0
    assert nn.HingeEmbeddingLoss().margin == 1.0 and nn.MarginRankingLoss().margin == 0.0
    assert nn.PoissonNLLLoss().eps == 1e-8 and nn.GaussianNLLLoss().eps == 1e-6


# -- PyTorch as an oracle -----------------------------------------------------------------------
def _sign(a):
    return np.where(a >= 0, 1.0, -1.0)


ORACLE = [
    # name, module factory (given the nn namespace), input shapes and, for losses, what turns
    # the last random array into a target (which then gets no gradient)
    ("Hardsigmoid", lambda m: m.Hardsigmoid(), [(3, 4)]),
    ("Hardswish", lambda m: m.Hardswish(), [(3, 4)]),
    ("Hardshrink", lambda m: m.Hardshrink(0.3), [(3, 4)]),
    ("Softshrink", lambda m: m.Softshrink(0.3), [(3, 4)]),
    ("Softsign", lambda m: m.Softsign(), [(3, 4)]),
    ("Tanhshrink", lambda m: m.Tanhshrink(), [(3, 4)]),
    ("Threshold", lambda m: m.Threshold(0.1, -2.0), [(3, 4)]),
    ("RReLU_eval", lambda m: m.RReLU(0.1, 0.4).eval(), [(3, 4)]),
    ("Softmax2d", lambda m: m.Softmax2d(), [(2, 3, 2, 2)]),
    ("InstanceNorm1d", lambda m: m.InstanceNorm1d(3, affine=True), [(2, 3, 5)]),
    ("InstanceNorm2d_stats", lambda m: m.InstanceNorm2d(3, track_running_stats=True),
     [(2, 3, 2, 3)]),
    ("RMSNorm", lambda m: m.RMSNorm(4), [(3, 4)]),
    ("LocalResponseNorm", lambda m: m.LocalResponseNorm(3, 0.5, 0.75, 2.0), [(2, 5, 3, 2)]),
    ("Bilinear", lambda m: m.Bilinear(3, 4, 5), [(2, 3), (2, 4)]),
    ("ChannelShuffle", lambda m: m.ChannelShuffle(3), [(2, 6, 2)]),
    ("MarginRankingLoss", lambda m: m.MarginRankingLoss(0.2), [(5,), (5,), (5,)], _sign),
    ("HingeEmbeddingLoss", lambda m: m.HingeEmbeddingLoss(0.7, reduction="sum"), [(5,), (5,)],
     _sign),
    ("CosineEmbeddingLoss", lambda m: m.CosineEmbeddingLoss(0.1), [(4, 3), (4, 3), (4,)], _sign),
    ("SoftMarginLoss", lambda m: m.SoftMarginLoss(), [(3, 4), (3, 4)], _sign),
    ("MultiLabelSoftMarginLoss", lambda m: m.MultiLabelSoftMarginLoss(), [(3, 4), (3, 4)],
     lambda a: (a > 0).astype(float)),
    ("MultiMarginLoss", lambda m: m.MultiMarginLoss(p=2, margin=0.7), [(3, 4), (3,)],
     lambda a: np.array([0, 3, 1])),
    ("MultiLabelMarginLoss", lambda m: m.MultiLabelMarginLoss(reduction="none"), [(3, 4), (3, 4)],
     lambda a: np.array([[0, 3, -1, 2], [1, -1, 0, 0], [3, 2, 1, 0]])),
    ("TripletMarginLoss", lambda m: m.TripletMarginLoss(p=1.5, swap=True),
     [(4, 3), (4, 3), (4, 3)]),
    ("TripletMarginWithDistanceLoss", lambda m: m.TripletMarginWithDistanceLoss(swap=True),
     [(4, 3), (4, 3), (4, 3)]),
    ("GaussianNLLLoss", lambda m: m.GaussianNLLLoss(full=True), [(4, 3), (4, 3), (4, 1)],
     np.abs),
    ("PoissonNLLLoss", lambda m: m.PoissonNLLLoss(full=True), [(4, 3), (4, 3)],
     lambda a: np.abs(a) * 3),
    ("PoissonNLLLoss_prob", lambda m: m.PoissonNLLLoss(log_input=False), [(4, 3), (4, 3)],
     lambda a: np.abs(a) * 3),
]


@pytest.mark.parametrize("case", ORACLE, ids=[c[0] for c in ORACLE])
def test_matches_pytorch(case, rng):
    torch = pytest.importorskip("torch")
    name, factory, shapes = case[:3]
    target = case[3] if len(case) > 3 else None
    arrays = [rng.standard_normal(s) for s in shapes]
    if name == "PoissonNLLLoss_prob":
        arrays[0] = np.abs(arrays[0]) + 0.1
    if target is not None:   # the last input is a target: no gradient
        arrays[-1] = target(arrays[-1])
    n_diff = len(arrays) - (target is not None)
    ours, theirs = factory(nn).double(), factory(torch.nn).double()
    theirs.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    mine = [tensor(a, dtype=gpugrad.int64 if a.dtype.kind == "i" else f64,
                   requires_grad=i < n_diff) for i, a in enumerate(arrays)]
    ref = [torch.tensor(a, requires_grad=i < n_diff) for i, a in enumerate(arrays)]
    y, ty = ours(*mine), theirs(*ref)
    np.testing.assert_allclose(to_numpy(y), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(ty.shape))
    (y * tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    # NOTE: PyTorch's hardsigmoid backward multiplies by a float32 1/6, even in float64
    tol = 1e-7 if name == "Hardsigmoid" else 1e-10
    for a, b in zip(mine[:n_diff], ref[:n_diff]):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=tol, atol=1e-12)
    for (k, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), tp.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=k)
    for (k, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(to_numpy(b), tb.numpy(), rtol=1e-10, err_msg=k)


def test_composed_activations_in_place_on_a_non_leaf(device):
    # selu and celu are composed of several ops: writing the result over the input must not
    # invalidate what the inner nodes saved from it
    for name, kw in (("selu", {}), ("celu", {"alpha": 2.0})):
        fn = getattr(F, name)
        x = tensor([-1.0, 0.5, 2.0], device, gpugrad.float64, requires_grad=True)
        y = x * 1
        out = fn(y, inplace=True, **kw)
        assert out is y and y._version == 1
        out.sum().backward()
        ref = x.detach().clone().requires_grad_()
        fn(ref, **kw).sum().backward()   # out of place
        assert to_numpy(x.grad).tolist() == to_numpy(ref.grad).tolist()
    x = tensor([-1.0, 0.5], device, gpugrad.float64, requires_grad=True)
    F.selu(x * 1, inplace=True).sum().backward()
    alpha, scale = 1.6732632423543772, 1.0507009873554805
    np.testing.assert_allclose(to_numpy(x.grad), [scale * alpha * np.exp(-1.0), scale],
                               rtol=1e-15)
