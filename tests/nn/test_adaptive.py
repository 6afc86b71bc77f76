"""AdaptiveLogSoftmaxWithLoss: probabilities, errors and agreement with PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
from gpugrad.autograd import gradcheck
from tests.nn._exact_errors import _raises


def test_adaptive_log_softmax_probabilities_and_errors():
    gpugrad.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(6, 9, [2, 5], div_value=2.0, dtype=gpugrad.float64)
    x = gpugrad.randn(5, 6, dtype=gpugrad.float64, requires_grad=True)
    target = gpugrad.tensor([0, 3, 8, 1, 5])
    logp = m.log_prob(x)
    np.testing.assert_allclose(to_numpy(logp.exp().sum(1)), 1.0, rtol=1e-12)
    out, loss = m(x, target)
    np.testing.assert_allclose(to_numpy(out), to_numpy(logp)[np.arange(5), [0, 3, 8, 1, 5]],
                               rtol=1e-12)
    assert loss.item() == pytest.approx(-to_numpy(out).mean(), rel=1e-12)
    assert to_numpy(m.predict(x)).tolist() == to_numpy(logp).argmax(1).tolist()
    assert gradcheck(lambda v: m(v, target).loss, [x])
    assert [len(t) for t in m.tail] == [2, 2] and m.tail[1][0].out_features == 1
    with _raises(ValueError, "cutoffs should be a sequence of unique, positive integers sorted "
                 "in an increasing order, where each value is between 1 and n_classes-1"):
        nn.AdaptiveLogSoftmaxWithLoss(6, 9, [5, 2])
    with _raises(RuntimeError, "Target values should be in [0, 8], but values in range [0, 9] "
                 "were found. "):
        m(x, gpugrad.tensor([0, 3, 9, 1, 5]))
    with _raises(RuntimeError, "0D or 1D target tensor expected, multi-target not supported"):
        m(x, gpugrad.zeros(5, 1, dtype=gpugrad.int64))


def test_adaptive_log_softmax_matches_torch():
    torch = pytest.importorskip("torch")
    a = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    b = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True,
                                      dtype=gpugrad.float64)
    assert repr(a) == repr(b)
    with gpugrad.no_grad():
        for (n1, p1), (n2, p2) in zip(a.named_parameters(), b.named_parameters()):
            assert n1 == n2
            p2.copy_(gpugrad.tensor(p1.detach().numpy()))
    x = np.random.default_rng(10).standard_normal((6, 8))
    t = np.array([0, 4, 9, 2, 7, 5])
    xt, xg = torch.tensor(x, requires_grad=True), gpugrad.tensor(x, requires_grad=True)
    ot, og = a(xt, torch.tensor(t)), b(xg, gpugrad.tensor(t))
    np.testing.assert_allclose(to_numpy(og.output), ot.output.detach().numpy(), rtol=1e-12)
    ot.loss.backward()
    og.loss.backward()
    np.testing.assert_allclose(to_numpy(xg.grad), xt.grad.numpy(), rtol=1e-10)
    for p1, p2 in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(to_numpy(p2.grad), p1.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(to_numpy(b.log_prob(xg)), a.log_prob(xt).detach().numpy(),
                               rtol=1e-12)
    assert to_numpy(b.predict(xg)).tolist() == a.predict(xt).tolist()
    o1 = b(xg[1], gpugrad.tensor(4))
    assert o1.output.shape == () and o1.output.item() == pytest.approx(og.output[1].item())
