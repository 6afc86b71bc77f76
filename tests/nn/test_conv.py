"""Convolutions: grouped and dilated convolutions, transposed convolutions in 1-3 dimensions,
3-D convolutions, module shapes, init, padding modes and reprs, errors, and agreement with
PyTorch."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._errors import raises
from tests.nn._gradients import _check_grads
from tests.nn._parity import _oracle
from tests.nn._tensors import T, arr


def test_conv_modules_shapes_init_and_repr(device):
    gpugrad.manual_seed(0)
    c = nn.Conv2d(3, 4, 3, stride=2, padding=1).to(device)
    assert repr(c) == "Conv2d(3, 4, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"
    bound = 1 / np.sqrt(3 * 9)
    assert np.abs(c.weight.detach().cpu().numpy()).max() <= bound   # kaiming_uniform(a=sqrt 5)
    y = c(gpugrad.randn(2, 3, 7, 6, device=device))
    assert y.shape == (2, 4, 4, 3) and y.grad_fn.name() == "ConvolutionBackward0"
    assert c(gpugrad.randn(3, 7, 6, device=device)).shape == (4, 4, 3)   # unbatched
    same = nn.Conv2d(3, 2, 5, padding="same", bias=False).to(device)
    assert repr(same).endswith("padding=same, bias=False)")
    assert same(gpugrad.randn(1, 3, 6, 6, device=device)).shape == (1, 2, 6, 6)
    c1 = nn.Conv1d(2, 3, 3).to(device)
    assert repr(c1) == "Conv1d(2, 3, kernel_size=(3,), stride=(1,))"
    out = c1(gpugrad.randn(4, 2, 9, device=device))
    assert out.shape == (4, 3, 7)
    out.sum().backward()
    assert c1.weight.grad.shape == (3, 2, 3) and c1.bias.grad.shape == (3,)
    np.testing.assert_allclose(c1.bias.grad.cpu().numpy(), [28.0] * 3)   # 4 samples x 7 steps


def test_conv_errors():
    c = nn.Conv2d(3, 4, 3)
    with pytest.raises(RuntimeError, match=re.escape(
            "Given groups=1, weight of size [4, 3, 3, 3], expected input[3, 5, 5, 5] to have 3 "
            "channels, but got 5 channels instead")):
        c(gpugrad.zeros(3, 5, 5, 5))
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            "[5, 5]")):
        c(gpugrad.zeros(5, 5))
    with pytest.raises(RuntimeError, match=re.escape(
            "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel "
            "size can't be greater than actual input size")):
        c(gpugrad.zeros(1, 3, 2, 2))
    with pytest.raises(RuntimeError, match=re.escape(
            "Given groups=2, weight of size [2, 2, 3, 3], expected input[1, 6, 5, 5] to have 4 "
            "channels, but got 6 channels instead")):
        F.conv2d(gpugrad.zeros(1, 6, 5, 5), gpugrad.zeros(2, 2, 3, 3), groups=2)
    with pytest.raises(ValueError, match="^in_channels must be divisible by groups$"):
        nn.Conv2d(3, 4, 3, groups=2)
    x = gpugrad.randn(1, 3, 5, 5, requires_grad=True)
    (g,) = gpugrad.autograd.grad(c(x).sum(), x, create_graph=False)
    assert g.shape == (1, 3, 5, 5)
    (gg,) = gpugrad.autograd.grad(c(x).sum(), x, create_graph=True)   # the graph of the backward
    assert gg.requires_grad
    np.testing.assert_allclose(gg.detach().numpy(), g.numpy(), rtol=1e-5, atol=1e-6)


def test_grouped_and_dilated_convolutions_match_separate_ones(rng):
    """groups=g is g convolutions over slices of the channels, stacked; checked against that
    composition (values and gradients), and the module's shapes, init bound and repr."""
    x = gpugrad.tensor(rng.standard_normal((2, 4, 7, 7)), requires_grad=True)
    w = gpugrad.tensor(rng.standard_normal((6, 2, 3, 3)), requires_grad=True)
    y = F.conv2d(x, w, None, 1, 1, 2, groups=2)
    parts = [F.conv2d(x[:, 2 * g:2 * g + 2], w[3 * g:3 * g + 3], None, 1, 1, 2)
             for g in range(2)]
    want = gpugrad.cat(parts, 1)
    np.testing.assert_allclose(arr(y), arr(want), rtol=1e-12)
    gy = gpugrad.tensor(rng.standard_normal(tuple(y.shape)))
    gx, gw = gpugrad.autograd.grad(y, (x, w), gy)
    hx, hw = gpugrad.autograd.grad(want, (x, w), gy)
    np.testing.assert_allclose(arr(gx), arr(hx), rtol=1e-12)
    np.testing.assert_allclose(arr(gw), arr(hw), rtol=1e-12)
    depthwise = nn.Conv1d(4, 8, 3, groups=4, dilation=2)
    assert tuple(depthwise.weight.shape) == (8, 1, 3)
    assert float(depthwise.bias.abs().max()) <= 1 / np.sqrt(3)   # fan-in: in / groups * k
    assert repr(depthwise) == "Conv1d(4, 8, kernel_size=(3,), stride=(1,), dilation=(2,), groups=4)"
    assert tuple(depthwise(gpugrad.randn(2, 4, 9)).shape) == (2, 8, 5)


def test_grouped_convolution_matches_torch(rng):
    torch = pytest.importorskip("torch")
    x, w, b = rng.standard_normal((2, 6, 8)), rng.standard_normal((9, 2, 3)), rng.standard_normal(9)
    ours = F.conv1d(gpugrad.tensor(x), gpugrad.tensor(w), gpugrad.tensor(b), 2, 1, 1, 3)
    theirs = torch.nn.functional.conv1d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1,
                                        1, 3)
    np.testing.assert_allclose(arr(ours), theirs.numpy(), rtol=1e-12)


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
