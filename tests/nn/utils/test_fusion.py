"""nn.utils.fusion: fusing batch norm into convolutions and linear layers."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn


def _trained_bn(bn, rng, device):
    with gpugrad.no_grad():
        bn.running_mean.copy_(tensor(rng.standard_normal(bn.num_features), device))
        bn.running_var.copy_(tensor(rng.uniform(0.5, 2, bn.num_features), device))
        bn.weight.copy_(tensor(rng.standard_normal(bn.num_features), device))
        bn.bias.copy_(tensor(rng.standard_normal(bn.num_features), device))
    return bn.eval()


def test_fuse_conv_bn_and_linear_bn_match_eval_mode(device, rng):
    conv = nn.Conv2d(2, 3, 3, bias=False).double().to(device).eval()
    bn = _trained_bn(nn.BatchNorm2d(3).double().to(device), rng, device)
    x = tensor(rng.standard_normal((2, 2, 5, 5)), device)
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    np.testing.assert_allclose(to_numpy(fused(x)), to_numpy(bn(conv(x))), atol=1e-12)
    assert conv.bias is None and isinstance(fused.bias, nn.Parameter)
    lin = nn.Linear(4, 3).double().to(device).eval()
    bn1 = _trained_bn(nn.BatchNorm1d(3).double().to(device), rng, device)
    x = tensor(rng.standard_normal((5, 4)), device)
    np.testing.assert_allclose(to_numpy(nn.utils.fuse_linear_bn_eval(lin, bn1)(x)),
                               to_numpy(bn1(lin(x))), atol=1e-12)
    with pytest.raises(AssertionError, match="^Fusion only for eval!$"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)
