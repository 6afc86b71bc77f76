"""Instance normalisation: values against numpy, running statistics, modules, errors and reprs."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck


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
