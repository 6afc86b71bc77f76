"""F.interpolate and nn.Upsample: nearest, linear, bicubic, trilinear, antialiased and area
modes, output shapes, gradients, errors and agreement with PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._errors import raises
from tests.nn._exact_errors import _raises
from tests.nn._parity import _oracle
from tests.nn._tensors import T


def test_interpolate_nearest_values(device):
    x = T([[[0.0, 1.0, 2.0]]], device)
    assert F.interpolate(x, scale_factor=2).tolist() == [[[0, 0, 1, 1, 2, 2]]]
    assert F.interpolate(x, size=5).tolist() == [[[0, 0, 1, 1, 2]]]   # floor(i 3 / 5)
    assert F.interpolate(x, size=5, mode="nearest-exact").tolist() == [[[0, 0, 1, 2, 2]]]
    assert F.interpolate(x, size=2).tolist() == [[[0, 1]]]
    # the scale factor, not the sizes, sets the source step (1 / 2.3), as PyTorch's 1-D kernel
    assert F.interpolate(x, scale_factor=2.3).tolist() == [[[0, 0, 0, 1, 1, 2]]]
    assert F.interpolate(x, scale_factor=2.3, recompute_scale_factor=True).tolist() == \
        [[[0, 0, 1, 1, 2, 2]]]
    img = T(np.arange(6.0).reshape(1, 1, 2, 3), device)
    y = F.interpolate(img, scale_factor=(1.5, 1))
    assert y.grad_fn is None and y.tolist() == [[[[0, 1, 2], [0, 1, 2], [3, 4, 5]]]]
    x = T([[[0.0, 1.0, 2.0]]], device, True)
    y = F.interpolate(x, size=5)
    assert y.grad_fn.name() == "UpsampleNearest1DBackward0"
    y.backward(T([[[1.0, 2.0, 3.0, 4.0, 5.0]]], device))
    assert x.grad.tolist() == [[[3.0, 7.0, 5.0]]]
    ints = gpugrad.tensor([[[1, 2]]], device=device)
    assert F.interpolate(ints, scale_factor=2).tolist() == [[[1, 1, 2, 2]]]


def test_interpolate_linear_values(device):
    x = T([[[0.0, 10.0, 20.0]]], device, True)
    # half-pixel centres: source (i + 0.5) 3 / 5 - 0.5, clamped at 0
    y = F.interpolate(x, size=5, mode="linear")
    np.testing.assert_allclose(to_numpy(y), [[[0.0, 4.0, 10.0, 16.0, 20.0]]], rtol=1e-14)
    assert y.grad_fn.name() == "UpsampleLinear1DBackward0"
    y.backward(T([[[1.0, 1.0, 1.0, 1.0, 1.0]]], device))
    np.testing.assert_allclose(to_numpy(x.grad), [[[1.6, 1.8, 1.6]]], rtol=1e-14)
    y = F.interpolate(x, size=5, mode="linear", align_corners=True)
    np.testing.assert_allclose(to_numpy(y), [[[0.0, 5.0, 10.0, 15.0, 20.0]]], rtol=1e-14)
    np.testing.assert_allclose(to_numpy(F.interpolate(x, scale_factor=2, mode="linear")),
                               [[[0.0, 2.5, 7.5, 12.5, 17.5, 20.0]]], rtol=1e-14)
    img = T([[[[0.0, 1.0], [2.0, 3.0]]]], device)
    y = F.interpolate(img, size=(3, 3), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(to_numpy(y), [[[[0, 0.5, 1], [1, 1.5, 2], [2, 2.5, 3]]]],
                               rtol=1e-14)
    y = F.interpolate(img, scale_factor=2, mode="bilinear")
    np.testing.assert_allclose(to_numpy(y)[0, 0, 1], [0.5, 0.75, 1.25, 1.5], rtol=1e-14)
    assert y.grad_fn is None
    v = T(np.arange(12.0).reshape(1, 1, 3, 4), device, True)
    y = F.interpolate(v, size=(5, 2), mode="bilinear")
    assert y.grad_fn.name() == "UpsampleBilinear2DBackward0"
    # every output's weights sum to 1, so the gradient of sum(y) has total 10 (outputs); the
    # gradient of sum(y^2) is 2 A^T A v, whose own gradient (of its sum) is 2 A^T A 1 = 2 A^T 1
    g1, = gpugrad.autograd.grad(y.sum(), v, retain_graph=True)
    np.testing.assert_allclose(to_numpy(g1).sum(), 10.0, rtol=1e-14)
    g, = gpugrad.autograd.grad((y ** 2).sum(), v, create_graph=True)
    gg, = gpugrad.autograd.grad(g.sum(), v)
    np.testing.assert_allclose(to_numpy(gg), 2 * to_numpy(g1), rtol=1e-13)


def test_interpolate_output_shapes_and_modules(device):
    x1, x2 = gpugrad.zeros(2, 3, 5, device=device), gpugrad.zeros(2, 3, 5, 4, device=device)
    for kw, shape in ((dict(scale_factor=2), (2, 3, 10)), (dict(size=3), (2, 3, 3)),
                      (dict(scale_factor=0.5), (2, 3, 2)), (dict(size=(7,)), (2, 3, 7)),
                      (dict(scale_factor=1.5, mode="linear"), (2, 3, 7)),
                      (dict(size=4, mode="linear", align_corners=True), (2, 3, 4)),
                      (dict(size=6, mode="nearest-exact"), (2, 3, 6)),
                      (dict(size=2, mode="area"), (2, 3, 2))):
        assert F.interpolate(x1, **kw).shape == shape, kw
    for kw, shape in ((dict(scale_factor=2), (2, 3, 10, 8)), (dict(size=3), (2, 3, 3, 3)),
                      (dict(scale_factor=(1.5, 0.5)), (2, 3, 7, 2)),
                      (dict(size=(2, 9), mode="bilinear"), (2, 3, 2, 9)),
                      (dict(scale_factor=3, mode="bilinear", align_corners=True), (2, 3, 15, 12)),
                      (dict(size=(2, 2), mode="area"), (2, 3, 2, 2))):
        assert F.interpolate(x2, **kw).shape == shape, kw
    up = nn.Upsample(scale_factor=2)
    assert repr(up) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert up(x2).shape == (2, 3, 10, 8)
    up = nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True)
    assert repr(up) == "Upsample(size=(3, 4), mode='bilinear')" and up(x2).shape == (2, 3, 3, 4)
    assert repr(nn.UpsamplingNearest2d(scale_factor=2)) == \
        "UpsamplingNearest2d(scale_factor=2.0, mode='nearest')"
    bil = nn.UpsamplingBilinear2d(size=3)
    assert repr(bil) == "UpsamplingBilinear2d(size=3, mode='bilinear')" and bil.align_corners
    with pytest.warns(UserWarning, match="upsample_bilinear` is deprecated"):
        y = F.upsample_bilinear(T([[[[0.0, 1.0], [2.0, 3.0]]]], device), size=3)
    np.testing.assert_allclose(to_numpy(y)[0, 0, 1], [1.0, 1.5, 2.0], rtol=1e-14)


def test_interpolate_errors():
    z = gpugrad.zeros
    value_errors = [
        (lambda: F.interpolate(z(1, 2, 5), size=3, scale_factor=2),
         "only one of size or scale_factor should be defined"),
        (lambda: F.interpolate(z(1, 2, 5)), "either size or scale_factor should be defined"),
        (lambda: F.interpolate(z(1, 2, 5), size=3, align_corners=True),
         "align_corners option can only be set with the interpolating modes: linear | "
         "bilinear | bicubic | trilinear"),
        (lambda: F.interpolate(z(1, 2, 5), size=(3, 3)),
         "Input and output must have the same number of spatial dimensions, but got input with "
         "spatial dimensions of [5] and output size of (3, 3)."),
        (lambda: F.interpolate(z(1, 2, 5), scale_factor=(3, 3)),
         "Input and scale_factor must have the same number of spatial dimensions, but got input "
         "with spatial dimensions of [5] and scale_factor of shape (3, 3)."),
        (lambda: F.interpolate(z(1, 2, 5), size=3, recompute_scale_factor=True),
         "recompute_scale_factor is not meaningful with an explicit size."),
        (lambda: F.interpolate(z(1, 2, 5), scale_factor=2, antialias=True),
         "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
         "4-D tensor as input"),
    ]
    for call, message in value_errors:
        with raises(ValueError, message):
            call()
    with raises(NotImplementedError, "Got 4D input, but linear mode needs 3D input"):
        F.interpolate(z(1, 2, 5, 5), size=3, mode="linear")
    with raises(NotImplementedError, "Got 3D input, but bilinear mode needs 4D input"):
        F.interpolate(z(1, 2, 5), size=3, mode="bilinear")
    with raises(NotImplementedError, "Input Error: Only 3D, 4D and 5D input Tensors supported "
                "(got 2D) for the modes: nearest | linear | bilinear | bicubic | trilinear | "
                "area | nearest-exact (got nearest)"):
        F.interpolate(z(2, 5), scale_factor=2)
    with raises(RuntimeError, "Input and output sizes should be greater than 0, but got input "
                "(W: 5) output (W: 0)"):
        F.interpolate(z(1, 2, 5), scale_factor=0.1)
    with raises(RuntimeError, "Input and output sizes should be greater than 0, but got input "
                "(H: 5, W: 4) output (H: 0, W: 2)"):
        F.interpolate(z(1, 2, 5, 4), size=(0, 2))


def test_interpolate_matches_torch(device, rng):
    torch = pytest.importorskip("torch")
    cases = []
    for n_in in (1, 3, 5, 8):
        for n_out in (1, 2, 4, 6, 9, 16):
            cases += [((2, 2, n_in), dict(size=n_out, mode=m)) for m in ("nearest",
                                                                           "nearest-exact")]
            cases += [((2, 2, n_in), dict(size=n_out, mode="linear", align_corners=a))
                      for a in (False, True)]
            cases += [((1, 2, n_in, n_out), dict(size=(n_out, n_in), mode=m))
                      for m in ("nearest", "nearest-exact")]
            cases += [((1, 2, n_in, n_out), dict(size=(n_out, n_in), mode="bilinear",
                                                 align_corners=a)) for a in (False, True)]
    for sf in (0.5, 0.7, 1.5, 2, 2.3, 3):
        cases += [((1, 2, 5, 6), dict(scale_factor=sf, mode=m)) for m in ("nearest",
                                                                           "nearest-exact")]
        cases += [((1, 2, 5, 6), dict(scale_factor=(sf, 1.3), mode="bilinear"))]
        cases += [((1, 2, 7), dict(scale_factor=sf, mode="linear", recompute_scale_factor=r))
                  for r in (False, True)]
        cases += [((1, 2, 7), dict(scale_factor=sf, mode="nearest-exact"))]
    for shape, kw in cases:
        x = rng.standard_normal(shape)
        _oracle(torch, lambda x, kw=kw: F.interpolate(x, **kw),
                lambda x, kw=kw: torch.nn.functional.interpolate(x, **kw), [x], device)
    # NOTE: PyTorch's 1-D nearest backward maps n -> 2 n as i // 2 even where its forward used
    # the scale factor (here 1 / 2.3); gpugrad's gradient is that of its forward
    x = rng.standard_normal((1, 2, 3))
    _oracle(torch, lambda x: F.interpolate(x, scale_factor=2.3),
            lambda x: torch.nn.functional.interpolate(x, scale_factor=2.3), [x], device,
            exact_grad=False)


def test_interpolate_bicubic_values_by_hand(device):
    # upsampling [0, 1, 2, 3] (a line) by 2, align_corners: a cubic kernel reproduces lines
    # away from the border; at the border the clamped taps bend it
    x = tensor([[[[0.0, 1.0, 2.0, 3.0]]]], device)
    y = F.interpolate(x, size=(1, 7), mode="bicubic", align_corners=True)
    np.testing.assert_allclose(to_numpy(y)[0, 0, 0, 2:5], [1.0, 1.5, 2.0], rtol=1e-14)
    # a constant stays constant, and equal sizes are the identity
    c = F.interpolate(gpugrad.full((1, 1, 3, 4), 2.5, dtype=gpugrad.float64, device=device),
                      scale_factor=1.7, mode="bicubic")
    np.testing.assert_allclose(to_numpy(c), 2.5, rtol=1e-14)
    r = tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)), device)
    np.testing.assert_array_equal(to_numpy(F.interpolate(r, (3, 4), mode="bicubic")),
                                  to_numpy(r))


def test_interpolate_new_modes_gradients(device):
    rng = np.random.default_rng(4)
    x4 = tensor(rng.standard_normal((1, 2, 4, 3)), device, requires_grad=True)
    x5 = tensor(rng.standard_normal((1, 1, 2, 3, 3)), device, requires_grad=True)
    for f, x in [(lambda v: F.interpolate(v, (5, 2), mode="bicubic", align_corners=True), x4),
                 (lambda v: F.interpolate(v, (2, 5), mode="bilinear", antialias=True), x4),
                 (lambda v: F.interpolate(v, (3, 2), mode="bicubic", antialias=True), x4),
                 (lambda v: F.interpolate(v, scale_factor=1.5, mode="trilinear"), x5),
                 (lambda v: F.interpolate(v, (3, 2, 4), mode="area"), x5),
                 (lambda v: F.interpolate(v, (3, 2, 4), mode="nearest-exact"), x5)]:
        assert gradcheck(f, [x])
        assert gradgradcheck(f, [x])


def test_interpolate_mode_errors():
    z = gpugrad.zeros
    with _raises(NotImplementedError, "Got 4D input, but trilinear mode needs 5D input"):
        F.interpolate(z(1, 2, 3, 4), scale_factor=2, mode="trilinear")
    with _raises(NotImplementedError, "Got 5D input, but bilinear mode needs 4D input"):
        F.interpolate(z(1, 2, 3, 4, 5), scale_factor=2, mode="bilinear")
    with _raises(ValueError, "Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                 "modes and requires a 4-D tensor as input"):
        F.interpolate(z(1, 2, 3, 4, 5), size=(1, 2, 3), mode="trilinear", antialias=True)
