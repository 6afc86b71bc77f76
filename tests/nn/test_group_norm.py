"""Group normalisation: values against numpy, errors and gradcheck."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck

f64 = gpugrad.float64


def test_group_norm_matches_numpy(device, rng):
    x = rng.standard_normal((2, 6, 3, 2))
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    g = x.reshape(2, 3, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    want = want.reshape(x.shape) * w[:, None, None] + b[:, None, None]
    out = F.group_norm(tensor(x, device), 3, tensor(w, device), tensor(b, device))
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-12, atol=1e-12)
    m = nn.GroupNorm(3, 6, dtype=f64).to(device)
    assert np.all(to_numpy(m.weight) == 1) and np.all(to_numpy(m.bias) == 0)
    with gpugrad.no_grad():
        m.weight.copy_(tensor(w, device))
        m.bias.copy_(tensor(b, device))
    np.testing.assert_allclose(to_numpy(m(tensor(x, device))), want, rtol=1e-12, atol=1e-12)
    assert repr(m) == "GroupNorm(3, 6, eps=1e-05, affine=True, bias=True)"
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []


def test_group_norm_errors_and_gradcheck(rng):
    with pytest.raises(ValueError, match=r"num_channels \(6\) must be divisible by num_groups"):
        nn.GroupNorm(4, 6)
    with pytest.raises(RuntimeError, match="Expected number of channels in input to be divisible"):
        F.group_norm(gpugrad.randn(2, 6, 3), 4)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor"):
        F.group_norm(gpugrad.randn(6), 3)
    with pytest.raises(RuntimeError, match=r"weight of shape \[5\] and input of shape \[2, 6\]"):
        F.group_norm(gpugrad.randn(2, 6), 3, gpugrad.ones(5))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        F.group_norm(gpugrad.randn(1, 2), 2)
    x = tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
    w, b = (tensor(rng.standard_normal(4), requires_grad=True) for _ in range(2))
    assert gradcheck(lambda x, w, b: F.group_norm(x, 2, w, b), (x, w, b))
