"""Losses: cross entropy (weights, ignore_index, label smoothing, probabilities, spatial), MSE,
BCE, regression and probability losses, KL divergence, graphs, gradcheck and errors."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._errors import _raises
from tests.nn._tensors import arr, f64


def _np_log_softmax(x, axis=1):
    z = x - x.max(axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis, keepdims=True))


def test_cross_entropy_matches_numpy(rng):
    x = rng.standard_normal((6, 4))
    t = np.array([0, 3, 1, 1, 2, 0])
    nll = -_np_log_softmax(x)[np.arange(6), t]
    for reduction, ref in (("mean", nll.mean()), ("sum", nll.sum()), ("none", nll)):
        out = nn.CrossEntropyLoss(reduction=reduction)(f64(x), gpugrad.tensor(t))
        np.testing.assert_allclose(arr(out), ref, rtol=1e-12)


def test_cross_entropy_ignore_index_and_weight(rng):
    x = rng.standard_normal((5, 3))
    t = np.array([0, 2, -100, 1, 2])
    w = np.array([0.5, 2.0, 1.5])
    keep = t != -100
    lp = _np_log_softmax(x)[np.arange(5)[keep], t[keep]]
    wt = w[t[keep]]
    loss = nn.CrossEntropyLoss(weight=f64(w))(f64(x), gpugrad.tensor(t))
    np.testing.assert_allclose(loss.item(), -(wt * lp).sum() / wt.sum(), rtol=1e-12)
    none = nn.CrossEntropyLoss(reduction="none", ignore_index=2)(f64(x[:2]), gpugrad.tensor([0, 2]))
    assert none.tolist()[1] == 0.0 and none.tolist()[0] > 0
    xt = f64(x, requires_grad=True)
    nn.CrossEntropyLoss()(xt, gpugrad.tensor(t)).backward()
    assert arr(xt.grad)[2].tolist() == [0.0, 0.0, 0.0]


def test_cross_entropy_label_smoothing_and_probabilities(rng):
    x = rng.standard_normal((4, 3))
    t = np.array([0, 2, 1, 1])
    lp = _np_log_softmax(x)
    eps = 0.1
    ref = ((1 - eps) * -lp[np.arange(4), t] + eps / 3 * -lp.sum(1)).mean()
    out = F.cross_entropy(f64(x), gpugrad.tensor(t), label_smoothing=eps)
    np.testing.assert_allclose(out.item(), ref, rtol=1e-12)
    probs = np.eye(3)[t] * 0.8 + 0.2 / 3
    out = F.cross_entropy(f64(x), f64(probs))
    np.testing.assert_allclose(out.item(), -(probs * lp).sum(1).mean(), rtol=1e-12)


def test_cross_entropy_spatial_targets(rng):
    x = rng.standard_normal((2, 3, 4))
    t = rng.integers(0, 3, (2, 4))
    lp = _np_log_softmax(x, axis=1)
    ref = -np.take_along_axis(lp, t[:, None], 1)[:, 0]
    out = F.cross_entropy(f64(x), gpugrad.tensor(t), reduction="none")
    np.testing.assert_allclose(arr(out), ref, rtol=1e-12)


def test_loss_graphs_match_pytorch():
    x = gpugrad.randn(3, 4, requires_grad=True)
    ce = F.cross_entropy(x, gpugrad.tensor([0, 1, 3]))
    assert ce.grad_fn.name() == "NllLossBackward0"
    assert len(ce.grad_fn.next_functions) == 1
    assert ce.grad_fn.next_functions[0][0].name() == "LogSoftmaxBackward0"
    mse = F.mse_loss(x, gpugrad.zeros(3, 4))
    assert mse.grad_fn.name() == "MseLossBackward0" and mse.grad_fn.next_functions[1] == (None, 0)
    bce = F.binary_cross_entropy_with_logits(x, gpugrad.rand(3, 4), pos_weight=gpugrad.ones(4))
    assert bce.grad_fn.name() == "BinaryCrossEntropyWithLogitsBackward0"
    assert len(bce.grad_fn.next_functions) == 2


def test_mse_loss_matches_numpy(rng):
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    for reduction, ref in (("mean", ((x - t) ** 2).mean()), ("sum", ((x - t) ** 2).sum()),
                           ("none", (x - t) ** 2)):
        out = nn.MSELoss(reduction=reduction)(f64(x), f64(t))
        np.testing.assert_allclose(arr(out), ref, rtol=1e-12)
    xt = f64(x, requires_grad=True)
    F.mse_loss(xt, f64(t)).backward()
    np.testing.assert_allclose(arr(xt.grad), 2 * (x - t) / x.size, rtol=1e-12)


def test_bce_with_logits_matches_numpy(rng):
    x = rng.standard_normal((3, 4)) * 3
    t = rng.uniform(size=(3, 4))
    w, pw = rng.uniform(0.5, 2, 4), rng.uniform(0.5, 2, 4)
    s = 1 / (1 + np.exp(-x))
    ref = -w * (pw * t * np.log(s) + (1 - t) * np.log(1 - s))
    out = nn.BCEWithLogitsLoss(weight=f64(w), pos_weight=f64(pw), reduction="none")(f64(x), f64(t))
    np.testing.assert_allclose(arr(out), ref, rtol=1e-10)
    plain = nn.BCEWithLogitsLoss()(f64(x), f64(t))
    np.testing.assert_allclose(plain.item(), (-(t * np.log(s) + (1 - t) * np.log(1 - s))).mean(),
                               rtol=1e-10)
    big = F.binary_cross_entropy_with_logits(f64([1000.0, -1000.0]), f64([0.0, 1.0]),
                                             reduction="none")
    assert big.tolist() == [1000.0, 1000.0]   # no overflow to inf or nan


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_gradients_gradcheck(reduction, rng):
    x = f64(rng.standard_normal((3, 4)), requires_grad=True)
    t = f64(rng.uniform(size=(3, 4)), requires_grad=True)
    w, pw = f64(rng.uniform(0.5, 2, 4)), f64(rng.uniform(0.5, 2, 4))
    labels = gpugrad.tensor([0, 3, -100])
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, t))
    assert gradcheck(lambda a: F.cross_entropy(a, labels, reduction=reduction), (x,))
    assert gradcheck(lambda a: F.cross_entropy(a, labels, w, reduction=reduction,
                                               label_smoothing=0.2), (x,))
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(
        a, b, w, reduction=reduction, pos_weight=pw), (x, t))
    x3 = f64(rng.standard_normal((2, 3, 2)), requires_grad=True)
    assert gradcheck(lambda a: F.cross_entropy(a, gpugrad.tensor([[0, 2], [1, -100]]),
                                               reduction=reduction), (x3,))
    assert gradgradcheck(lambda a: F.cross_entropy(a, labels, reduction=reduction), (x,))
    assert gradgradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), (x, t))


def test_loss_errors():
    x = gpugrad.randn(3, 4)
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.mse_loss(x, x, reduction="foo")
    with pytest.raises(IndexError, match="Target 7 is out of bounds."):
        F.cross_entropy(x, gpugrad.tensor([0, 7, 1]))
    with pytest.raises(ValueError, match=r"Expected input batch_size \(3\) to match target "
                                         r"batch_size \(2\)"):
        F.cross_entropy(x, gpugrad.tensor([0, 1]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, gpugrad.rand(3))
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Float"):
        F.nll_loss(x, gpugrad.tensor([0.0, 1.0, 2.0]))


def test_regression_and_probability_losses_exact_values():
    x, t = f64([0.2, 0.9, 0.5]), f64([0.0, 1.0, 1.0])
    assert nn.L1Loss()(x, t).item() == pytest.approx((0.2 + 0.1 + 0.5) / 3)
    d = np.array([0.2, -0.1, -0.5])
    want = np.where(np.abs(d) < 0.3, 0.5 * d * d / 0.3, np.abs(d) - 0.15).sum()
    assert nn.SmoothL1Loss(reduction="sum", beta=0.3)(x, t).item() == pytest.approx(want)
    want = np.where(np.abs(d) < 0.3, 0.5 * d * d, 0.3 * (np.abs(d) - 0.15))
    np.testing.assert_allclose(nn.HuberLoss("none", 0.3)(x, t).numpy(), want, rtol=1e-12)
    bce = -(np.log(0.8) + np.log(0.9) + np.log(0.5)) / 3
    assert nn.BCELoss()(x, t).item() == pytest.approx(bce, rel=1e-12)
    # log clamped at -100: a certain wrong answer costs 100, not inf
    assert F.binary_cross_entropy(f64([0.0]), f64([1.0])).item() == 100.0
    l1 = F.smooth_l1_loss(f64([0.2, 0.9, 0.5], requires_grad=True), t, beta=0.0)
    assert l1.grad_fn.name() == "MeanBackward0"   # the L1 loss then, graph included
    assert l1.item() == pytest.approx((0.2 + 0.1 + 0.5) / 3)


def test_bce_and_robust_loss_errors():
    with pytest.raises(RuntimeError, match="^all elements of input should be between 0 and 1$"):
        F.binary_cross_entropy(f64([1.5]), f64([1.0]))
    with pytest.raises(ValueError, match=re.escape(
            "Using a target size (gpugrad.Size([2])) that is different to the input size "
            "(gpugrad.Size([1])) is deprecated. Please ensure they have the same size.")):
        F.binary_cross_entropy(f64([0.5]), f64([1.0, 0.0]))
    with pytest.raises(RuntimeError, match="^huber_loss does not support non-positive values"):
        F.huber_loss(f64([0.5]), f64([1.0]), delta=0)
    with pytest.warns(UserWarning, match="Using a target size"):
        F.l1_loss(f64([[0.5], [1.0]]), f64([1.0]))


@pytest.mark.parametrize("kw", [{}, {"weight": [1.0, 2.0, 3.0, 4.0]}, {"label_smoothing": 0.1},
                                {"label_smoothing": 0.1, "weight": [2.0, 2.0, 1.0, 1.0]}])
def test_a_batch_whose_targets_are_all_ignored_has_zero_gradient(device, kw):
    """PyTorch: the mean over no targets is NaN, but the gradient is 0 (a fully padded batch
    must not poison the parameters)."""
    x = tensor(np.arange(12.0).reshape(3, 4) / 7, device, requires_grad=True)
    if "weight" in kw:
        kw = dict(kw, weight=tensor(kw["weight"], device))
    ignored = gpugrad.tensor([-100, -100, -100], device=device)
    loss = F.cross_entropy(x, ignored, **kw)
    loss.backward()
    assert np.isnan(loss.item())
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros((3, 4)))
    x.grad = None
    F.nll_loss(x, ignored, reduction="mean").backward()
    np.testing.assert_array_equal(to_numpy(x.grad), np.zeros((3, 4)))
    x.grad = None   # one target left: the usual mean over it
    F.nll_loss(x, gpugrad.tensor([-100, 2, -100], device=device)).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [[0, 0, 0, 0], [0, 0, -1, 0], [0, 0, 0, 0]])


def test_kl_div_reductions_match_numpy(device, rng):
    inp = np.log(rng.dirichlet(np.ones(4), size=3))
    tgt = rng.dirichlet(np.ones(4), size=3)
    tgt[0, 1] = 0.0   # 0 log 0 = 0
    pointwise = np.where(tgt > 0, tgt * np.log(np.where(tgt > 0, tgt, 1)), 0) - tgt * inp
    T = lambda v: tensor(v, device)   # noqa: E731
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = F.kl_div(T(inp), T(tgt))
    np.testing.assert_allclose(to_numpy(mean), pointwise.mean(), rtol=1e-13)
    for red, want in [("none", pointwise), ("sum", pointwise.sum()),
                      ("batchmean", pointwise.sum() / 3)]:
        np.testing.assert_allclose(to_numpy(nn.KLDivLoss(reduction=red)(T(inp), T(tgt))), want,
                                   rtol=1e-13)
    lt = np.log(tgt + 0.1)
    np.testing.assert_allclose(
        to_numpy(F.kl_div(T(inp), T(lt), reduction="sum", log_target=True)),
        (np.exp(lt) * (lt - inp)).sum(), rtol=1e-13)
    np.testing.assert_allclose(to_numpy(F.kl_div(T(inp), T(tgt), size_average=False)),
                               pointwise.sum(), rtol=1e-13)
    with pytest.raises(ValueError, match="bla is not a valid value for reduction"):
        F.kl_div(T(inp), T(tgt), reduction="bla")
    it = tensor(inp, requires_grad=True)
    assert gradcheck(lambda v: F.kl_div(v, tensor(tgt), reduction="batchmean"), (it,))
    assert gradcheck(lambda v: F.kl_div(v, tensor(lt), reduction="sum", log_target=True), (it,))


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = nn.NLLLoss2d()
    x = gpugrad.randn(2, 3, 4, 4).log_softmax(1)
    t = gpugrad.randint(0, 3, (2, 4, 4))
    assert loss(x, t).item() == pytest.approx(F.nll_loss(x, t).item(), rel=1e-12)
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = nn.Container(a=nn.Linear(1, 1))
    assert list(dict(c.named_children())) == ["a"]


@pytest.mark.parametrize("pair", [("int64", "float32"), ("float32", "int64"), ("bool", "float32")])
def test_kl_div_rejects_integral_inputs(pair):
    a, b = (gpugrad.ones(2).to(getattr(gpugrad, d)) for d in pair)
    with _raises(RuntimeError, "kl_div: Integral inputs not supported."):
        F.kl_div(a, b, reduction="sum")
