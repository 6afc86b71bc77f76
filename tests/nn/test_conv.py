"""Transposed convolutions, 1-D / adaptive max pooling, interpolate, pixel shuffle, unfold and
fold: exact values against numpy written out here, output shapes for every option, PyTorch's
error messages, graph node names, and oracle comparisons with PyTorch (skipped without it)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck


def raises(kind, message):
    return pytest.raises(kind, match=re.escape(message))


def T(a, device, requires_grad=False):
    return tensor(np.asarray(a, dtype=np.float64), device, requires_grad=requires_grad)


# -- transposed convolution -----------------------------------------------------------------------
def test_conv_transpose1d_exact_values(device):
    # each input scatters x[i] * w into the output at i * stride; padding crops both ends and
    # output_padding adds back at the end
    x, w = T([[[1.0, 2.0, 3.0]]], device), T([[[1.0, 10.0, 100.0]]], device)
    assert F.conv_transpose1d(x, w).tolist() == [[[1, 12, 123, 230, 300]]]
    assert F.conv_transpose1d(x, w, stride=2).tolist() == [[[1, 10, 102, 20, 203, 30, 300]]]
    assert F.conv_transpose1d(x, w, stride=2, padding=1).tolist() == [[[10, 102, 20, 203, 30]]]
    y = F.conv_transpose1d(x, w, T([0.5], device), stride=2, padding=1, output_padding=1)
    assert y.tolist() == [[[10.5, 102.5, 20.5, 203.5, 30.5, 300.5]]]
    assert F.conv_transpose1d(x, w, dilation=2).tolist() == [[[1, 2, 13, 20, 130, 200, 300]]]


def test_conv_transpose2d_exact_values_groups_and_gradients(device):
    # two groups of one channel each: output channel g reads only input channel g
    x = T([[[[1.0, 2.0], [3.0, 4.0]], [[10.0, 20.0], [30.0, 40.0]]]], device, True)
    w = T([[[[1.0, 0.0], [0.0, 0.0]]], [[[0.0, 0.0], [0.0, 1.0]]]], device, True)
    y = F.conv_transpose2d(x, w, groups=2)
    assert y.shape == (1, 2, 3, 3) and y.grad_fn.name() == "ConvolutionBackward0"
    assert to_numpy(y)[0, 0].tolist() == [[1, 2, 0], [3, 4, 0], [0, 0, 0]]
    assert to_numpy(y)[0, 1].tolist() == [[0, 0, 0], [0, 10, 20], [0, 30, 40]]
    y.backward(T(np.arange(18.0).reshape(1, 2, 3, 3), device))
    # d/dx[g, i, j] = gy[g, i + a, j + b] at the one tap of w[g]; d/dw = windows of gy times x
    assert to_numpy(x.grad)[0, 0].tolist() == [[0, 1], [3, 4]]
    assert to_numpy(x.grad)[0, 1].tolist() == [[13, 14], [16, 17]]
    gy = np.arange(18.0).reshape(2, 3, 3)
    xs = to_numpy(x)[0]
    want = [[[[(xs[g] * gy[g, a:a + 2, b:b + 2]).sum() for b in range(2)] for a in range(2)]]
            for g in range(2)]
    np.testing.assert_allclose(to_numpy(w.grad), want, rtol=1e-14)


def test_conv_transpose_output_shapes(device):
    x2, x1 = gpugrad.zeros(2, 4, 5, 6, device=device), gpugrad.zeros(2, 4, 7, device=device)
    w2, w1 = gpugrad.zeros(4, 3, 3, 2, device=device), gpugrad.zeros(4, 3, 3, device=device)
    cases2 = [({}, (2, 3, 7, 7)), (dict(stride=2), (2, 3, 11, 12)),
              (dict(stride=2, padding=1), (2, 3, 9, 10)),
              (dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2)), (2, 3, 10, 19)),
              (dict(dilation=(2, 3)), (2, 3, 9, 9)), (dict(groups=2), (2, 6, 7, 7)),
              (dict(groups=4, stride=2, output_padding=1), (2, 12, 12, 13))]
    for kw, shape in cases2:
        assert F.conv_transpose2d(x2, w2, **kw).shape == shape, kw
    assert F.conv_transpose2d(x2[0], w2).shape == (3, 7, 7)   # unbatched
    cases1 = [({}, (2, 3, 9)), (dict(stride=3, padding=2, output_padding=2), (2, 3, 19)),
              (dict(dilation=4, groups=2), (2, 6, 15))]
    for kw, shape in cases1:
        assert F.conv_transpose1d(x1, w1, **kw).shape == shape, kw
    assert F.conv_transpose1d(x1[0], w1, gpugrad.zeros(3, device=device)).shape == (3, 9)


def test_conv_transpose_is_the_adjoint_of_conv(device, rng):
    # <conv2d(x, w), y> == <x, conv_transpose2d(y, w)> for the same stride / padding / dilation
    x, w = rng.standard_normal((2, 3, 9, 8)), rng.standard_normal((4, 3, 3, 2))
    kw = dict(stride=2, padding=1, dilation=(1, 2))
    y = rng.standard_normal(tuple(F.conv2d(T(x, device), T(w, device), **kw).shape))
    lhs = (to_numpy(F.conv2d(T(x, device), T(w, device), **kw)) * y).sum()
    back = F.conv_transpose2d(T(y, device), T(w, device), output_padding=(0, 1), **kw)
    assert back.shape == x.shape
    np.testing.assert_allclose((x * to_numpy(back)).sum(), lhs, rtol=1e-12)


def test_conv_transpose_gradcheck_and_double_backward(rng):
    x = T(rng.standard_normal((1, 4, 3, 3)), "cpu", True)
    w = T(rng.standard_normal((4, 1, 2, 3)), "cpu", True)
    b = T(rng.standard_normal(2), "cpu", True)
    f = lambda x, w, b: F.conv_transpose2d(x, w, b, (2, 1), (0, 1), (1, 0), 2, (1, 2))  # noqa
    assert gradcheck(f, (x, w, b))
    assert gradgradcheck(f, (x, w, b))


def test_conv_transpose_errors():
    z = gpugrad.zeros
    with raises(RuntimeError, "Given transposed=1, weight of size [4, 3, 3, 3], expected "
                "input[1, 5, 5, 5] to have 4 channels, but got 5 channels instead"):
        F.conv_transpose2d(z(1, 5, 5, 5), z(4, 3, 3, 3))
    with raises(RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to "
                "conv_transpose2d, but got input of size: [5, 5]"):
        F.conv_transpose2d(z(5, 5), z(4, 3, 3, 3))
    with raises(RuntimeError, "Expected 2D (unbatched) or 3D (batched) input to "
                "conv_transpose1d, but got input of size: [5, 5, 5, 5]"):
        F.conv_transpose1d(z(5, 5, 5, 5), z(4, 3, 3))
    with raises(RuntimeError, "output padding must be smaller than either stride or dilation, "
                "but got output_padding_height: 2 output_padding_width: 2 stride_height: 2 "
                "stride_width: 2 dilation_height: 1 dilation_width: 1"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), stride=2, output_padding=2)
    with raises(RuntimeError, "output padding must be smaller than either stride or dilation, "
                "but got output_padding_height: 0 output_padding_width: 2 stride_height: 1 "
                "stride_width: 2"):
        F.conv_transpose1d(z(1, 4, 5), z(4, 3, 3), stride=2, output_padding=2)
    with raises(RuntimeError, "Given groups=3, expected weight to be divisible by 3 at "
                "dimension 0, but got weight of size [[4, 3, 3, 3]] instead"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), groups=3)
    with raises(RuntimeError, "Given input size per channel: (1 x 1). Calculated output size "
                "per channel: (0 x 0). Output size is too small"):
        F.conv_transpose2d(z(1, 4, 1, 1), z(4, 3, 2, 2), padding=1)
    with raises(RuntimeError, "Given input size per channel: (1 x 5). Calculated output size "
                "per channel: (1 x -1). Output size is too small"):
        F.conv_transpose1d(z(1, 4, 5), z(4, 3, 3), padding=4)
    with raises(RuntimeError, "Given transposed=1, weight of size [4, 3, 3, 3], expected bias "
                "to be 1-dimensional with 3 elements, but got bias of size [4] instead"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), bias=z(4))
    with raises(RuntimeError, "non-positive stride is not supported"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), stride=0)
    with raises(RuntimeError, "negative padding is not supported"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), padding=-1)
    with raises(RuntimeError, "negative output_padding is not supported"):
        F.conv_transpose1d(z(1, 4, 5), z(4, 3, 3), output_padding=-1)
    with raises(RuntimeError, "dilation should be greater than zero, but got dilation_height: "
                "0, dilation_width: 0"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), dilation=0)
    # a (non-transposed) convolution lists the dilation; 1-D is seen as 2-D of height 1
    with raises(RuntimeError, "dilation should be greater than zero, but got [0, 0]"):
        F.conv2d(z(1, 4, 5, 5), z(3, 4, 3, 3), dilation=0)
    with raises(RuntimeError, "dilation should be greater than zero, but got [1, 0]"):
        F.conv1d(z(1, 4, 5), z(3, 4, 3), dilation=0)
    with raises(RuntimeError, "non-positive groups is not supported"):
        F.conv_transpose1d(z(1, 4, 5), z(4, 3, 3), groups=0)
    with raises(RuntimeError, "expected stride to be a single integer value or a list of 2 "
                "values to match the convolution dimensions, but got stride=[1, 2, 3]"):
        F.conv_transpose2d(z(1, 4, 5, 5), z(4, 3, 3, 3), stride=(1, 2, 3))


def test_conv2d_dilation_values(device):
    # a dilated 1 x 2 kernel reads x[j] and x[j + 2]
    x = T(np.arange(6.0).reshape(1, 1, 1, 6), device)
    y = F.conv2d(x, T([[[[1.0, 10.0]]]], device), dilation=(1, 2))
    assert y.tolist() == [[[[20.0, 31.0, 42.0, 53.0]]]]
    assert F.conv1d(x[:, :, 0], T([[[1.0, 1.0, 1.0]]], device), dilation=2,
                    padding="same").tolist() == [[[2.0, 4.0, 6.0, 9.0, 6.0, 8.0]]]
    with raises(RuntimeError, "Calculated padded input size per channel: (5 x 5). Kernel size: "
                "(7 x 7). Kernel size can't be greater than actual input size"):
        F.conv2d(gpugrad.zeros(1, 3, 5, 5), gpugrad.zeros(4, 3, 3, 3), dilation=3)
    with raises(RuntimeError, "Given weight of size [4, 3, 3], expected bias to be "
                "1-dimensional with 4 elements, but got bias of size [3] instead"):
        F.conv1d(gpugrad.zeros(1, 3, 5), gpugrad.zeros(4, 3, 3), bias=gpugrad.zeros(3))


def test_conv_transpose_modules(device):
    gpugrad.manual_seed(0)
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2,
                           dilation=2, bias=False).to(device)
    assert repr(m) == ("ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), "
                       "dilation=(2, 2), output_padding=(1, 1), groups=2, bias=False)")
    assert m.weight.shape == (4, 3, 3, 3) and m.bias is None and m.transposed
    assert m(gpugrad.zeros(1, 4, 5, 5, device=device)).shape == (1, 6, 12, 12)
    m = nn.ConvTranspose2d(4, 6, 3, stride=2).to(device)
    assert repr(m) == "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2))"
    # PyTorch's init: kaiming_uniform(a=sqrt 5) and bias bound 1 / sqrt(fan_in), fan_in from
    # the weight's dim 1 (out / groups) times the kernel
    bound = 1 / np.sqrt(6 * 9)
    assert np.abs(to_numpy(m.weight)).max() <= bound and np.abs(to_numpy(m.bias)).max() <= bound
    x = gpugrad.zeros(1, 4, 5, 5, device=device)
    assert m(x).shape == (1, 6, 11, 11)
    assert m(x, output_size=[12, 12]).shape == (1, 6, 12, 12)
    assert m(x, output_size=(1, 6, 12, 11)).shape == (1, 6, 12, 11)
    with raises(ValueError, "requested an output size of [13, 13], but valid sizes range from "
                "[11, 11] to [12, 12]"):
        m(x, output_size=[13, 13])
    with raises(ValueError, "ConvTranspose2D: for 4D input, output_size must have 2 or 4 "
                "elements (got 3)"):
        m(x, output_size=[1, 1, 1])
    m1 = nn.ConvTranspose1d(2, 3, 3, padding=1).to(device)
    assert repr(m1) == "ConvTranspose1d(2, 3, kernel_size=(3,), stride=(1,), padding=(1,))"
    out = m1(gpugrad.randn(4, 2, 7, device=device))
    assert out.shape == (4, 3, 7)
    out.sum().backward()
    assert m1.weight.grad.shape == (2, 3, 3)
    np.testing.assert_allclose(to_numpy(m1.bias.grad), [28.0] * 3)   # 4 samples x 7 steps
    for kw, message in ((dict(groups=4), "out_channels must be divisible by groups"),
                        (dict(groups=3), "in_channels must be divisible by groups"),
                        (dict(padding_mode="reflect"),
                         'Only "zeros" padding mode is supported for ConvTranspose2d')):
        with raises(ValueError, message):
            nn.ConvTranspose2d(4, 6, 3, **kw)


# -- 1-D pooling ----------------------------------------------------------------------------------
def test_max_pool1d_values_indices_and_gradient(device):
    x = T([[[1.0, 5.0, 2.0, 8.0, 3.0, 9.0, 4.0, 7.0, 6.0]]], device, True)
    assert F.max_pool1d(x, 2).tolist() == [[[5, 8, 9, 7]]]
    y, i = F.max_pool1d(x, 4, 3, 2, ceil_mode=True, return_indices=True)
    assert y.tolist() == [[[5, 8, 9, 7]]] and i.tolist() == [[[1, 3, 5, 7]]]
    assert i.dtype == gpugrad.int64 and not i.requires_grad
    assert F.max_pool1d(x, 3, 1, dilation=3).tolist() == [[[8, 7, 9]]]
    y = F.max_pool1d(x, 3, 2, 1)
    assert y.tolist() == [[[5, 8, 9, 9, 7]]]
    assert y.grad_fn.name() == "SqueezeBackward1"
    assert y.grad_fn.next_functions[0][0].name() == "MaxPool2DWithIndicesBackward0"
    y.sum().backward()
    assert to_numpy(x.grad).tolist() == [[[0, 1, 0, 1, 0, 2, 0, 1, 0]]]
    assert F.max_pool1d(x[0], 3).shape == (1, 3)   # unbatched (C, L)


def test_avg_pool1d_values_for_every_option(device):
    x = T(np.arange(1.0, 10.0).reshape(1, 1, 9), device)
    assert F.avg_pool1d(x, 3).tolist() == [[[2.0, 5.0, 8.0]]]
    # windows [-1, 3) [2, 6) [5, 9) [8, 12): zero padding counted unless count_include_pad=False,
    # and the ceil_mode window past the padding never counts
    assert F.avg_pool1d(x, 4, 3, 1, ceil_mode=True).tolist() == [[[1.5, 4.5, 7.5, 4.5]]]
    assert F.avg_pool1d(x, 4, 3, 1, ceil_mode=True, count_include_pad=False).tolist() == \
        [[[2.0, 4.5, 7.5, 9.0]]]
    assert F.avg_pool1d(x, 4, 3, 1).tolist() == [[[1.5, 4.5, 7.5]]]
    assert F.avg_pool2d(x[:, None], (1, 4), (1, 3), (0, 1), True, True, 2).tolist() == \
        [[[[3.0, 9.0, 15.0, 4.5]]]]   # divisor_override
    assert F.avg_pool1d(x[0], 2).shape == (1, 4)


def test_pool2d_ceil_mode_dilation_and_indices(device, rng):
    a = rng.standard_normal((2, 3, 7, 6))
    y, i = F.max_pool2d(T(a, device), 3, 2, 1, ceil_mode=True, return_indices=True)
    assert y.shape == (2, 3, 4, 4) and i.shape == (2, 3, 4, 4)
    flat = a.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, to_numpy(i).reshape(2, 3, -1), -1),
                                  to_numpy(y).reshape(2, 3, -1))
    pad = np.pad(a, ((0, 0), (0, 0), (1, 2), (1, 2)), constant_values=-np.inf)
    want = [[pad[:, :, 2 * r:2 * r + 3, 2 * c:2 * c + 3].max(axis=(2, 3)) for c in range(4)]
            for r in range(4)]
    np.testing.assert_array_equal(to_numpy(y), np.moveaxis(np.array(want), (0, 1), (2, 3)))
    y = F.max_pool2d(T(a, device), 2, 1, dilation=(3, 2))
    assert y.shape == (2, 3, 4, 4)
    np.testing.assert_array_equal(to_numpy(y)[..., 1, 2], a[..., [1, 1, 4, 4], [2, 4, 2, 4]]
                                  .max(-1))
    avg = F.avg_pool2d(T(a, device), 3, 2, 1, ceil_mode=True, count_include_pad=False)
    np.testing.assert_allclose(to_numpy(avg)[..., 3, 2], a[..., 5:, 3:].mean(axis=(2, 3)),
                               rtol=1e-14)


def test_pool_modules_repr_and_forward(device):
    x = gpugrad.randn(2, 3, 10, device=device)
    m = nn.MaxPool1d(3)
    assert repr(m) == "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"
    assert m(x).shape == (2, 3, 3)
    y, i = nn.MaxPool1d(2, return_indices=True)(x)
    assert y.shape == i.shape == (2, 3, 5)
    a = nn.AvgPool1d(3, 2, 1)
    assert repr(a) == "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))"
    assert a(x).shape == (2, 3, 5)
    assert nn.AvgPool1d(4, ceil_mode=True, count_include_pad=False)(x).shape == (2, 3, 3)
    assert repr(nn.AdaptiveMaxPool2d((2, None))) == "AdaptiveMaxPool2d(output_size=(2, None))"
    assert nn.AdaptiveMaxPool1d(4)(x).shape == (2, 3, 4)
    y, i = nn.AdaptiveMaxPool2d(3, return_indices=True)(gpugrad.randn(2, 3, 7, 5, device=device))
    assert y.shape == i.shape == (2, 3, 3, 3)
    assert nn.MaxPool2d(3, 2, 1, ceil_mode=True)(gpugrad.randn(1, 7, 6, device=device)).shape \
        == (1, 4, 4)


def test_pool_errors():
    z = gpugrad.zeros
    cases = [
        (lambda: F.max_pool1d(z(5), 2), "max_pool1d: Expected 2D or 3D (batch mode) tensor with "
         "optional 0 dim batch size for input, but got:[5]"),
        (lambda: F.max_pool1d(z(2, 3, 4), 5), "max_pool1d() Invalid computed output size: 0"),
        (lambda: F.max_pool1d(z(2, 3, 4), 3, padding=2), "max_pool1d() padding should be at "
         "most half of kernel size, but got padding=2 and kernel_size=3"),
        (lambda: F.max_pool1d(z(2, 3, 4), (2, 2)), "max_pool1d() kernel_size must be an int, "
         "list of ints or tuple of ints of size 1 but got size 2"),
        (lambda: F.max_pool1d(z(2, 3, 4), 2, stride=0), "max_pool1d() stride must be greater "
         "than zero, but got 0"),
        (lambda: F.max_pool1d(z(1, 1, 9), 3, dilation=0), "max_pool1d() dilation must be greater "
         "than zero, but got 0"),
        (lambda: F.avg_pool1d(z(5), 2), "Expected 2 to 3 dimensions, but got 1-dimensional "
         "tensor for argument #1 'self' (while checking arguments for avg_pool1d)"),
        (lambda: F.avg_pool1d(z(2, 3, 4), 5), "Given input size: (3x1x4). Calculated output "
         "size: (3x1x0). Output size is too small"),
        (lambda: F.avg_pool1d(z(2, 3, 4), 3, padding=2), "pad should be at most half of "
         "effective kernel size, but got pad=2, kernel_size=3 and dilation=1"),
        (lambda: F.avg_pool1d(z(1, 1, 9), (3, 3)), "avg_pool1d() argument 'kernel_size' should "
         "contain one int (got 2)"),
        (lambda: F.max_pool2d(z(2, 3, 4, 4), 5), "Given input size: (3x4x4). Calculated output "
         "size: (3x0x0). Output size is too small"),
        (lambda: F.max_pool2d(z(1, 1, 9, 9), 2, dilation=0), "dilation should be greater than "
         "zero, but got dilationH: 0 dilationW: 0"),
        (lambda: F.max_pool2d(z(1, 1, 9, 9), (3, 5, 1)), "max_pool2d: kernel_size must either "
         "be a single int, or a tuple of two ints"),
        (lambda: F.avg_pool2d(z(1, 1, 9, 9), 3, (3, 5, 1)), "avg_pool2d: stride must either be "
         "omitted, a single int, or a tuple of two ints"),
        (lambda: F.max_pool2d(z(1, 1, 9, 9), 2, -1), "stride should be greater than zero, but "
         "got dH: -1 dW: -1"),
        (lambda: F.avg_pool2d(z(1, 1, 9, 9), 3, divisor_override=0), "divisor must be not zero"),
        (lambda: F.adaptive_max_pool1d(z(4), 2), "Expected 2 to 3 dimensions, but got "
         "1-dimensional tensor for argument #1 'self' (while checking arguments for "
         "adaptive_max_pool1d)"),
        (lambda: F.adaptive_max_pool1d(z(2, 3, 4), (2, 2)), "adaptive_max_pool1d() argument "
         "'output_size' should contain one int (got 2)"),
        (lambda: F.adaptive_max_pool2d(z(4, 4), 2), "adaptive_max_pool2d(): Expected 3D or 4D "
         "tensor, but got: [4, 4]"),
        (lambda: F.adaptive_max_pool2d(z(1, 4, 4, 4), (2, 2, 2)), "adaptive_max_pool2d(): "
         "internal error: output_size.size() must be 2"),
        (lambda: F.adaptive_max_pool2d(z(1, 4, 0, 4), 2), "adaptive_max_pool2d(): Expected "
         "input to have non-zero size for non-batch dimensions, but input has sizes "
         "[1, 4, 0, 4] with dimension 2 being empty"),
    ]
    for call, message in cases:
        with raises(RuntimeError, message):
            call()


def test_adaptive_max_pool_values_indices_and_double_backward(device, rng):
    x = T([[[3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0]]], device, True)
    # bins of 7 into 3: [0, 3) [2, 5) [4, 7)
    y, i = F.adaptive_max_pool1d(x, 3, return_indices=True)
    assert y.tolist() == [[[4.0, 5.0, 9.0]]] and i.tolist() == [[[2, 4, 5]]]
    assert y.grad_fn.next_functions[0][0].name() == "AdaptiveMaxPool2DBackward0"
    # overlapping bins both send their gradient to a shared maximum
    y = F.adaptive_max_pool1d(T([[[1.0, 9.0, 2.0]]], device, True), 2)
    assert y.tolist() == [[[9.0, 9.0]]]
    a = rng.standard_normal((2, 3, 5, 7))
    y, i = F.adaptive_max_pool2d(T(a, device), (2, 3), return_indices=True)
    want = [[a[:, :, r * 5 // 2:-(-(r + 1) * 5 // 2), c * 7 // 3:-(-(c + 1) * 7 // 3)]
             .max(axis=(2, 3)) for c in range(3)] for r in range(2)]
    np.testing.assert_array_equal(to_numpy(y), np.moveaxis(np.array(want), (0, 1), (2, 3)))
    np.testing.assert_array_equal(np.take_along_axis(a.reshape(2, 3, -1),
                                                     to_numpy(i).reshape(2, 3, -1), -1),
                                  to_numpy(y).reshape(2, 3, -1))
    assert F.adaptive_max_pool2d(T(a, device), (None, 2)).shape == (2, 3, 5, 2)
    assert F.adaptive_max_pool2d(T(a[0], device), 9).shape == (3, 9, 9)   # more bins than rows
    assert F.adaptive_max_pool2d(T(a, device), (0, 2)).shape == (2, 3, 0, 2)
    # double backward: d/dx sum(y^2) = 2 y at each bin's maximum (summed where bins share it),
    # and its derivative counts the bins reading each entry twice
    v = T([[[1.0, 9.0, 2.0, 4.0]]], device, True)
    g, = gpugrad.autograd.grad((F.adaptive_max_pool1d(v, 3) ** 2).sum(), v, create_graph=True)
    assert g.tolist() == [[[0.0, 36.0, 0.0, 8.0]]]
    gg, = gpugrad.autograd.grad(g.sum(), v)
    assert gg.tolist() == [[[0.0, 4.0, 0.0, 2.0]]]


# -- interpolate ----------------------------------------------------------------------------------
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


# -- pixel shuffle --------------------------------------------------------------------------------
def test_pixel_shuffle_values_shapes_and_errors(device):
    x = T(np.arange(8.0).reshape(1, 8, 1, 1), device, True)
    y = F.pixel_shuffle(x, 2)
    assert y.grad_fn.name() == "PixelShuffleBackward0"
    assert y.tolist() == [[[[0, 1], [2, 3]], [[4, 5], [6, 7]]]]
    back = F.pixel_unshuffle(y, 2)
    assert back.grad_fn.name() == "PixelUnshuffleBackward0"
    assert back.tolist() == x.tolist()
    img = T(np.arange(16.0).reshape(1, 1, 4, 4), device)
    assert to_numpy(F.pixel_unshuffle(img, 2))[0, :, 0, 0].tolist() == [0, 1, 4, 5]
    assert F.pixel_shuffle(gpugrad.zeros(3, 2, 8, 3, 4, device=device), 2).shape == \
        (3, 2, 2, 6, 8)
    assert F.pixel_shuffle(gpugrad.zeros(18, 3, 4, device=device), 3).shape == (2, 9, 12)
    assert F.pixel_unshuffle(gpugrad.zeros(2, 6, 4, device=device), 2).shape == (8, 3, 2)
    assert repr(nn.PixelShuffle(2)) == "PixelShuffle(upscale_factor=2)"
    assert repr(nn.PixelUnshuffle(3)) == "PixelUnshuffle(downscale_factor=3)"
    assert nn.PixelUnshuffle(3)(gpugrad.zeros(1, 2, 6, 9)).shape == (1, 18, 2, 3)
    z = gpugrad.zeros
    for call, message in (
            (lambda: F.pixel_shuffle(z(2, 5), 2), "pixel_shuffle expects input to have at least "
             "3 dimensions, but got input with 2 dimension(s)"),
            (lambda: F.pixel_shuffle(z(1, 5, 2, 2), 2), "pixel_shuffle expects its input's "
             "'channel' dimension to be divisible by the square of upscale_factor, but "
             "input.size(-3)=5 is not divisible by 4"),
            (lambda: F.pixel_shuffle(z(1, 4, 2, 2), 0), "pixel_shuffle expects a positive "
             "upscale_factor, but got 0"),
            (lambda: F.pixel_unshuffle(z(1, 5, 3, 2), 2), "pixel_unshuffle expects height to be "
             "divisible by downscale_factor, but input.size(-2)=3 is not divisible by 2"),
            (lambda: F.pixel_unshuffle(z(1, 5, 4, 3), 2), "pixel_unshuffle expects width to be "
             "divisible by downscale_factor, but input.size(-1)=3 is not divisible by 2")):
        with raises(RuntimeError, message):
            call()


# -- unfold / fold --------------------------------------------------------------------------------
def test_unfold_and_fold_values(device):
    x = T(np.arange(9.0).reshape(1, 1, 3, 3), device, True)
    cols = F.unfold(x, 2)
    assert cols.grad_fn.name() == "Im2ColBackward0"
    # one column per 2 x 2 block (row-major), the block's entries down the column
    assert cols.tolist() == [[[0, 1, 3, 4], [1, 2, 4, 5], [3, 4, 6, 7], [4, 5, 7, 8]]]
    y = F.fold(cols, (3, 3), 2)
    assert y.grad_fn.name() == "Col2ImBackward0"
    # fold sums overlapping blocks: each pixel times the number of blocks covering it
    assert y.tolist() == [[[[0, 2, 2], [6, 16, 10], [6, 14, 8]]]]
    y.sum().backward()
    assert x.grad.tolist() == [[[[1, 2, 1], [2, 4, 2], [1, 2, 1]]]]
    padded = F.unfold(x, 3, padding=1, stride=2)
    assert padded.shape == (1, 9, 4)
    assert to_numpy(padded)[0, :, 0].tolist() == [0, 0, 0, 0, 0, 1, 0, 3, 4]
    dil = F.unfold(x, 2, dilation=2)
    assert dil.tolist() == [[[0], [2], [6], [8]]]
    # fold(unfold(x)) multiplies each pixel by its block count C: the gradient of sum(y^2) is
    # 2 C^2 x, and the gradient of that one's sum is 2 C^2
    g, = gpugrad.autograd.grad((F.fold(F.unfold(x, 2), 3, 2) ** 2).sum(), x, create_graph=True)
    assert g.tolist() == [[[[0, 8, 4], [24, 128, 40], [12, 56, 16]]]]
    gg, = gpugrad.autograd.grad(g.sum(), x)
    assert gg.tolist() == [[[[2, 8, 2], [8, 32, 8], [2, 8, 2]]]]


def test_unfold_fold_shapes_modules_and_errors(device):
    x = gpugrad.zeros(2, 3, 7, 8, device=device)
    for kw, shape in ((dict(kernel_size=2), (2, 12, 42)),
                      (dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 2), stride=(2, 3)),
                       (2, 18, 16)), (dict(kernel_size=3, padding=1, stride=2), (2, 27, 16))):
        cols = F.unfold(x, **kw)
        assert cols.shape == shape, kw
        assert F.fold(cols, (7, 8), **kw).shape == (2, 3, 7, 8)
    assert F.unfold(x[0], 2).shape == (12, 42) and F.fold(F.unfold(x[0], 2), (7, 8), 2).shape \
        == (3, 7, 8)
    u, f = nn.Unfold((2, 3), dilation=2, padding=1, stride=2), nn.Fold(4, 2, stride=2)
    assert repr(u) == "Unfold(kernel_size=(2, 3), dilation=2, padding=1, stride=2)"
    assert repr(f) == "Fold(output_size=4, kernel_size=2, dilation=1, padding=0, stride=2)"
    assert u(x).shape == (2, 18, 12) and f(gpugrad.zeros(1, 8, 4, device=device)).shape == \
        (1, 2, 4, 4)
    z = gpugrad.zeros
    for call, message in (
            (lambda: F.unfold(z(1, 2, 5, 5), 6), "Given input with spatial size (5, 5), "
             "kernel_size=(6, 6), dilation=(1, 1), padding=(0, 0), calculated shape of the array "
             "of sliding blocks as (0, 0), but its components must be at least one."),
            (lambda: F.unfold(z(1, 2, 5, 5), (2, 2, 2)), "It is expected kernel_size equals to "
             "2, but got size 3"),
            (lambda: F.unfold(z(1, 2, 5, 5), 0), "kernel size should be greater than zero, but "
             "got kernel_height: 0 kernel_width: 0"),
            (lambda: F.unfold(z(1, 2, 5, 5), 2, stride=0), "stride should be greater than zero, "
             "but got stride_height: 0 stride_width: 0"),
            (lambda: F.unfold(z(1, 2, 5, 5), 2, padding=-1), "padding should be non-negative, "
             "but got pad_height: -1 pad_width: -1"),
            (lambda: F.unfold(z(1, 2, 5, 5), 2, dilation=0), "dilation should be greater than "
             "zero, but got dilation_height: 0 dilation_width: 0"),
            (lambda: F.unfold(z(1, 2, 5, 5, 5), 2), "Expected 3D or 4D (batch mode) tensor with "
             "possibly 0 batch size and other non-zero dimensions for input, but got: "
             "[1, 2, 5, 5, 5]"),
            (lambda: F.fold(z(1, 7, 9), (4, 4), 2), "Expected size of input's dimension 1 to be "
             "divisible by the product of kernel_size, but got input.size(1)=7 and "
             "kernel_size=(2, 2)."),
            (lambda: F.fold(z(1, 8, 10), (4, 4), 2), "Given output_size=(4, 4), "
             "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1), expected size "
             "of input's dimension 2 to match the calculated number of sliding blocks 3 * 3 = 9, "
             "but got input.size(2)=10."),
            (lambda: F.fold(z(1, 8, 9, 1), (4, 4), 2), "Expected 2D or 3D (batch mode) tensor "
             "for input with possibly 0 batch size and non-zero dimensions for input, but got: "
             "[1, 8, 9, 1]"),
            (lambda: F.fold(z(1, 8, 9), (4, 4, 4), 2), "It is expected output_size equals to 2, "
             "but got size 3")):
        with raises(RuntimeError, message):
            call()


# -- EmbeddingBag ---------------------------------------------------------------------------------
W6 = np.arange(12.0).reshape(6, 2)   # row r is (2 r, 2 r + 1)
BAGS, OFFSETS = [1, 2, 4, 5, 4, 3, 2, 0], [0, 2, 2, 5]   # bags [1, 2], [], [4, 5, 4], [3, 2, 0]


def test_embedding_bag_values_for_every_mode(device):
    w = T(W6, device, True)
    i, o = gpugrad.tensor(BAGS, device=device), gpugrad.tensor(OFFSETS, device=device)
    y = F.embedding_bag(i, w, o, mode="sum")
    assert y.grad_fn.name() == "EmbeddingBagBackward0"
    assert y.tolist() == [[6, 8], [0, 0], [26, 29], [10, 13]]
    np.testing.assert_allclose(to_numpy(F.embedding_bag(i, w, o)),
                               [[3, 4], [0, 0], [26 / 3, 29 / 3], [10 / 3, 13 / 3]], rtol=1e-14)
    assert F.embedding_bag(i, w, o, mode="max").tolist() == [[4, 5], [0, 0], [10, 11], [6, 7]]
    # padding_idx entries are skipped (and not counted by the mean); -1 means the last row
    np.testing.assert_allclose(to_numpy(F.embedding_bag(i, w, o, padding_idx=-1)),
                               [[3, 4], [0, 0], [8, 9], [10 / 3, 13 / 3]], rtol=1e-14)
    last = gpugrad.tensor(OFFSETS + [8], device=device)
    assert F.embedding_bag(i, w, last, mode="sum", include_last_offset=True).tolist() == \
        [[6, 8], [0, 0], [26, 29], [10, 13]]
    fixed = F.embedding_bag(i.reshape(2, 4), w, mode="max")   # 2-D input: bags of 4
    assert fixed.tolist() == [[10, 11], [8, 9]]
    psw = T(np.arange(8.0), device, True)
    y = F.embedding_bag(i, w, o, mode="sum", per_sample_weights=psw)
    assert y.tolist() == [[4, 5], [0, 0], [78, 87], [54, 72]]
    y.backward(T([[1.0, 0.0], [5.0, 5.0], [0.0, 1.0], [1.0, 1.0]], device))
    # weight row r gets psw[j] gy[bag(j)] from each entry j reading it
    assert w.grad.tolist() == [[7, 7], [0, 0], [7, 6], [5, 5], [0, 6], [0, 3]]
    # psw[j] gets <gy[bag(j)], weight[input[j]]>
    assert psw.grad.tolist() == [2, 4, 9, 11, 9, 13, 9, 1]


def test_embedding_bag_max_gradient_and_double_backward(device):
    w = T(W6, device, True)
    i, o = gpugrad.tensor(BAGS, device=device), gpugrad.tensor(OFFSETS, device=device)
    F.embedding_bag(i, w, o, mode="max").backward(T(np.ones((4, 2)), device))
    assert w.grad.tolist() == [[0, 0], [0, 0], [1, 1], [1, 1], [0, 0], [1, 1]]
    psw = T(np.ones(8), device, True)
    y = F.embedding_bag(i, w, o, mode="sum", per_sample_weights=psw)
    g, = gpugrad.autograd.grad((y ** 2).sum(), psw, create_graph=True)
    assert g.requires_grad
    assert gradgradcheck(lambda w, p: F.embedding_bag(i, w, o, mode="sum",
                                                      per_sample_weights=p), (w, psw))


def test_embedding_bag_module_and_errors(device):
    gpugrad.manual_seed(0)
    bag = nn.EmbeddingBag(10, 3, padding_idx=2).to(device)
    assert repr(bag) == "EmbeddingBag(10, 3, mode='mean', padding_idx=2)"
    assert to_numpy(bag.weight)[2].tolist() == [0, 0, 0] and bag.weight.requires_grad
    y = bag(gpugrad.tensor([1, 2, 3, 4], device=device), gpugrad.tensor([0, 3], device=device))
    assert y.shape == (2, 3)
    assert repr(nn.EmbeddingBag(10, 3, mode="max", norm_type=1.0)) == \
        "EmbeddingBag(10, 3, norm_type=1.0, mode='max')"
    pre = nn.EmbeddingBag.from_pretrained(T(W6, device), mode="sum")
    assert not pre.weight.requires_grad
    assert pre(gpugrad.tensor([[0, 5]], device=device)).tolist() == [[10, 12]]
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=10)
    w, i = gpugrad.zeros(6, 2), gpugrad.tensor(BAGS)
    o = gpugrad.tensor(OFFSETS)
    for kind, call, message in (
            (ValueError, lambda: F.embedding_bag(i.reshape(2, 4), w, o), "if input is 2D, then "
             "offsets has to be None, as input is treated is a mini-batch of fixed length "
             "sequences."),
            (ValueError, lambda: F.embedding_bag(i, w), "offsets has to be a 1D Tensor but got "
             "None"),
            (RuntimeError, lambda: F.embedding_bag(i, w, gpugrad.tensor([1, 2])), "offsets[0] has "
             "to be 0, i.e., the first sequence in the mini-batch has to start from position 0. "
             "However, got 1"),
            (ValueError, lambda: F.embedding_bag(i, w, o, mode="foo"), "mode has to be one of "
             "sum, mean or max"),
            (NotImplementedError, lambda: F.embedding_bag(i, w, o, per_sample_weights=w[0, :1]
                                                          .expand(8)),
             "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
             "supported for mode='sum' (got mode='mean')."),
            (ValueError, lambda: F.embedding_bag(i.reshape(2, 2, 2), w), "input has to be 1D or "
             "2D Tensor, but got Tensor of dimension 3"),
            (RuntimeError, lambda: F.embedding_bag(gpugrad.tensor([7]), w, gpugrad.tensor([0])),
             "Index 0 of input takes value 7 which is not in the valid range [0, 6)"),
            (RuntimeError, lambda: F.embedding_bag(i, w, gpugrad.tensor([0, 9])), "offsets[-1] "
             "can not be greater than input's length 8 but got offsets[-1] of 9"),
            (ValueError, lambda: F.embedding_bag(i, w[0], o), "weight has to be a 2D Tensor, but "
             "got Tensor of dimension 1"),
            (RuntimeError, lambda: F.embedding_bag(i, w, o, padding_idx=-7), "padding_idx must "
             "be within the number of embeddings, -6 through 5, but got -7"),
            (RuntimeError, lambda: F.embedding_bag(i.double(), w, o), "Expected tensor for "
             "argument #1 'indices' to have one of the following scalar types: Long, Int")):
        with raises(kind, message):
            call()


# -- PyTorch as an oracle -------------------------------------------------------------------------
def _oracle(torch, ours, theirs, arrays, device, seed=0, exact_grad=True):
    """Forward and backward (a fixed random output gradient) of both libraries on copies of the
    same float64 arrays: values, gradients and node names must agree."""
    mine = [T(a, device, True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = ours(*mine), theirs(*ref)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(to_numpy(y[1]), yt[1].numpy())
        y, yt = y[0], yt[0]
    assert y.grad_fn.name() == yt.grad_fn.name()
    np.testing.assert_allclose(to_numpy(y), yt.detach().numpy(), rtol=1e-11, atol=1e-12)
    gy = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    y.backward(T(gy, device))
    yt.backward(torch.tensor(gy))
    if exact_grad:
        for a, b in zip(mine, ref):
            np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("dims, kw", [
    (2, dict(stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2))),
    (2, dict(stride=(1, 3), padding=(2, 0), output_padding=(0, 2), dilation=(3, 1))),
    (2, dict(groups=4, stride=2)),
    (1, dict(stride=3, padding=2, output_padding=1)),
    (1, dict(dilation=2, groups=2))])
def test_conv_transpose_matches_torch_with_copied_weights(dims, kw, device, rng):
    torch = pytest.importorskip("torch")
    groups = kw.get("groups", 1)
    spatial = (5, 6)[:dims]
    ours = (nn.ConvTranspose1d if dims == 1 else nn.ConvTranspose2d)(4, 2 * groups, 3, **kw)
    theirs = (torch.nn.ConvTranspose1d if dims == 1 else torch.nn.ConvTranspose2d)(
        4, 2 * groups, 3, **kw).double()
    ours.to(device).double()
    with torch.no_grad():
        ours.weight.data = T(theirs.weight.numpy(), device)
        ours.bias.data = T(theirs.bias.numpy(), device)
    assert repr(ours) == repr(theirs)
    x = rng.standard_normal((2, 4) + spatial)
    _oracle(torch, ours, theirs, [x], device)
    _oracle(torch, ours, theirs, [x[0]], device)   # unbatched
    w = rng.standard_normal(tuple(theirs.weight.shape))
    f = F.conv_transpose1d if dims == 1 else F.conv_transpose2d
    tf = getattr(torch.nn.functional, f.__name__)
    _oracle(torch, lambda x, w: f(x, w, None, **kw), lambda x, w: tf(x, w, None, **kw),
            [x, w], device)


@pytest.mark.parametrize("name, args, kw", [
    ("max_pool1d", (4,), dict(stride=3, padding=2, ceil_mode=True, return_indices=True)),
    ("max_pool1d", (3,), dict(dilation=2)),
    ("avg_pool1d", (4, 3, 1), dict(ceil_mode=True)),
    ("avg_pool1d", (4, 3, 1), dict(ceil_mode=True, count_include_pad=False)),
    ("max_pool2d", ((3, 2),), dict(stride=(2, 3), padding=1, dilation=(1, 2), ceil_mode=True,
                                   return_indices=True)),
    ("avg_pool2d", (3, 2, 1), dict(ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", (3, 2, 1), dict(ceil_mode=True, divisor_override=5)),
    ("adaptive_max_pool1d", (4,), dict(return_indices=True)),
    ("adaptive_max_pool1d", (13,), {}),
    ("adaptive_max_pool2d", ((4, 3),), dict(return_indices=True)),
    ("adaptive_max_pool2d", ((None, 9),), {})])
def test_pools_match_torch(name, args, kw, device, rng):
    torch = pytest.importorskip("torch")
    shape = (2, 3, 10) if name.endswith("1d") else (2, 3, 9, 8)
    x = rng.standard_normal(shape)
    ours, theirs = getattr(F, name), getattr(torch.nn.functional, name)
    _oracle(torch, lambda x: ours(x, *args, **kw), lambda x: theirs(x, *args, **kw), [x], device)
    _oracle(torch, lambda x: ours(x, *args, **kw), lambda x: theirs(x, *args, **kw), [x[0]],
            device)


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


def test_shuffle_unfold_fold_match_torch(device, rng):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    cases = [(F.pixel_shuffle, tf.pixel_shuffle, (2, 3, 8, 3, 4), (2,)),
             (F.pixel_unshuffle, tf.pixel_unshuffle, (2, 3, 2, 6, 4), (2,)),
             (F.unfold, tf.unfold, (2, 3, 7, 8), ((2, 3), (2, 1), (1, 2), (2, 3))),
             (F.unfold, tf.unfold, (3, 7, 8), (3, 1, 1, 2)),
             (F.fold, tf.fold, (2, 12, 42), ((7, 8), 2)),
             (F.fold, tf.fold, (18, 16), ((7, 8), (2, 3), (2, 1), (1, 2), (2, 3)))]
    for ours, theirs, shape, args in cases:
        _oracle(torch, lambda x, f=ours, a=args: f(x, *a),
                lambda x, f=theirs, a=args: f(x, *a), [rng.standard_normal(shape)], device)


@pytest.mark.parametrize("kw", [dict(mode="sum"), dict(mode="mean"), dict(mode="max"),
                                dict(mode="mean", padding_idx=3), dict(mode="max", padding_idx=4),
                                dict(mode="sum", weighted=True),
                                dict(mode="sum", include_last_offset=True)])
def test_embedding_bag_matches_torch(kw, device, rng):
    torch = pytest.importorskip("torch")
    kw = dict(kw)
    weighted = kw.pop("weighted", False)
    index = rng.integers(0, 7, 12)
    offsets = np.array([0, 3, 3, 7] + ([12] if kw.get("include_last_offset") else []))
    arrays = [rng.standard_normal((7, 4))] + ([rng.standard_normal(12)] if weighted else [])

    def ours(w, p=None):
        return F.embedding_bag(gpugrad.tensor(index, device=device), w,
                               gpugrad.tensor(offsets, device=device), per_sample_weights=p,
                               **kw)

    def theirs(w, p=None):
        return torch.nn.functional.embedding_bag(torch.tensor(index), w, torch.tensor(offsets),
                                                 per_sample_weights=p, **kw)
    _oracle(torch, ours, theirs, arrays, device)
