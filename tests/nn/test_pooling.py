"""Pooling: max/avg pools in 1-3 dimensions, adaptive, fractional, Lp pools and max unpooling:
values and indices against numpy, gradients, modules, messages and agreement with PyTorch."""
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
from tests.nn._gradients import _check_grads
from tests.nn._parity import _oracle
from tests.nn._tensors import T


def test_pooling_modules_and_a_small_cnn_trains(device):
    x = gpugrad.tensor(np.arange(16.0).reshape(1, 1, 4, 4), device=device, requires_grad=True)
    y = nn.MaxPool2d(2)(x)
    assert y.detach().cpu().numpy()[0, 0].tolist() == [[5.0, 7.0], [13.0, 15.0]]
    y.sum().backward()
    assert x.grad.cpu().numpy()[0, 0].tolist() == [[0, 0, 0, 0], [0, 1, 0, 1], [0, 0, 0, 0],
                                                     [0, 1, 0, 1]]
    assert nn.AvgPool2d(2)(x).detach().cpu().numpy()[0, 0].tolist() == [[2.5, 4.5],
                                                                          [10.5, 12.5]]
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(x, 3, padding=2)
    # a tiny CNN learns to tell a bright top half from a bright bottom half
    gpugrad.manual_seed(0)
    rng = np.random.default_rng(0)
    imgs = rng.uniform(0, 0.2, (64, 1, 6, 6))
    labels = rng.integers(0, 2, 64)
    imgs[labels == 0, :, :3] += 1.0
    imgs[labels == 1, :, 3:] += 1.0
    xs = gpugrad.tensor(imgs, dtype=gpugrad.float32, device=device)
    ys = gpugrad.tensor(labels, device=device)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(36, 2)).to(device)
    opt = gpugrad.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(30):
        opt.zero_grad()
        loss = F.cross_entropy(model(xs), ys)
        loss.backward()
        opt.step()
    assert loss.item() < 0.05
    assert (model(xs).argmax(1) == ys).all().item()


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


def test_pool_with_indices_aliases(device, rng):
    x1, x2 = tensor(rng.standard_normal((1, 2, 6)), device), tensor(
        rng.standard_normal((1, 2, 6, 6)), device)
    pairs = [(F.max_pool1d_with_indices(x1, 2), F.max_pool1d(x1, 2, return_indices=True)),
             (F.max_pool2d_with_indices(x2, 3, 2, 1), F.max_pool2d(x2, 3, 2, 1,
                                                                   return_indices=True)),
             (F.adaptive_max_pool1d_with_indices(x1, 4), F.adaptive_max_pool1d(x1, 4, True)),
             (F.adaptive_max_pool2d_with_indices(x2, 2), F.adaptive_max_pool2d(x2, 2, True))]
    for (v, i), (v2, i2) in pairs:
        np.testing.assert_array_equal(to_numpy(v), to_numpy(v2))
        np.testing.assert_array_equal(to_numpy(i), to_numpy(i2))
    v, i = F.max_pool1d_with_indices(tensor([[[1.0, 5.0, 2.0, 0.0]]], device), 2)
    assert to_numpy(v).tolist() == [[[5.0, 2.0]]] and to_numpy(i).tolist() == [[[1, 2]]]


