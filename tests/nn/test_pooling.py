"""3-D convolutions and pools, max unpooling, Lp pools, affine_grid / grid_sample, lazy modules
and nn.Buffer: values against plain numpy loops, gradcheck and gradgradcheck in float64,
PyTorch's messages and reprs, lazy materialisation, and PyTorch as an extra oracle (skipped
without it)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck


def T(a, device, requires_grad=False):
    return tensor(np.asarray(a, dtype=np.float64), device, requires_grad=requires_grad)


def _check_grads(f, args):
    assert gradcheck(f, args)
    assert gradgradcheck(f, args)


# -- numpy loop references ------------------------------------------------------------------------
def conv3d_ref(x, w, b, stride, padding, dilation, groups):
    x = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    out = [(s - d * (kk - 1) - 1) // st + 1 for s, d, kk, st in
           zip(x.shape[2:], dilation, k, stride)]
    y = np.zeros((n, o) + tuple(out))
    for oc in range(o):
        g = oc // (o // groups)
        for pos in itertools.product(*map(range, out)):
            for off in itertools.product(*map(range, k)):
                at = tuple(p * s + q * d for p, s, q, d in zip(pos, stride, off, dilation))
                y[(slice(None), oc) + pos] += x[(slice(None), slice(g * cg, (g + 1) * cg))
                                                + at] @ w[(oc, slice(None)) + off]
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


def conv_transpose3d_ref(x, w, stride, padding, output_padding):
    """Each input value times the kernel, added at stride-spaced offsets, then cropped."""
    n, c = x.shape[:2]
    k = w.shape[2:]
    full = [(s - 1) * st + kk + op for s, st, kk, op in zip(x.shape[2:], stride, k,
                                                            output_padding)]
    y = np.zeros((n, w.shape[1]) + tuple(full))
    for pos in itertools.product(*map(range, x.shape[2:])):
        at = tuple(slice(p * s, p * s + kk) for p, s, kk in zip(pos, stride, k))
        y[(slice(None), slice(None)) + at] += np.einsum("nc,cokij->nokij",
                                                        x[(slice(None), slice(None)) + pos], w)
    return y[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                                zip(padding, full))]


def pool3d_ref(x, kernel, stride, reduce_):
    out = [(s - k) // st + 1 for s, k, st in zip(x.shape[2:], kernel, stride)]
    y = np.zeros(x.shape[:2] + tuple(out))
    idx = np.zeros(y.shape, dtype=np.int64)
    for n, c in np.ndindex(*x.shape[:2]):
        for pos in np.ndindex(*out):
            box = tuple(slice(p * s, p * s + k) for p, s, k in zip(pos, stride, kernel))
            win = x[(n, c) + box]
            y[(n, c) + pos] = reduce_(win)
            a = np.unravel_index(np.argmax(win), win.shape)
            idx[(n, c) + pos] = np.ravel_multi_index(
                tuple(p * s + q for p, s, q in zip(pos, stride, a)), x.shape[2:])
    return y, idx


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


# -- convolutions ---------------------------------------------------------------------------------
CONV3D = [
    dict(stride=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1),
    dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2),
]


@pytest.mark.parametrize("kw", CONV3D)
def test_conv3d_matches_a_loop_and_is_twice_differentiable(kw, device, rng):
    x = rng.standard_normal((2, 4, 4, 5, 4))
    w = rng.standard_normal((2, 4 // kw["groups"], 2, 2, 3))
    b = rng.standard_normal(2)
    y = F.conv3d(T(x, device, True), T(w, device), T(b, device), **kw)
    assert y.grad_fn.name() == "ConvolutionBackward0"
    np.testing.assert_allclose(to_numpy(y), conv3d_ref(x, w, b, **kw), rtol=1e-10, atol=1e-12)
    args = tuple(T(a, device, True) for a in (x[:1, :, :3], w, b))
    _check_grads(lambda x, w, b: F.conv3d(x, w, b, **kw), args)


def test_conv_transpose3d_matches_a_loop_and_is_twice_differentiable(device, rng):
    x = rng.standard_normal((2, 3, 2, 3, 2))
    w = rng.standard_normal((3, 2, 2, 3, 2))
    kw = dict(stride=(2, 1, 2), padding=(1, 0, 1), output_padding=(1, 0, 0))
    y = F.conv_transpose3d(T(x, device), T(w, device), **kw)
    np.testing.assert_allclose(to_numpy(y), conv_transpose3d_ref(x, w, **kw), rtol=1e-10,
                               atol=1e-12)
    args = tuple(T(rng.standard_normal(s), device, True) for s in ((1, 4, 2, 3, 2),
                                                                   (4, 2, 2, 3, 2), (4,)))
    _check_grads(lambda x, w, b: F.conv_transpose3d(x, w, b, 2, 1, 1, groups=2), args)


def test_conv3d_messages(device):
    x, w = T(np.zeros((1, 2, 3, 3, 3)), device), T(np.zeros((3, 2, 2, 2, 2)), device)
    cases = [
        (dict(dilation=(1, 0, 1)), "dilation should be greater than zero, but got [1, 0, 1]"),
        (dict(stride=(1, 1)), "expected stride to be a single integer value or a list of 3 "
                              "values to match the convolution dimensions, but got stride=[1, 1]"),
        (dict(padding="same", stride=2), "padding='same' is not supported for strided "
                                         "convolutions"),
    ]
    for kw, msg in cases:
        with pytest.raises(RuntimeError) as e:
            F.conv3d(x, w, **kw)
        assert str(e.value) == msg
    with pytest.raises(RuntimeError, match=r"^Expected 4D \(unbatched\) or 5D \(batched\) input "
                                           r"to conv3d, but got input of size: \[3, 3, 3\]$"):
        F.conv3d(x[0, 0], w)
    with pytest.raises(RuntimeError) as e:
        F.conv_transpose3d(x, w.transpose(0, 1), dilation=0)
    assert str(e.value) == ("dilation should be greater than zero, but got dilation_depth: 0, "
                            "dilation_height: 0, dilation_width: 0")
    with pytest.raises(RuntimeError, match="^output padding must be smaller than either stride "
                                           "or dilation, but got output_padding_depth: 2 "):
        F.conv_transpose3d(x, w.transpose(0, 1), stride=2, output_padding=2)


def test_conv3d_module_padding_modes_and_repr(device, rng):
    m = nn.Conv3d(2, 4, 3, stride=2, padding=1, padding_mode="reflect").to(device).double()
    assert repr(m) == ("Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), "
                       "padding_mode=reflect)")
    x = rng.standard_normal((1, 2, 4, 5, 4))
    want = conv3d_ref(np.pad(x, ((0, 0), (0, 0)) + ((1, 1),) * 3, mode="reflect"),
                      to_numpy(m.weight), to_numpy(m.bias), (2, 2, 2), (0, 0, 0), (1, 1, 1), 1)
    np.testing.assert_allclose(to_numpy(m(T(x, device))), want, rtol=1e-10, atol=1e-12)
    same = nn.Conv3d(2, 4, 2, padding="same", dilation=2, bias=False)
    assert repr(same) == ("Conv3d(2, 4, kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=same, "
                          "dilation=(2, 2, 2), bias=False)")
    assert tuple(same(gpugrad.zeros(1, 2, 5, 4, 3)).shape) == (1, 4, 5, 4, 3)
    t = nn.ConvTranspose3d(2, 4, (1, 2, 3), stride=2)
    assert repr(t) == "ConvTranspose3d(2, 4, kernel_size=(1, 2, 3), stride=(2, 2, 2))"
    assert tuple(t(gpugrad.zeros(1, 2, 2, 2, 2), output_size=(4, 5, 6)).shape) == (1, 4, 4, 5, 6)


# -- pools ----------------------------------------------------------------------------------------
def test_max_pool3d_values_indices_and_grads(device, rng):
    x = rng.standard_normal((2, 2, 4, 5, 4))
    y, idx = F.max_pool3d(T(x, device, True), (2, 2, 1), (2, 2, 1), return_indices=True)
    ry, ridx = pool3d_ref(x, (2, 2, 1), (2, 2, 1), np.max)
    np.testing.assert_array_equal(to_numpy(y), ry)
    np.testing.assert_array_equal(to_numpy(idx), ridx)
    assert y.grad_fn.name() == "MaxPool3DWithIndicesBackward0" and not idx.requires_grad
    y2, idx2 = F.max_pool3d_with_indices(T(x[0], device), 2)
    np.testing.assert_array_equal(to_numpy(idx2), pool3d_ref(x[:1], (2,) * 3, (2,) * 3,
                                                              np.max)[1][0])
    xg = T(x[:1], device, True)
    _check_grads(lambda x: F.max_pool3d(x, 3, 2, 1, dilation=(1, 1, 2)), (xg,))
    _check_grads(lambda x: F.max_pool3d(x, 2, 2, ceil_mode=True), (xg,))


def test_avg_pool3d_values_and_grads(device, rng):
    x = rng.standard_normal((2, 2, 4, 5, 4))
    y = F.avg_pool3d(T(x, device), (2, 3, 2), (2, 1, 2))
    np.testing.assert_allclose(to_numpy(y), pool3d_ref(x, (2, 3, 2), (2, 1, 2), np.mean)[0],
                               rtol=1e-12)
    # a corner window of a padded pool without the padding: 8 of 27 cells are the input
    z = F.avg_pool3d(T(x, device), 3, 2, 1, count_include_pad=False)
    np.testing.assert_allclose(to_numpy(z)[:, :, 0, 0, 0], x[:, :, :2, :2, :2].mean((2, 3, 4)))
    d = F.avg_pool3d(T(x, device), 3, 2, 1, divisor_override=5)
    np.testing.assert_allclose(to_numpy(d)[:, :, 0, 0, 0], x[:, :, :2, :2, :2].sum((2, 3, 4)) / 5)
    xg = T(x[:1], device, True)
    for kw in (dict(), dict(padding=1, ceil_mode=True, count_include_pad=False),
               dict(padding=1, divisor_override=3)):
        _check_grads(lambda x, kw=kw: F.avg_pool3d(x, 3, 2, **kw), (xg,))


def test_adaptive_pools_3d(device, rng):
    x = rng.standard_normal((2, 2, 5, 3, 4))
    size = (2, 3, 3)
    want_max, want_avg = np.zeros((2, 2) + size), np.zeros((2, 2) + size)
    for pos in np.ndindex(*size):
        box = tuple(slice(p * n // o, -(-(p + 1) * n // o)) for p, n, o in
                    zip(pos, x.shape[2:], size))
        want_max[(Ellipsis,) + pos] = x[(Ellipsis,) + box].max((2, 3, 4))
        want_avg[(Ellipsis,) + pos] = x[(Ellipsis,) + box].mean((2, 3, 4))
    y, idx = F.adaptive_max_pool3d(T(x, device), size, return_indices=True)
    np.testing.assert_array_equal(to_numpy(y), want_max)
    np.testing.assert_array_equal(np.take_along_axis(x.reshape(2, 2, -1), to_numpy(idx).reshape(
        2, 2, -1), -1).reshape(y.shape), want_max)
    np.testing.assert_allclose(to_numpy(F.adaptive_avg_pool3d(T(x, device), size)), want_avg,
                               rtol=1e-12)
    assert tuple(F.adaptive_avg_pool3d(T(x[0], device), (None, 2, 1)).shape) == (2, 5, 2, 1)
    xg = T(x[:1], device, True)
    _check_grads(lambda x: F.adaptive_max_pool3d(x, (2, 2, 3)), (xg,))
    _check_grads(lambda x: F.adaptive_avg_pool3d(x, (3, 2, 3)), (xg,))


@pytest.mark.parametrize("call, msg", [
    (lambda x: F.max_pool3d(x[0, 0], 2), "non-empty 4D or 5D (batch mode) tensor expected for "
                                         "input"),
    (lambda x: F.max_pool3d(x, (2, 2)), "max_pool3d: kernel_size must either be a single int, "
                                        "or a tuple of three ints"),
    (lambda x: F.max_pool3d(x, 2, 1, 2), "pad should be at most half of effective kernel size, "
                                         "but got pad=2, kernel_size=2 and dilation=1"),
    (lambda x: F.max_pool3d(x, 2, -1), "stride should be greater than zero, but got dT: -1 "
                                       "dH: -1 dW: -1"),
    (lambda x: F.max_pool3d(x, 2, dilation=0), "dilation should be greater than zero, but got "
                                               "dilationT: 0 dilationH: 0 dilationW: 0"),
    (lambda x: F.max_pool3d(x, 5), "Given input size: (2x4x4x4). Calculated output size: "
                                   "(2x0x0x0). Output size is too small"),
    (lambda x: F.avg_pool3d(x, 5), "input image (T: 4 H: 4 W: 4) smaller than kernel size "
                                   "(kT: 5 kH: 5 kW: 5)"),
    (lambda x: F.avg_pool3d(x, 2, (1, 1)), "avg_pool3d: stride must be omitted, a single int, "
                                           "or a tuple of three ints"),
    (lambda x: F.avg_pool3d(x, 2, divisor_override=0), "divisor must be not zero"),
    (lambda x: F.adaptive_max_pool3d(x, (2, 2)), "adaptive_max_pool3d(): internal error: "
                                                 "output_size.size() must be 3"),
    (lambda x: F.adaptive_avg_pool3d(x[0, 0], 2), "adaptive_avg_pool3d(): Expected 4D or 5D "
                                                  "tensor, but got [4, 4, 4]"),
])
def test_pool3d_messages(call, msg, device):
    with pytest.raises(RuntimeError) as e:
        call(T(np.zeros((1, 2, 4, 4, 4)), device))
    assert str(e.value) == msg


def test_pool3d_modules_and_batch_norm_3d(device, rng):
    assert repr(nn.MaxPool3d(2)) == ("MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, "
                                     "ceil_mode=False)")
    assert repr(nn.AvgPool3d(2)) == "AvgPool3d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.AdaptiveAvgPool3d(2)) == "AdaptiveAvgPool3d(output_size=2)"
    assert repr(nn.AdaptiveMaxPool3d((1, None, 2))) == "AdaptiveMaxPool3d(output_size=(1, None, 2))"
    assert repr(nn.BatchNorm3d(3)) == ("BatchNorm3d(3, eps=1e-05, momentum=0.1, affine=True, "
                                       "bias=True, track_running_stats=True)")
    x = rng.standard_normal((2, 3, 2, 3, 2))
    y = nn.BatchNorm3d(3).to(device).double()(T(x, device))
    m, v = x.mean((0, 2, 3, 4), keepdims=True), x.var((0, 2, 3, 4), keepdims=True)
    np.testing.assert_allclose(to_numpy(y), (x - m) / np.sqrt(v + 1e-5), rtol=1e-10)
    with pytest.raises(ValueError, match=r"^expected 5D input \(got 4D input\)$"):
        nn.BatchNorm3d(3)(gpugrad.zeros(2, 3, 4, 4))


# -- unpooling and Lp pools -----------------------------------------------------------------------
@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool_inverts_max_pool(dims, device, rng):
    shape = (2, 3) + (4, 6, 4)[:dims]
    x = rng.standard_normal(shape)
    pool = getattr(F, f"max_pool{dims}d")
    y, idx = pool(T(x, device), 2, return_indices=True)
    u = getattr(F, f"max_unpool{dims}d")(y, idx, 2)
    want = np.zeros(x.size).reshape(2, 3, -1)
    np.put_along_axis(want, to_numpy(idx).reshape(2, 3, -1), to_numpy(y).reshape(2, 3, -1), -1)
    np.testing.assert_array_equal(to_numpy(u), want.reshape(shape))
    module = getattr(nn, f"MaxUnpool{dims}d")(2)
    np.testing.assert_array_equal(to_numpy(module(y, idx)), want.reshape(shape))
    yg = T(to_numpy(y), device, True)
    fn = getattr(F, f"max_unpool{dims}d")
    _check_grads(lambda y: fn(y, idx, 2, output_size=tuple(n + 1 for n in shape[2:])), (yg,))


def test_max_unpool_messages_and_reprs(device):
    y = T(np.zeros((1, 2, 2, 2)), device)
    idx = gpugrad.tensor(np.zeros((1, 2, 2, 2), dtype=np.int64), device=device)
    with pytest.raises(RuntimeError) as e:
        F.max_unpool2d(y, idx + 100, 2)
    assert str(e.value) == "Found an invalid max index: 100 (output volumes are of size 4x4)"
    with pytest.raises(RuntimeError, match=r"^elements in indices should be type int64 but got: "
                                           r"Double$"):
        F.max_unpool2d(y, y, 2)
    with pytest.raises(ValueError) as e:
        F.max_unpool2d(y, idx, 2, output_size=(9, 9))
    assert str(e.value) == 'invalid output_size "(9, 9)" (dim 0 must be between 2 and 6)'
    with pytest.raises(RuntimeError, match=r"^Input to max_unpooling2d should be a 3d or 4d "
                                           r"Tensor, but got a tensor with 2 dimensions\.$"):
        F.max_unpool2d(y[0, 0], idx[0, 0], 2)
    assert repr(nn.MaxUnpool3d(2, 1, 1)) == ("MaxUnpool3d(kernel_size=(2, 2, 2), "
                                             "stride=(1, 1, 1), padding=(1, 1, 1))")
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_lp_pool(dims, device, rng):
    x = rng.uniform(0.2, 2.0, (1, 2) + (4, 4, 4)[:dims])
    k = 2
    y = getattr(F, f"lp_pool{dims}d")(T(x, device), 3.0, k)
    blocks = x.reshape((1, 2) + sum(((n // k, k) for n in x.shape[2:]), ()))
    want = (blocks ** 3).sum(tuple(range(3, 3 + 2 * dims, 2))) ** (1 / 3)
    np.testing.assert_allclose(to_numpy(y), want, rtol=1e-12)
    layer = getattr(nn, f"LPPool{dims}d")(3, k)
    np.testing.assert_allclose(to_numpy(layer(T(x, device))), want, rtol=1e-12)
    _check_grads(lambda x: getattr(F, f"lp_pool{dims}d")(x, 2, k, 1), (T(x, device, True),))
    assert repr(nn.LPPool2d(2, 3)) == "LPPool2d(norm_type=2, kernel_size=3, stride=None, " \
                                      "ceil_mode=False)"


# -- affine_grid and grid_sample ------------------------------------------------------------------
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


# -- lazy modules and buffers ---------------------------------------------------------------------
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


def test_buffer_registers_with_its_persistence():
    m = nn.Module()
    m.a = nn.Buffer(gpugrad.ones(2))
    m.b = nn.Buffer(gpugrad.zeros(3), persistent=False)
    assert list(m.state_dict()) == ["a"]
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert isinstance(m.b, nn.Buffer) and not m.b.persistent and m.a.persistent
    assert not list(m.parameters())


# -- PyTorch as an oracle -------------------------------------------------------------------------
def _grads(torch, fn, arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*ts)
    y.backward(torch.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
    return y.detach().numpy(), [t.grad.numpy() for t in ts]


ORACLE = [
    ("conv3d", lambda F_, x, w, b: F_.conv3d(x, w, b, 2, 1, (1, 2, 1), 2),
     [(1, 4, 5, 4, 5), (2, 2, 2, 3, 2), (2,)]),
    ("conv_transpose3d", lambda F_, x, w, b: F_.conv_transpose3d(x, w, b, 2, 1, 1, 1, 1),
     [(1, 3, 2, 3, 2), (3, 2, 2, 3, 2), (2,)]),
    ("max_pool3d", lambda F_, x: F_.max_pool3d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 5, 4, 5)]),
    ("avg_pool3d", lambda F_, x: F_.avg_pool3d(x, 3, 2, 1, True, False), [(1, 2, 5, 4, 5)]),
    ("adaptive_max_pool3d", lambda F_, x: F_.adaptive_max_pool3d(x, (2, 3, 2)),
     [(1, 2, 5, 4, 5)]),
    ("adaptive_avg_pool3d", lambda F_, x: F_.adaptive_avg_pool3d(x, (2, 3, 2)),
     [(1, 2, 5, 4, 5)]),
    ("lp_pool2d", lambda F_, x: F_.lp_pool2d(x.abs() + 0.5, 2.5, (2, 3), 1), [(1, 2, 4, 5)]),
    ("affine_grid", lambda F_, t: F_.affine_grid(t, (1, 2, 3, 2, 4), False), [(1, 3, 4)]),
    ("grid_sample", lambda F_, x, g: F_.grid_sample(x, g.tanh() * 1.3, "bilinear", "reflection",
                                                     True), [(1, 2, 3, 4), (1, 3, 2, 2)]),
    ("grid_sample_3d", lambda F_, x, g: F_.grid_sample(x, g, "bilinear", "border", False),
     [(1, 2, 3, 2, 4), (1, 2, 2, 1, 3)]),
]


@pytest.mark.parametrize("name, fn, shapes", ORACLE, ids=[o[0] for o in ORACLE])
def test_functions_against_pytorch(name, fn, shapes, rng):
    torch = pytest.importorskip("torch")
    arrays = [rng.standard_normal(s) for s in shapes]
    want, want_grads = _grads(torch, lambda *a: fn(torch.nn.functional, *a), arrays)
    got, got_grads = _grads(gpugrad, lambda *a: fn(F, *a), arrays)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


MODULES = [
    ("Conv3d", (2, 4, 3), dict(stride=2, padding=1, padding_mode="circular"), (1, 2, 4, 5, 4)),
    ("ConvTranspose3d", (2, 4, 2), dict(stride=2, groups=2), (1, 2, 2, 3, 2)),
    ("BatchNorm3d", (2,), dict(), (3, 2, 2, 2, 3)),
    ("MaxPool3d", (2,), dict(stride=1), (1, 2, 3, 4, 3)),
    ("AvgPool3d", (2,), dict(padding=1), (1, 2, 3, 4, 3)),
    ("LPPool3d", (2, 2), dict(), (1, 2, 4, 4, 2)),
    ("LazyConv2d", (3, 2), dict(), (1, 2, 4, 4)),
]


@pytest.mark.parametrize("name, args, kw, x_shape", MODULES, ids=[m[0] for m in MODULES])
def test_modules_against_pytorch(name, args, kw, x_shape, rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(x_shape)
    theirs = getattr(torch.nn, name)(*args, **kw).double()
    ours = getattr(nn, name)(*args, **kw).double()
    if name.startswith("Lazy"):
        theirs(torch.tensor(x)), ours(gpugrad.tensor(x))
    assert repr(ours) == repr(theirs)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        p.data = gpugrad.tensor(q.detach().numpy())
    want, want_grads = _grads(torch, lambda x: theirs(x), [x])
    got, got_grads = _grads(gpugrad, lambda x: ours(x), [x])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_grads[0], want_grads[0], rtol=1e-10, atol=1e-12)
