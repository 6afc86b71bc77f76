"""nn.PixelShuffle / PixelUnshuffle and their F forms: values, shapes and errors."""
from __future__ import annotations

import numpy as np
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from tests.nn._errors import raises
from tests.nn._tensors import T


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