def np_adaptive(x, out, axis):
    n = x.shape[axis]
    bins = [np.take(x, range(i * n // out, -(-(i + 1) * n // out)), axis).mean(axis, keepdims=True)
            for i in range(out)]
    return np.concatenate(bins, axis)


def test_adaptive_avg_pools_match_numpy_bins(device, rng):
    x = rng.standard_normal((2, 3, 7, 5))
    T = lambda a: tensor(a, device)   # noqa: E731
    for size in ((3, 2), (7, 5), (1, 1), (4, 9)):
        want = np_adaptive(np_adaptive(x, size[0], 2), size[1], 3)
        np.testing.assert_allclose(to_numpy(F.adaptive_avg_pool2d(T(x), size)), want,
                                   rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(to_numpy(nn.AdaptiveAvgPool2d((None, 2))(T(x[0]))),
                               np_adaptive(x[0], 2, 2), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(F.adaptive_avg_pool2d(T(x), 1))[..., 0, 0],
                               x.mean((2, 3)), rtol=1e-12)
    for size in (3, 7, 2, (4,)):
        n = size[0] if isinstance(size, tuple) else size
        np.testing.assert_allclose(to_numpy(nn.AdaptiveAvgPool1d(size)(T(x[:, :, 0]))),
                                   np_adaptive(x[:, :, 0], n, 2), rtol=1e-12)
    assert F.adaptive_avg_pool1d(T(x[0, :, 0]), 2).shape == (3, 2)   # unbatched (C, L)
    assert repr(nn.AdaptiveAvgPool2d((None, 3))) == "AdaptiveAvgPool2d(output_size=(None, 3))"


def test_adaptive_avg_pool_gradcheck_and_errors(rng):
    x = tensor(rng.standard_normal((1, 2, 5, 3)), requires_grad=True)
    assert gradcheck(lambda v: F.adaptive_avg_pool2d(v, (2, 2)), (x,))
    with pytest.raises(RuntimeError, match=r"adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, "
                                           r"but got \[2, 3\]"):
        F.adaptive_avg_pool2d(gpugrad.randn(2, 3), 2)
    with pytest.raises(RuntimeError, match="adaptive_avg_pool2d: output_size must be 2"):
        F.adaptive_avg_pool2d(gpugrad.randn(1, 2, 5, 5), (2, 2, 2))
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions, but got 1-dimensional"):
        F.adaptive_avg_pool1d(gpugrad.randn(5), 2)
    with pytest.raises(RuntimeError, match="'output_size' should contain one int \\(got 2\\)"):
        F.adaptive_avg_pool1d(gpugrad.randn(1, 2, 5), (2, 2))


def test_fractional_max_pool2d_windows_and_gradients(device):
    x = tensor(np.arange(25.0).reshape(1, 1, 5, 5), device, requires_grad=True)
    u = tensor([[[0.5, 0.5]]], device)
    # starts: alpha = (5 - 2) / (3 - 1) = 1.5; int((i + .5) 1.5) - int(.75) = 0, 2; last 3
    y, idx = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                     _random_samples=u)
    rows = [0, 2, 3]
    expect = [[(r + 1) * 5 + c + 1 for c in rows] for r in rows]
    assert to_numpy(y)[0, 0].tolist() == expect and to_numpy(idx)[0, 0].tolist() == expect
    assert not idx.requires_grad and idx.dtype == gpugrad.int64
    r = tensor(np.random.default_rng(8).permutation(48).reshape(1, 3, 4, 4) / 7.0, device,
               requires_grad=True)
    f = lambda v: F.fractional_max_pool2d(v, (2, 2), output_ratio=(0.5, 0.75),  # noqa: E731
                                          _random_samples=tensor([[[0.2, 0.7]] * 3], device))
    assert f(r).shape == (1, 3, 2, 3)
    assert gradcheck(f, [r])
    assert gradgradcheck(f, [r])
    m = nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert m(gpugrad.randn(2, 9, 9)).shape == (2, 4, 4) and repr(m) == "FractionalMaxPool2d()"


def test_fractional_max_pool2d_errors():
    with _raises(ValueError, "FractionalMaxPool2d requires specifying either an output size, or "
                 "a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with _raises(ValueError, "only one of output_size and output_ratio may be specified"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with _raises(ValueError, "output_ratio must be between 0 and 1 (got 1.5)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with _raises(RuntimeError, "fractional_max_pool2d(): pool height 2 too large relative to "
                 "input height 5"):
        F.fractional_max_pool2d(gpugrad.randn(1, 1, 5, 9), (2, 3), output_size=(5, 8))


def test_fractional_max_pool2d_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    for shape, k, size in (((2, 3, 9, 11), (2, 3), (4, 5)), ((3, 7, 8), 2, (3, 6))):
        x = rng.standard_normal(shape)
        u = rng.uniform(size=(shape[0] if len(shape) == 4 else 1, shape[-3], 2))
        xt, xg = torch.tensor(x, requires_grad=True), gpugrad.tensor(x, requires_grad=True)
        yt, it = torch.nn.functional.fractional_max_pool2d(xt, k, size, None, True,
                                                           torch.tensor(u))
        yg, ig = F.fractional_max_pool2d(xg, k, size, None, True, gpugrad.tensor(u))
        w = rng.standard_normal(tuple(yt.shape))
        yt.backward(torch.tensor(w))
        yg.backward(gpugrad.tensor(w))
        np.testing.assert_array_equal(to_numpy(yg), yt.detach().numpy())
        np.testing.assert_array_equal(to_numpy(ig), it.numpy())
        np.testing.assert_allclose(to_numpy(xg.grad), xt.grad.numpy(), rtol=1e-15)
        assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__


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
