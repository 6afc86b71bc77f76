"""FractionalMaxPool3d / F.fractional_max_pool3d against a numpy reference given the samples,
and LazyInstanceNorm1d/2d/3d."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.autograd import gradcheck, gradgradcheck

F = nn.functional


def _starts(u, n, o, k):
    """int((i + u) a) - int(u a), a = (n - k) / (o - 1); the last window ends at n"""
    if o == 1:
        return [n - k]
    a = (n - k) / (o - 1)
    return [int((i + u) * a) - int(u * a) for i in range(o - 1)] + [n - k]


def _frac3_ref(x, u, k, out):
    """values and flat (t H + h) W + w indices of the first maximum of each window"""
    n, c, d, h, w = x.shape
    y, idx = np.empty((n, c) + out), np.empty((n, c) + out, dtype=np.int64)
    for b in range(n):
        for ch in range(c):
            ts, hs, ws = (_starts(u[b, ch, a], x.shape[2 + a], out[a], k[a]) for a in range(3))
            for i, t0 in enumerate(ts):
                for j, h0 in enumerate(hs):
                    for m, w0 in enumerate(ws):
                        win = x[b, ch, t0:t0 + k[0], h0:h0 + k[1], w0:w0 + k[2]]
                        t, hh, ww = np.unravel_index(win.argmax(), win.shape)
                        y[b, ch, i, j, m] = win[t, hh, ww]
                        idx[b, ch, i, j, m] = ((t0 + t) * h + h0 + hh) * w + w0 + ww
    return y, idx


@pytest.mark.parametrize("k,out", [((2, 3, 2), (3, 4, 5)), (2, (1, 2, 6)), ((1, 1, 1), (6, 7, 8))])
def test_fractional_max_pool3d_values_and_indices(device, rng, k, out):
    x = rng.normal(size=(2, 3, 7, 8, 9))
    u = rng.uniform(size=(2, 3, 3))
    y, idx = F.fractional_max_pool3d(tensor(x, device), k, out, return_indices=True,
                                     _random_samples=tensor(u, device))
    ky = (k,) * 3 if isinstance(k, int) else k
    want_y, want_idx = _frac3_ref(x, u, ky, out)
    np.testing.assert_array_equal(to_numpy(y), want_y)
    np.testing.assert_array_equal(to_numpy(idx), want_idx)
    assert idx.dtype == gpugrad.int64 and not idx.requires_grad


def test_fractional_max_pool3d_unbatched_ratio_and_module(device, rng):
    x = rng.normal(size=(2, 6, 7, 8))
    u = rng.uniform(size=(1, 2, 3))
    y, idx = F.fractional_max_pool3d_with_indices(tensor(x, device), 2,
                                                  output_ratio=(0.5, 0.6, 0.5),
                                                  _random_samples=tensor(u, device))
    want_y, want_idx = _frac3_ref(x[None], u, (2, 2, 2), (3, 4, 4))
    np.testing.assert_array_equal(to_numpy(y), want_y[0])
    np.testing.assert_array_equal(to_numpy(idx), want_idx[0])
    m = nn.FractionalMaxPool3d(2, output_ratio=0.5, return_indices=True,
                               _random_samples=tensor(u, device))
    my, midx = m(tensor(x, device))
    want_y, want_idx = _frac3_ref(x[None], u, (2, 2, 2), (3, 3, 4))
    np.testing.assert_array_equal(to_numpy(my), want_y[0])
    np.testing.assert_array_equal(to_numpy(midx), want_idx[0])
    assert not isinstance(m, nn.FractionalMaxPool2d)
    gpugrad.manual_seed(0)   # no samples given: fresh ones, the right output shape
    assert nn.FractionalMaxPool3d((2, 1, 3), output_size=(2, 3, 4))(
        tensor(rng.normal(size=(2, 3, 5, 6, 7)), device)).shape == (2, 3, 2, 3, 4)


def test_fractional_max_pool3d_gradient_goes_to_the_argmax(device, rng):
    x = rng.normal(size=(1, 2, 5, 6, 7))
    u = rng.uniform(size=(1, 2, 3))
    xt = tensor(x, device, requires_grad=True)
    y, idx = F.fractional_max_pool3d(xt, 2, (3, 4, 5), return_indices=True,
                                     _random_samples=tensor(u, device))
    gy = rng.normal(size=y.shape)
    y.backward(tensor(gy, device))
    want = np.zeros((2, 5 * 6 * 7))
    for c in range(2):
        np.add.at(want[c], to_numpy(idx)[0, c].ravel(), gy[0, c].ravel())
    np.testing.assert_allclose(to_numpy(xt.grad), want.reshape(x.shape), rtol=1e-12)
    assert y.grad_fn.name() == "FractionalMaxPool3DBackward0"


def test_fractional_max_pool3d_gradcheck(device, rng):
    x = tensor(rng.normal(size=(4, 5, 6)) + np.arange(120).reshape(4, 5, 6) * 0.05,
               device, requires_grad=True)[None]
    u = tensor(rng.uniform(size=(1, 1, 3)), device)

    def f(v):
        return F.fractional_max_pool3d(v, (2, 2, 3), (2, 3, 3), _random_samples=u)

    assert gradcheck(f, (x,), eps=1e-6, atol=1e-6)
    assert gradgradcheck(f, (x,), eps=1e-6, atol=1e-6)


def test_fractional_max_pool3d_messages(device):
    x = tensor(np.zeros((1, 1, 4, 5, 6)), device)
    with pytest.raises(ValueError, match="fractional_max_pool3d requires specifying either an "
                                         "output_size or an output_ratio"):
        F.fractional_max_pool3d(x, 2)
    with pytest.raises(RuntimeError, match=r"Expected 4D or 5D tensor, but got: \[2, 3, 4\]"):
        F.fractional_max_pool3d(tensor(np.zeros((2, 3, 4)), device), 2, 1)
    # time, then width, then height, each strictly: o + k - 1 < n
    for out, what in (((3, 1, 1), "time 2 too large relative to input time 4"),
                      ((2, 4, 5), "width 2 too large relative to input width 6"),
                      ((2, 4, 4), "height 2 too large relative to input height 5")):
        with pytest.raises(RuntimeError, match=f"fractional_max_pool3d_out\\(\\): pool {what}"):
            F.fractional_max_pool3d(x, 2, out)
    assert F.fractional_max_pool3d(x, 2, (2, 3, 4)).shape == (1, 1, 2, 3, 4)
    with pytest.raises(ValueError, match="FractionalMaxPool3d requires specifying either an "
                                         "output size, or a pooling ratio"):
        nn.FractionalMaxPool3d(2)
    with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
        nn.FractionalMaxPool3d(2, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio"):
        nn.FractionalMaxPool3d(2, output_size=2, output_ratio=0.5)


def test_fractional_max_pool3d_against_torch(rng):
    torch = pytest.importorskip("torch")
    x, u = rng.normal(size=(2, 3, 7, 8, 9)), rng.uniform(size=(2, 3, 3))
    ty, tidx = torch.nn.functional.fractional_max_pool3d(
        torch.tensor(x), (2, 3, 2), output_size=(3, 4, 5), return_indices=True,
        _random_samples=torch.tensor(u))
    gy, gidx = F.fractional_max_pool3d(tensor(x), (2, 3, 2), output_size=(3, 4, 5),
                                       return_indices=True, _random_samples=tensor(u))
    np.testing.assert_array_equal(to_numpy(gy), ty.numpy())
    np.testing.assert_array_equal(to_numpy(gidx), tidx.numpy())


# -- LazyInstanceNorm ---------------------------------------------------------------------------
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
