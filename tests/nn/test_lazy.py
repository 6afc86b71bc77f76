"""Lazy modules: LazyLinear, lazy convolutions, lazy batch and instance norms materialise on
their first call or on load_state_dict."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn


def test_lazy_linear_materialises_on_first_call(device):
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert isinstance(m.weight, nn.UninitializedParameter)
    assert repr(m.weight) == "<UninitializedParameter>"
    assert list(m.state_dict()) == ["weight", "bias"]
    with pytest.raises(RuntimeError, match=r"^Can't access the shape of an uninitialized "
                                           r"parameter or buffer\."):
        m.weight.shape
    y = m(gpugrad.ones(2, 5))
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert tuple(m.weight.shape) == (3, 5) and type(m.weight) is nn.Parameter
    bound = 1 / np.sqrt(5)
    assert np.all(np.abs(to_numpy(m.weight)) <= bound) and np.std(to_numpy(m.weight)) > 0
    np.testing.assert_allclose(to_numpy(y)[1], to_numpy(m.weight).sum(1) + to_numpy(m.bias),
                               rtol=1e-6)


@pytest.mark.parametrize("name, x_shape, w_shape", [
    ("LazyConv1d", (2, 6, 5), (4, 3, 3)),
    ("LazyConv2d", (6, 5, 5), (4, 3, 3, 3)),
    ("LazyConv3d", (1, 6, 4, 4, 4), (4, 3, 3, 3, 3)),
    ("LazyConvTranspose1d", (2, 6, 5), (6, 2, 3)),
    ("LazyConvTranspose2d", (1, 6, 3, 3), (6, 2, 3, 3)),
    ("LazyConvTranspose3d", (6, 2, 2, 2), (6, 2, 3, 3, 3)),
])
def test_lazy_convolutions(name, x_shape, w_shape):
    m = getattr(nn, name)(4, 3, groups=2)
    assert repr(m).startswith(f"{name}(0, 4, kernel_size=")
    m(gpugrad.zeros(*x_shape))
    assert type(m).__name__ == name[4:] and tuple(m.weight.shape) == w_shape
    assert m.in_channels == 6 and tuple(m.bias.shape) == (4,)


@pytest.mark.parametrize("dims, x_shape", [(1, (4, 3)), (2, (2, 3, 2, 2)), (3, (2, 3, 1, 2, 2))])
def test_lazy_batch_norm(dims, x_shape, rng):
    m = getattr(nn, f"LazyBatchNorm{dims}d")()
    assert repr(m) == (f"LazyBatchNorm{dims}d(0, eps=1e-05, momentum=0.1, affine=True, "
                       "bias=True, track_running_stats=True)")
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert isinstance(m.running_mean, nn.UninitializedBuffer)
    x = rng.standard_normal(x_shape)
    y = m(gpugrad.tensor(x))
    assert type(m).__name__ == f"BatchNorm{dims}d" and m.num_features == 3
    axes = (0,) + tuple(range(2, x.ndim))
    np.testing.assert_allclose(to_numpy(m.running_mean), 0.1 * x.mean(axes), rtol=1e-5)
    np.testing.assert_allclose(to_numpy(m.weight), np.ones(3))
    assert tuple(y.shape) == x_shape


def test_lazy_load_state_dict_materialises():
    src = nn.Linear(5, 3)
    m = nn.LazyLinear(3)
    m.load_state_dict(src.state_dict())
    assert type(m) is nn.LazyLinear and tuple(m.weight.shape) == (3, 5)
    np.testing.assert_array_equal(to_numpy(m.weight), to_numpy(src.weight))
    m(gpugrad.zeros(1, 5))
    assert type(m) is nn.Linear and m.in_features == 5
    np.testing.assert_array_equal(to_numpy(m.weight), to_numpy(src.weight))


@pytest.mark.parametrize("lazy,plain,shape", [
    (nn.LazyInstanceNorm1d, nn.InstanceNorm1d, (2, 3, 5)),
    (nn.LazyInstanceNorm2d, nn.InstanceNorm2d, (2, 3, 4, 5)),
    (nn.LazyInstanceNorm3d, nn.InstanceNorm3d, (2, 3, 2, 4, 3))])
def test_lazy_instance_norm_becomes_instance_norm(device, rng, lazy, plain, shape):
    x = rng.normal(size=shape) * 2 + 1
    m = lazy(affine=True, track_running_stats=True, device=device)
    assert m.has_uninitialized_params()
    y = m(tensor(x, device))
    assert type(m) is plain and m.num_features == 3
    assert m.weight.shape == (3,) and m.running_mean.shape == (3,)
    axes = tuple(range(2, len(shape)))
    want = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    np.testing.assert_allclose(to_numpy(y), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(to_numpy(m.running_mean), 0.1 * x.mean(axes).mean(0), rtol=1e-6)


def test_lazy_instance_norm_defaults_unbatched_and_state_dict(device, rng):
    m = nn.LazyInstanceNorm2d()
    assert m.weight is None and m.running_mean is None and not m.has_uninitialized_params()
    m = nn.LazyInstanceNorm2d(affine=True).to(device)
    x = rng.normal(size=(4, 3, 5))     # unbatched (C, H, W): C = 4
    y = m(tensor(x, device))
    assert type(m) is nn.InstanceNorm2d and m.num_features == 4 and m.weight.shape == (4,)
    assert y.shape == (4, 3, 5)
    src = nn.InstanceNorm1d(6, affine=True, track_running_stats=True)
    lazy = nn.LazyInstanceNorm1d(affine=True, track_running_stats=True)
    lazy.load_state_dict(src.state_dict())
    assert lazy.weight.shape == (6,) and lazy.running_var.shape == (6,)
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.LazyInstanceNorm1d(affine=True).to(device)(tensor(np.zeros((1, 2, 3, 4)), device))


def test_lazy_instance_norm_against_torch(rng):
    torch = pytest.importorskip("torch")
    x = rng.normal(size=(2, 3, 4, 5))
    t = torch.nn.LazyInstanceNorm2d(affine=True).double()
    g = nn.LazyInstanceNorm2d(affine=True)
    np.testing.assert_allclose(to_numpy(g(tensor(x))), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    assert type(t).__name__ == type(g).__name__ == "InstanceNorm2d"
