"""Activations and their F forms: values against numpy or hand-worked formulas,
gradcheck/gradgradcheck in float64, in-place variants, integer dtypes, errors and reprs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._errors import _raises
from tests.nn._gradients import grads
from tests.nn._reference import sig
from tests.nn._tensors import arr, f64


@pytest.mark.parametrize("module, ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi)
                                                      * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Softmax(dim=1), lambda x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
    (nn.LogSoftmax(dim=1), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
    (nn.Identity(), lambda x: x),
    (nn.Flatten(), lambda x: x.reshape(len(x), -1)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_activation_matches_numpy(module, ref, rng):
    x = rng.standard_normal((4, 5))
    np.testing.assert_allclose(arr(module(f64(x))), ref(x), rtol=1e-7, atol=1e-10)


def test_softmax_without_dim_warns_and_uses_legacy_dim():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        y = nn.Softmax()(gpugrad.randn(2, 3))
    np.testing.assert_allclose(arr(y).sum(1), [1, 1], rtol=1e-6)


def test_inplace_activations():
    x = gpugrad.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x and x.tolist() == [0.0, 2.0]
    y = gpugrad.tensor([-1.0, 2.0])
    nn.LeakyReLU(0.5, inplace=True)(y)
    assert y.tolist() == [-0.5, 2.0]


def test_more_activation_modules_and_in_place_forms():
    x = f64([-2.0, -0.5, 0.5, 7.0])
    np.testing.assert_allclose(nn.ELU(0.5)(x).numpy(), [0.5 * np.expm1(-2), 0.5 * np.expm1(-0.5),
                                                         0.5, 7.0], rtol=1e-12)
    assert nn.ReLU6()(x).tolist() == [0.0, 0.0, 0.5, 6.0]
    assert nn.Hardtanh(-1.0, 1.0)(x).tolist() == [-1.0, -0.5, 0.5, 1.0]
    np.testing.assert_allclose(nn.Mish()(x).numpy(),
                               x.numpy() * np.tanh(np.log1p(np.exp(x.numpy()))), rtol=1e-12)
    y = f64([-2.0, 3.0], requires_grad=True) * 1
    assert F.elu(y, inplace=True) is y and y.grad_fn.name() == "EluBackward0"
    z = f64([-2.0, 3.0])
    assert F.relu6(z, inplace=True) is z and z.tolist() == [0.0, 3.0]
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(z, 1.0, -1.0)


def smooth_points(rng, shape, avoid=(), gap=0.1):
    """Random float64 points at least ``gap`` away from every kink in ``avoid``."""
    x = rng.uniform(-4, 4, shape)
    for k in avoid:
        x = np.where(np.abs(x - k) < gap, k + gap * 2, x)
    return x


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


def test_prelu_matches_numpy_and_gradcheck(device, rng):
    x = rng.standard_normal((2, 3, 4))
    x[0, 0, 0] = 0.0
    w = np.array([0.1, -0.2, 0.3])
    out = F.prelu(tensor(x, device), tensor(w, device))
    np.testing.assert_array_equal(to_numpy(out), np.where(x > 0, x, w[:, None] * x))
    m = nn.PReLU().to(device)
    assert to_numpy(m.weight).tolist() == [0.25] and repr(nn.PReLU(3)) == "PReLU(num_parameters=3)"
    np.testing.assert_allclose(to_numpy(m(tensor(x, device, dtype=gpugrad.float32))),
                               np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    assert F.prelu(tensor(-2.0), tensor([0.5])).shape == ()
    wt = tensor(w, requires_grad=True)
    assert gradcheck(F.prelu, (tensor(x + 0.01, requires_grad=True), wt))
    z = tensor(np.zeros((1, 3)), requires_grad=True)
    F.prelu(z, wt).sum().backward()
    np.testing.assert_array_equal(to_numpy(z.grad), w[None])   # slope w at 0, as PyTorch
    with pytest.raises(RuntimeError, match="Found parameter numbers = 2 and channel size = 3"):
        F.prelu(gpugrad.randn(2, 3), gpugrad.ones(2))
    with pytest.raises(RuntimeError, match="Expected `weight` to be a scalar or 1D tensor"):
        F.prelu(gpugrad.randn(2, 3), gpugrad.ones(1, 3))


def test_selu_and_celu_match_numpy(device, rng):
    x = np.concatenate([rng.standard_normal(10) * 3, [0.0, 50.0, -50.0]])
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    np.testing.assert_allclose(to_numpy(F.selu(tensor(x, device))),
                               scale * np.where(x > 0, x, alpha * np.expm1(x)), rtol=1e-14)
    for a in (1.0, 0.7, 2.5):
        np.testing.assert_allclose(to_numpy(F.celu(tensor(x, device), a)),
                                   np.where(x > 0, x, a * np.expm1(x / a)), rtol=1e-14)
    t = tensor(x, device)
    assert F.selu(t, inplace=True) is t and nn.SELU(inplace=True)(t) is t
    assert np.isfinite(to_numpy(t)).all()
    xt = tensor(x[:10] / 10, requires_grad=True)   # away from the kink at 0
    assert gradcheck(F.selu, (xt,)) and gradcheck(lambda v: F.celu(v, 0.7), (xt,))
    big = tensor([100.0, -100.0], requires_grad=True)
    F.celu(big, 0.5).sum().backward()
    np.testing.assert_allclose(to_numpy(big.grad), [1.0, 0.0], atol=1e-80)
    assert repr(nn.CELU(0.5, inplace=True)) == "CELU(alpha=0.5, inplace=True)"
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(t, 0.0)


def test_logsigmoid_softmin_glu_match_numpy(device, rng):
    x = np.concatenate([rng.standard_normal(6) * 4, [0.0, 40.0, -40.0, -800.0, 800.0]])
    got = to_numpy(nn.LogSigmoid()(tensor(x, device)))
    want = np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert got[-2] == -800.0 and got[-1] == 0.0   # no overflow at either end
    y = rng.standard_normal((3, 4))
    e = np.exp(-y + y.min(1, keepdims=True))
    np.testing.assert_allclose(to_numpy(nn.Softmin(1)(tensor(y, device))),
                               e / e.sum(1, keepdims=True), rtol=1e-14)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmin"):
        F.softmin(tensor(y))
    np.testing.assert_allclose(to_numpy(nn.GLU()(tensor(y, device))), y[:, :2] * sig(y[:, 2:]),
                               rtol=1e-14)
    np.testing.assert_allclose(to_numpy(F.glu(tensor(y.T, device), 0)), y.T[:2] * sig(y.T[2:]),
                               rtol=1e-14)
    with pytest.raises(RuntimeError, match="Halving dimension must be even, but dimension 1 is "
                                           "size 3"):
        F.glu(gpugrad.randn(2, 3))
    with pytest.raises(RuntimeError, match="glu does not support scalars"):
        F.glu(gpugrad.tensor(1.0))
    xt = tensor(x[:8], requires_grad=True)
    assert gradcheck(F.logsigmoid, (xt,))
    yt = tensor(y, requires_grad=True)
    assert gradcheck(lambda v: F.softmin(v, 1), (yt,)) and gradcheck(F.glu, (yt,))


def test_hardtanh_and_relu6_keep_integer_dtype(device):
    x = gpugrad.tensor([1, -2, 0, 7], dtype=gpugrad.int32, device=device)
    y = F.hardtanh(x, -1.5, 0.7)   # limits truncate to -1 and 0
    assert y.dtype == gpugrad.int32 and to_numpy(y).tolist() == [0, -1, 0, 0]
    y = F.relu6(x)
    assert y.dtype == gpugrad.int32 and to_numpy(y).tolist() == [1, 0, 0, 6]
    u = gpugrad.tensor([1, 2, 0], dtype=gpugrad.uint8, device=device)
    assert to_numpy(nn.ReLU6()(u)).tolist() == [1, 2, 0]
    x = gpugrad.tensor([3, -4])
    assert F.hardtanh(x, inplace=True) is x and to_numpy(x).tolist() == [1, -1]


def test_hardtanh_integer_errors():
    with _raises(RuntimeError, "cannot do hardtanh on an unsigned type with negative limits"):
        F.hardtanh(gpugrad.tensor([1], dtype=gpugrad.uint8))
    with _raises(RuntimeError, "Bool inputs not supported for hardtanh"):
        F.hardtanh(gpugrad.tensor([True]))


def test_threshold_keeps_integer_dtype():
    y = F.threshold(gpugrad.tensor([1, -2, 0]), 0.5, 7.9)   # compares with 0, fills with 7
    assert y.dtype == gpugrad.int64 and to_numpy(y).tolist() == [1, 7, 7]
    y = nn.Threshold(0.5, 7.9)(gpugrad.tensor([1, 2, 0], dtype=gpugrad.uint8))
    assert y.dtype == gpugrad.uint8 and to_numpy(y).tolist() == [1, 2, 7]
    with _raises(NotImplementedError, "\"threshold_cpu\" not implemented for 'Bool'"):
        F.threshold(gpugrad.tensor([True]), 0, 1)


def test_hardtanh_module_checks_limits():
    with _raises(AssertionError, "max_val (1.0) must be greater than min_val (2.0)"):
        nn.Hardtanh(2.0, 1.0)
    with _raises(AssertionError, "max_val (1) must be greater than min_val (1)"):
        nn.Hardtanh(1, 1)


def test_glu_dim_out_of_range():
    with _raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                             "got 2)"):
        F.glu(gpugrad.ones(3, 4), 2)
    with _raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                             "got -3)"):
        nn.GLU(-3)(gpugrad.ones(3, 4))


def test_glu_negative_dim_value():
    x = gpugrad.tensor([[1.0, 2.0], [0.0, -1.0]])
    y = F.glu(x, -2)   # a = row 0, b = row 1
    np.testing.assert_allclose(to_numpy(y), [[0.5, 2 / (1 + math.e)]], rtol=1e-6)
