"""nn.init: every initialiser's law and shape rules, trunc_normal_, fan computation, and the
parameter-vector helpers."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
from gpugrad.nn import init
from tests.nn._errors import _raises
from tests.nn._tensors import arr


def test_init_functions():
    init = nn.init
    gpugrad.manual_seed(0)
    w = nn.Parameter(gpugrad.empty(200, 300))
    init.xavier_uniform_(w)
    a = math.sqrt(6 / 500)
    assert np.abs(arr(w)).max() <= a and np.abs(arr(w)).max() > 0.95 * a
    init.xavier_normal_(w)
    assert abs(arr(w).std() - math.sqrt(2 / 500)) < 0.05 * math.sqrt(2 / 500)
    init.kaiming_uniform_(w, nonlinearity="relu")
    b = math.sqrt(2) * math.sqrt(3 / 300)
    assert np.abs(arr(w)).max() <= b and np.abs(arr(w)).max() > 0.95 * b
    init.kaiming_normal_(w, mode="fan_out")
    assert abs(arr(w).std() - math.sqrt(2 / 1 / (1 + 0.0 ** 2)) / math.sqrt(200)) < 0.005
    assert w.grad_fn is None and w.requires_grad   # filled in place, still a leaf
    init.zeros_(w)
    assert not arr(w).any()
    init.ones_(w)
    assert (arr(w) == 1).all()
    init.constant_(w, 0.5)
    assert (arr(w) == 0.5).all()
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(gpugrad.empty(3))


def test_more_init_and_parameter_vector_helpers():
    gpugrad.manual_seed(0)
    w = gpugrad.empty(20, 30)
    nn.init.orthogonal_(w, gain=2.0)
    q = w.numpy()
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(20), atol=1e-4)
    t = gpugrad.empty(20000, dtype=gpugrad.float64)
    nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    a = t.numpy()
    assert a.min() >= -1.0 and a.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1, 1.5]: 0.5 + (pdf(-1.5) - pdf(1)) / (cdf(1) - cdf(-1.5))
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)   # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))   # noqa: E731
    assert abs(a.mean() - (0.5 + (pdf(-1.5) - pdf(1.0)) / (cdf(1.0) - cdf(-1.5)))) < 0.02
    e = gpugrad.empty(2, 3)
    assert nn.init.eye_(e).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,) and v.grad_fn.name() == "CatBackward0"
    nn.utils.vector_to_parameters(gpugrad.arange(8.0), m.parameters())
    assert m.weight.detach().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m.bias.detach().tolist() == [6.0, 7.0]


def test_trunc_normal_fills_the_whole_range(device):
    """N(0, 1) cut at [-2, 2]: std sqrt(1 - 4 phi(2) / (Phi(2) - Phi(-2))) = 0.87962, and the
    tails reach the bounds (the old inverse-erf start stopped near +-1.92)."""
    gen = gpugrad.Generator().manual_seed(0)
    w = gpugrad.empty(200_000, device=device)
    out = init.trunc_normal_(w, generator=gen)
    assert out is w and not w.requires_grad
    x = to_numpy(w).astype(np.float64)
    assert x.min() >= -2.0 and x.max() <= 2.0
    assert x.min() < -1.99 and x.max() > 1.99
    assert abs(x.std() - 0.87962) < 0.005 and abs(x.mean()) < 0.01


def test_trunc_normal_shifted_bounds_and_leaf():
    w = gpugrad.empty(100_000, requires_grad=True)
    init.trunc_normal_(w, mean=1.0, std=2.0, a=0.5, b=1.5)
    x = to_numpy(w)
    assert w.is_leaf and w.grad_fn is None
    assert x.min() >= 0.5 and x.max() <= 1.5 and x.min() < 0.51 and x.max() > 1.49
    # a narrow window around the mean is nearly uniform: std (b - a) / sqrt(12) shrunk a little
    assert 0.28 < x.std() < 0.2887


def test_calculate_correct_fan():
    w = gpugrad.empty(5, 3, 2)
    assert init._calculate_correct_fan(w, "fan_in") == 6
    assert init._calculate_correct_fan(w, "fan_out") == 10
    with _raises(ValueError, "Mode foo not supported, please use one of ['fan_in', 'fan_out']"):
        init._calculate_correct_fan(w, "foo")
