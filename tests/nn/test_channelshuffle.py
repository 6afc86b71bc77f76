"""nn.ChannelShuffle and F.channel_shuffle."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad.nn as nn
import gpugrad.nn.functional as F


def test_channel_shuffle(device, rng):
    x = tensor(np.arange(12.0).reshape(1, 6, 2), device, requires_grad=True)
    y = F.channel_shuffle(x, 3)   # (3 groups of 2) -> channel order 0, 2, 4, 1, 3, 5
    np.testing.assert_array_equal(to_numpy(y)[0, :, 0], [0, 4, 8, 2, 6, 10])
    w = rng.standard_normal((1, 6, 2))
    (y * tensor(w, device)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad)[0, [0, 2, 4, 1, 3, 5]], w[0])
    assert to_numpy(nn.ChannelShuffle(2)(tensor(np.arange(4.0).reshape(1, 4, 1, 1),
                                                device))).ravel().tolist() == [0, 2, 1, 3]
    assert repr(nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"
    for args, msg in [(((2, 6, 3), 4), "Number of channels must be divisible by groups. Got 6 "
                                       "channels and 4 groups."),
                      (((2, 6, 3), 0), "Number of groups to divide channels in must be "
                                       "positive. Value of groups:0"),
                      (((2, 6), 2), "channel_shuffle expects input with > 2 dims, but got "
                                    "input with sizes [2, 6]")]:
        with pytest.raises(RuntimeError, match="^" + msg.replace("[", r"\[").replace(
                "]", r"\]").replace(".", r"\.") + "$"):
            F.channel_shuffle(tensor(np.ones(args[0])), args[1])
