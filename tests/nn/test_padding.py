"""Padding: reflect, replicate and circular ``F.pad`` over 1, 2 and 3 dimensions (exact values
written out, gradients as index counts, gradgradcheck), negative pads, the padding layers,
``padding_mode`` and asymmetric ``padding='same'`` in convolutions, PyTorch's error messages,
and oracle comparisons with PyTorch (skipped without it)."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._tensors import T


def raises(kind, message):
    return pytest.raises(kind, match="^" + re.escape(message) + "$")


ROW = [[0.0, 1.0, 2.0, 3.0, 4.0]]


@pytest.mark.parametrize("mode, pad, values", [
    ("reflect", (2, 2), [2, 1, 0, 1, 2, 3, 4, 3, 2]),
    ("replicate", (2, 3), [0, 0, 0, 1, 2, 3, 4, 4, 4, 4]),
    ("circular", (2, 2), [3, 4, 0, 1, 2, 3, 4, 0, 1]),
    ("circular", (5, 0), [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]),   # a whole period
    ("reflect", (-1, 2), [1, 2, 3, 4, 3, 2]),               # a negative pad crops
    ("replicate", (1, -3), [0, 0, 1]),
    ("circular", (-1, 2), [1, 2, 3, 4, 1, 2]),              # wraps the cropped input
])
def test_pad_1d_exact_values(mode, pad, values, device):
    y = F.pad(T(ROW, device), pad, mode=mode)
    assert to_numpy(y).tolist() == [values]


def test_pad_gradients_count_each_source(device):
    # the gradient of sum(y) is how often each input element was copied
    for mode, pad, counts in (("reflect", (2, 3), [1, 3, 3, 2, 1]),
                              ("replicate", (2, 3), [3, 1, 1, 1, 4]),
                              ("circular", (4, 3), [2, 3, 3, 2, 2])):
        x = T(ROW, device, True)
        F.pad(x, pad, mode=mode).sum().backward()
        assert to_numpy(x.grad).tolist() == [counts], mode


def test_pad_2d_and_3d_values(device):
    x = T(np.arange(6.0).reshape(1, 2, 3), device)          # unbatched (C, H, W)
    assert to_numpy(F.pad(x, (1, 1, 1, 0), mode="reflect")).tolist() == [
        [[4, 3, 4, 5, 4], [1, 0, 1, 2, 1], [4, 3, 4, 5, 4]]]
    assert to_numpy(F.pad(x, (0, 1, 1, 1), mode="replicate")).tolist() == [
        [[0, 1, 2, 2], [0, 1, 2, 2], [3, 4, 5, 5], [3, 4, 5, 5]]]
    assert to_numpy(F.pad(x, (1, 0, 0, 1), mode="circular")).tolist() == [
        [[2, 0, 1, 2], [5, 3, 4, 5], [2, 0, 1, 2]]]
    v = np.arange(8.0).reshape(1, 1, 2, 2, 2)
    y = F.pad(T(v, device), (1, 0, 0, 0, 1, 1), mode="replicate")
    np.testing.assert_array_equal(to_numpy(y), np.pad(v, ((0, 0),) * 2 + ((1, 1), (0, 0), (1, 0)),
                                                      mode="edge"))
    y = F.pad(T(v, device), (1, 1, 1, 1, 1, 1), mode="reflect")
    np.testing.assert_array_equal(to_numpy(y), np.pad(v, ((0, 0),) * 2 + ((1, 1),) * 3,
                                                      mode="reflect"))
    y = F.pad(T(v, device), (1, 1, 0, 1, 1, 0), mode="circular")
    np.testing.assert_array_equal(to_numpy(y), np.pad(v, ((0, 0),) * 2 + ((1, 0), (0, 1), (1, 1)),
                                                      mode="wrap"))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", [((2, 3, 6), (2, 3)), ((3, 4, 5), (1, 2, -1, 3)),
                                        ((1, 2, 3, 4, 5), (1, 0, 2, 2, 0, 1))])
def test_pad_gradcheck_and_gradgradcheck(mode, shape, pad, device, rng):
    x = T(rng.standard_normal(shape), device, True)
    assert gradcheck(lambda x: F.pad(x, pad, mode=mode), (x,))
    assert gradgradcheck(lambda x: F.pad(x, pad, mode=mode), (x,))


def test_pad_node_names_and_output_is_a_new_array(device):
    x = T(np.ones((1, 2, 3)), device, True)
    assert F.pad(x, (1, 1), mode="reflect").grad_fn.name() == "ReflectionPad1DBackward0"
    assert F.pad(x, (1, 1, 1, 1), mode="replicate").grad_fn.name() == \
        "ReplicationPad2DBackward0"
    assert F.pad(x, (1, 1), mode="circular").grad_fn.name() == "CircularPadBackward0"
    y = F.pad(x, (0, 0), mode="reflect")
    y.data.zero_()   # no padding at all still returns a copy, as PyTorch does
    assert to_numpy(x).sum() == 6


def test_pad_errors():
    x = gpugrad.zeros(1, 2, 3)
    with raises(RuntimeError, 'Padding mode "reflect" doesn\'t take in value argument'):
        F.pad(x, (1, 1), mode="reflect", value=2.0)
    assert F.pad(x, (1, 1), mode="reflect", value=0).shape == (1, 2, 5)
    with raises(RuntimeError, "Argument #4: Padding size should be less than the corresponding "
                "input dimension, but got: padding (3, 1) at dimension 2 of input [1, 2, 3]"):
        F.pad(x, (3, 1), mode="reflect")
    with raises(RuntimeError, "Argument #6: Padding size should be less than the corresponding "
                "input dimension, but got: padding (2, 0) at dimension 1 of input [1, 2, 3]"):
        F.pad(x, (1, 1, 2, 0), mode="reflect")
    with raises(RuntimeError, "Padding value causes wrapping around more than once."):
        F.pad(x, (4, 0), mode="circular")
    with raises(RuntimeError, "input (W: 3) is too small. Calculated output W: -1"):
        F.pad(x, (-2, -2), mode="replicate")
    with raises(RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                "and other non-zero dimensions for input, but got: [1, 0, 3]"):
        F.pad(gpugrad.zeros(1, 0, 3), (1, 1), mode="replicate")
    assert F.pad(gpugrad.zeros(0, 2, 3), (1, 1), mode="reflect").shape == (0, 2, 5)
    with raises(NotImplementedError, "Padding size 2 is not supported for 4D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"):
        F.pad(gpugrad.zeros(1, 1, 2, 2), (1, 1), mode="circular")
    with raises(TypeError, "pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                "element of type float at pos 0"):
        F.pad(x, (1.5, 1))


def test_padding_layers_repr_and_forward(device):
    x = T(np.arange(4.0).reshape(1, 1, 4), device)
    cases = [(nn.ZeroPad1d(2), "ZeroPad1d((2, 2))", [0, 0, 0, 1, 2, 3, 0, 0]),
             (nn.ConstantPad1d((1, 2), 3.5), "ConstantPad1d(padding=(1, 2), value=3.5)",
              [3.5, 0, 1, 2, 3, 3.5, 3.5]),
             (nn.ReflectionPad1d(2), "ReflectionPad1d((2, 2))", [2, 1, 0, 1, 2, 3, 2, 1]),
             (nn.ReplicationPad1d((1, 2)), "ReplicationPad1d((1, 2))", [0, 0, 1, 2, 3, 3, 3]),
             (nn.CircularPad1d((1, 0)), "CircularPad1d((1, 0))", [3, 0, 1, 2, 3])]
    for m, text, values in cases:
        assert repr(m) == text
        assert to_numpy(m(x)).tolist() == [[values]]
    assert nn.ZeroPad2d(1).padding == (1, 1, 1, 1) and nn.ZeroPad2d(1).value == 0.0
    assert nn.ReflectionPad3d(2).padding == (2,) * 6
    x3 = T(np.ones((1, 1, 2, 3, 3)), device)
    for m in (nn.ZeroPad3d(1), nn.ConstantPad3d(1, 0.0), nn.ReplicationPad3d(1),
              nn.ReflectionPad3d(1), nn.CircularPad3d(1)):
        assert m(x3).shape == (1, 1, 4, 5, 5)
    x2 = T(np.ones((1, 3, 3)), device)
    for m in (nn.ZeroPad2d((1, 0, 2, 1)), nn.ConstantPad2d((1, 0, 2, 1), 1.0),
              nn.ReplicationPad2d((1, 0, 2, 1)), nn.ReflectionPad2d((1, 0, 2, 1)),
              nn.CircularPad2d((1, 0, 2, 1))):
        assert m(x2).shape == (1, 6, 4)


def test_conv_padding_modes_pad_then_convolve(device, rng):
    gpugrad.manual_seed(0)
    x = T(rng.standard_normal((2, 3, 6, 5)), device)
    for mode in ("reflect", "replicate", "circular"):
        conv = nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode).to(device).double()
        assert repr(conv) == (f"Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1), padding=(1, 2), "
                              f"padding_mode={mode})")
        expect = F.conv2d(F.pad(x, (2, 2, 1, 1), mode=mode), conv.weight, conv.bias)
        np.testing.assert_allclose(to_numpy(conv(x)), to_numpy(expect), rtol=1e-12)
    with raises(ValueError, "padding_mode must be one of {'zeros', 'replicate', 'reflect', "
                "'circular'}, but got padding_mode='mirror'"):
        nn.Conv1d(1, 1, 3, padding_mode="mirror")


def test_same_padding_with_an_even_kernel_pads_the_odd_pixel_after(device):
    # total padding d (k - 1) = 3: one before, two after, so y[i] = sum_k xpad[i + k] w[k]
    # over xpad = [0, 1, 2, 3, 4, 0, 0]
    x, w = T([[[1.0, 2.0, 3.0, 4.0]]], device), T([[[1.0, 10.0, 100.0, 1000.0]]], device)
    y = F.conv1d(x, w, padding="same")
    assert to_numpy(y).tolist() == [[[3210.0, 4321.0, 432.0, 43.0]]]
    assert F.conv2d(T(np.ones((1, 1, 5, 6)), device), T(np.ones((1, 1, 2, 4)), device),
                    padding="same").shape == (1, 1, 5, 6)
    with raises(RuntimeError, "padding='same' is not supported for strided convolutions"):
        F.conv1d(x, w, padding="same", stride=2)
    with raises(RuntimeError, "Invalid padding string: 'full'"):
        F.conv1d(x, w, padding="full")


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", [((2, 5), (2, 3)), ((1, 2, 5), (-1, 2)),
                                        ((2, 3, 4), (1, 2, 1, 0)), ((2, 3, 4, 5), (0, 2, -1, 1)),
                                        ((2, 3, 4, 5, 6), (1, 2, 3, 1, 2, 0))])
def test_pad_matches_torch(mode, shape, pad, device, rng):
    torch = pytest.importorskip("torch")
    xv, gv = rng.standard_normal(shape), None
    x, xt = T(xv, device, True), torch.tensor(xv, requires_grad=True)
    y, yt = F.pad(x, pad, mode=mode), torch.nn.functional.pad(xt, pad, mode=mode)
    np.testing.assert_array_equal(to_numpy(y), yt.detach().numpy())
    gv = rng.standard_normal(tuple(yt.shape))
    y.backward(T(gv, device))
    yt.backward(torch.tensor(gv))
    np.testing.assert_allclose(to_numpy(x.grad), xt.grad.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("dims, kw", [(1, dict(padding="same", padding_mode="circular")),
                                      (2, dict(padding=(1, 2), padding_mode="reflect")),
                                      (2, dict(padding="same", dilation=(1, 2),
                                               padding_mode="replicate")),
                                      (2, dict(padding="same"))])
def test_conv_padding_modes_match_torch(dims, kw, device, rng):
    torch = pytest.importorskip("torch")
    import warnings
    theirs = (torch.nn.Conv1d if dims == 1 else torch.nn.Conv2d)(2, 3, 4, **kw).double()
    ours = (nn.Conv1d if dims == 1 else nn.Conv2d)(2, 3, 4, **kw).to(device).double()
    assert repr(ours) == repr(theirs)
    with gpugrad.no_grad():
        ours.weight.copy_(T(theirs.weight.detach().numpy(), device))
        ours.bias.copy_(T(theirs.bias.detach().numpy(), device))
    xv = rng.standard_normal((2, 2) + (7, 6)[:dims])
    x, xt = T(xv, device, True), torch.tensor(xv, requires_grad=True)
    y = ours(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTorch's note on even kernels with 'same'
        yt = theirs(xt)
    np.testing.assert_allclose(to_numpy(y), yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    (y ** 2).sum().backward()
    (yt ** 2).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), xt.grad.numpy(), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.weight.grad), theirs.weight.grad.numpy(),
                               rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("cls", [nn.Conv1d, nn.Conv2d, nn.Conv3d])
def test_conv_modules_check_string_padding_when_built(cls):
    with pytest.raises(ValueError, match=r"^padding='same' is not supported for strided "
                                         r"convolutions$"):
        cls(2, 2, 3, padding="same", stride=2)
    with pytest.raises(ValueError, match=r"^Invalid padding string 'foo', should be one of "
                                         r"\{'valid', 'same'\}$"):
        cls(2, 2, 3, padding="foo")
    m = cls(2, 2, 3, padding="valid", stride=2)
    assert m.padding == "valid" and m.transposed is False
