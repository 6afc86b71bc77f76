"""nn.Flatten and nn.Unflatten."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
from tests.nn._errors import _raises


def test_unflatten():
    x = gpugrad.arange(120.0).reshape(4, 6, 5)
    for dim, size, want in [(1, (2, 3), (4, 2, 3, 5)), (1, (2, -1), (4, 2, 3, 5)),
                            (-1, (5, 1), (4, 6, 5, 1)), (0, [2, 2], (2, 2, 6, 5))]:
        y = nn.Unflatten(dim, size)(x)
        assert y.shape == want
        np.testing.assert_array_equal(to_numpy(y).ravel(), to_numpy(x).ravel())
    assert repr(nn.Unflatten(1, (2, 3))) == "Unflatten(dim=1, unflattened_size=(2, 3))"
    with pytest.raises(RuntimeError, match=r"Provided sizes \[4, -1\] don't multiply up to the "
                                           r"size of dim 1 \(6\)"):
        nn.Unflatten(1, (4, -1))(x)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints, but found type"):
        nn.Unflatten(1, 2)
    with pytest.raises(TypeError, match="found element of type float at pos 1"):
        nn.Unflatten(1, (2, 1.5))


def test_flatten_module_checks_dims():
    with _raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                             "got 2)"):
        nn.Flatten(2)(gpugrad.ones(2, 3))
    assert tuple(nn.Flatten()(gpugrad.ones(2, 3, 4)).shape) == (2, 12)
