"""The built-in data sets (gpugrad.datasets)."""
from __future__ import annotations

import numpy as np
import pytest

import gpugrad
from gpugrad import datasets


# -- built-in data sets ---------------------------------------------------------------------------
def test_spirals_are_deterministic_and_balanced():
    a, b = datasets.load("spirals"), datasets.load("spirals")
    assert all(np.array_equal(u.numpy(), v.numpy()) for u, v in zip(a, b))
    assert a.x_train.shape == (2250, 2) and a.x_test.shape == (750, 2)
    assert a.x_train.dtype == gpugrad.float32 and a.y_train.dtype == gpugrad.int64
    assert np.bincount(np.concatenate([a.y_train.numpy(), a.y_test.numpy()])).tolist() == [1000] * 3
    assert not np.array_equal(datasets.load("spirals", seed=1).x_train.numpy(), a.x_train.numpy())
    assert datasets.load("moons").y_train.max().item() == 1
    with pytest.raises(ValueError, match="unknown data set 'mnist'"):
        datasets.load("mnist")
