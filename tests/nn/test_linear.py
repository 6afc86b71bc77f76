"""Linear layers: nn.Linear (values, init bounds, graph, ranks, gradients) and nn.Bilinear."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._tensors import arr, f64


def test_linear_forward_matches_numpy(rng):
    m = nn.Linear(5, 3)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = m(gpugrad.tensor(x))
    np.testing.assert_allclose(arr(y), x @ arr(m.weight).T + arr(m.bias), rtol=1e-6, atol=1e-6)
    assert y.shape == (4, 3) and y.dtype == gpugrad.float32


def test_linear_default_init_bounds():
    m = nn.Linear(16, 8)
    bound = 1 / math.sqrt(16)
    assert m.weight.shape == (8, 16) and m.bias.shape == (8,)
    assert np.abs(arr(m.weight)).max() <= bound and np.abs(arr(m.bias)).max() <= bound
    assert np.abs(arr(m.weight)).max() > bound / 2   # filled, not left at zero


def test_linear_graph_is_addmm_like_pytorch():
    m = nn.Linear(2, 3)
    x = gpugrad.randn(4, 2, requires_grad=True)
    y = m(x)
    fn = y.grad_fn
    assert fn.name() == "AddmmBackward0"
    (bias_acc, _), (x_acc, _), (t_node, _) = fn.next_functions
    assert bias_acc.name() == "torch::autograd::AccumulateGrad" and bias_acc.variable is m.bias
    assert x_acc.variable is x
    assert t_node.name() == "TBackward0"
    assert t_node.next_functions[0][0].variable is m.weight
    assert m(gpugrad.randn(4, 2)).grad_fn.next_functions[1] == (None, 0)


def test_linear_without_bias_and_other_ranks():
    m = nn.Linear(3, 2, bias=False)
    assert m.bias is None and [n for n, _ in m.named_parameters()] == ["weight"]
    assert m(gpugrad.randn(3)).shape == (2,)
    assert nn.Linear(3, 2)(gpugrad.randn(5, 4, 3)).shape == (5, 4, 2)
    assert repr(m) == "Linear(in_features=3, out_features=2, bias=False)"


def test_linear_backward_matches_numpy(rng):
    m = nn.Linear(3, 2).double()
    x = rng.standard_normal((5, 3))
    m(f64(x)).sum().backward()
    np.testing.assert_allclose(arr(m.weight.grad), np.ones((5, 2)).T @ x)
    np.testing.assert_allclose(arr(m.bias.grad), [5.0, 5.0])


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
