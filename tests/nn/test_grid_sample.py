"""F.affine_grid and F.grid_sample (bilinear, nearest, bicubic, 2-D and 3-D): values against numpy
loops, gradients, messages and agreement with PyTorch."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._exact_errors import _raises
from tests.nn._gradients import _check_grads
from tests.nn._tensors import T


def grid_sample_ref(x, grid, padding_mode, align_corners):
    """Bilinear sampling of (N, C, H, W), one output pixel and corner at a time."""
    n, c, h, w = x.shape

    def source(v, size):
        s = (v + 1) / 2 * (size - 1) if align_corners else ((v + 1) * size - 1) / 2
        if padding_mode == "reflection":
            lo, hi = (0, size - 1) if align_corners else (-0.5, size - 0.5)
            while s < lo or s > hi:
                s = 2 * lo - s if s < lo else 2 * hi - s
        if padding_mode in ("border", "reflection"):
            s = min(max(s, 0), size - 1)
        return s

    y = np.zeros((n, c) + grid.shape[1:3])
    for b, i, j in np.ndindex(n, *grid.shape[1:3]):
        sx, sy = source(grid[b, i, j, 0], w), source(grid[b, i, j, 1], h)
        x0, y0 = int(np.floor(sx)), int(np.floor(sy))
        for dy, dx in np.ndindex(2, 2):
            if 0 <= x0 + dx < w and 0 <= y0 + dy < h:
                y[b, :, i, j] += ((1 - abs(sx - x0 - dx)) * (1 - abs(sy - y0 - dy))
                                  * x[b, :, y0 + dy, x0 + dx])
    return y


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners, device, rng):
    theta = rng.standard_normal((2, 2, 3))
    g = F.affine_grid(T(theta, device, True), (2, 1, 3, 4), align_corners=align_corners)
    for i, j in np.ndindex(3, 4):
        if align_corners:
            px, py = -1 + 2 * j / 3, -1 + 2 * i / 2
        else:
            px, py = (2 * j + 1) / 4 - 1, (2 * i + 1) / 3 - 1
        np.testing.assert_allclose(to_numpy(g)[:, i, j], theta @ [px, py, 1.0], rtol=1e-12)
    assert g.grad_fn.name() == "AffineGridGeneratorBackward0"
    theta3 = T(rng.standard_normal((1, 3, 4)), device, True)
    assert tuple(F.affine_grid(theta3, (1, 2, 2, 3, 4), align_corners).shape) == (1, 2, 3, 4, 3)
    _check_grads(lambda t: F.affine_grid(t, (1, 1, 2, 3, 2), align_corners), (theta3,))


def test_affine_grid_messages(device):
    theta = T(np.zeros((1, 2, 3)), device)
    with pytest.raises(ValueError, match=r"^Expected a batch of 2D affine matrices of shape "
                                         r"Nx2x3 for size \(1, 2, 4, 4\)\. Got "):
        F.affine_grid(T(np.zeros((1, 3, 4)), device), (1, 2, 4, 4), False)
    with pytest.raises(NotImplementedError, match=r"^affine_grid only supports 4D and 5D sizes"):
        F.affine_grid(theta, (1, 2, 4), False)
    with pytest.warns(UserWarning, match="^Default grid_sample and affine_grid behavior"):
        F.affine_grid(theta, (1, 2, 4, 4))


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bilinear(padding_mode, align_corners, device, rng):
    x = rng.standard_normal((2, 2, 3, 4))
    grid = rng.uniform(-1.6, 1.6, (2, 3, 2, 2))
    kw = dict(padding_mode=padding_mode, align_corners=align_corners)
    y = F.grid_sample(T(x, device, True), T(grid, device), **kw)
    assert y.grad_fn.name() == "GridSampler2DBackward0"
    np.testing.assert_allclose(to_numpy(y), grid_sample_ref(x, grid, padding_mode, align_corners),
                               rtol=1e-10, atol=1e-12)
    _check_grads(lambda x, g: F.grid_sample(x, g, **kw), (T(x, device, True),
                                                          T(grid, device, True)))


def test_grid_sample_nearest_and_3d(device, rng):
    x = rng.standard_normal((1, 2, 3, 4))
    # pixel centres (align_corners=False) of row 1, columns 0 and 3, nudged
    grid = np.array([[[[-0.7, 0.05], [0.8, -0.02]]]])
    y = F.grid_sample(T(x, device), T(grid, device), mode="nearest", align_corners=False)
    np.testing.assert_array_equal(to_numpy(y)[0, :, 0], x[0, :, 1, [0, 3]].T)
    xs = T(x, device, True)
    _check_grads(lambda x, g: F.grid_sample(x, g, mode="nearest", align_corners=False),
                 (xs, T(grid, device, True)))
    x3 = T(rng.standard_normal((1, 2, 2, 3, 2)), device, True)
    g3 = T(rng.uniform(-1.2, 1.2, (1, 2, 1, 2, 3)), device, True)
    y3 = F.grid_sample(x3, g3, padding_mode="border", align_corners=True)
    assert y3.grad_fn.name() == "GridSampler3DBackward0" and tuple(y3.shape) == (1, 2, 2, 1, 2)
    _check_grads(lambda x, g: F.grid_sample(x, g, padding_mode="reflection",
                                            align_corners=False), (x3, g3))


def test_grid_sample_messages(device):
    x, g = T(np.zeros((1, 2, 4, 4)), device), T(np.zeros((1, 3, 3, 2)), device)
    with pytest.raises(ValueError, match=r"^nn\.functional\.grid_sample\(\): expected mode to be "
                                         r"'bilinear', 'nearest' or 'bicubic', but got: 'foo'$"):
        F.grid_sample(x, g, mode="foo")
    with pytest.raises(RuntimeError, match=r"^grid_sampler\(\): expected grid to have size 3 in "
                                           r"last dimension, but got grid with sizes "):
        F.grid_sample(T(np.zeros((1, 2, 4, 4, 4)), device), g, align_corners=False)
    with pytest.raises(RuntimeError, match=r"^grid_sampler\(\): expected grid and input to have "
                                           r"same batch size"):
        F.grid_sample(T(np.zeros((2, 2, 4, 4)), device), g, align_corners=False)


def test_grid_sample_bicubic_identity_and_gradients(device):
    rng = np.random.default_rng(6)
    x = tensor(rng.standard_normal((1, 2, 3, 4)), device, requires_grad=True)
    theta = tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], device)
    grid = F.affine_grid(theta, (1, 2, 3, 4), align_corners=False)
    y = F.grid_sample(x, grid, mode="bicubic", align_corners=False)
    np.testing.assert_allclose(to_numpy(y), to_numpy(x), rtol=1e-12, atol=1e-14)
    g = tensor(rng.uniform(-1.2, 1.2, (1, 2, 3, 2)), device, requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        def f(a, b, pm=pm):
            return F.grid_sample(a, b, mode="bicubic", padding_mode=pm,
                                 align_corners=pm == "border")
        assert gradcheck(f, [x, g])
        assert gradgradcheck(f, [x, g])
    with _raises(RuntimeError, "grid_sampler(): bicubic interpolation only supports 4D input"):
        F.grid_sample(gpugrad.zeros(1, 1, 2, 2, 2), gpugrad.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)


def test_grid_sample_bicubic_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for pm, ac in itertools.product(("zeros", "border", "reflection"), (False, True)):
        x, g = rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.3, 1.3, (2, 6, 7, 2))
        xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
        xg, gg = gpugrad.tensor(x, requires_grad=True), gpugrad.tensor(g, requires_grad=True)
        kw = dict(mode="bicubic", padding_mode=pm, align_corners=ac)
        yt, yg = torch.nn.functional.grid_sample(xt, gt, **kw), F.grid_sample(xg, gg, **kw)
        w = rng.standard_normal(tuple(yt.shape))
        yt.backward(torch.tensor(w))
        yg.backward(gpugrad.tensor(w))
        for a, b in ((yg, yt), (xg.grad, xt.grad), (gg.grad, gt.grad)):
            np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)
