"""F.unfold / F.fold and nn.Unfold / nn.Fold: values, shapes, modules, errors and agreement
with PyTorch (with pixel shuffle)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from tests.nn._errors import raises
from tests.nn._parity import _oracle
from tests.nn._tensors import T


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
