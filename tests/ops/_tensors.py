"""Float64 test tensors and index tensors for the ops tests, and reading results back as lists."""
from __future__ import annotations

import numpy as np
from conftest import tensor

import gpugrad


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(np.asarray(data), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def idx(data, device="cpu"):
    return gpugrad.tensor(np.asarray(data), device=device)


def _leaf(rng, shape, device, lo=-2.0, hi=2.0):
    return tensor(rng.uniform(lo, hi, shape), device, requires_grad=True)


X = [[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]


def values(t):
    return np.asarray(t.numpy()).tolist()


def same(a, b):
    np.testing.assert_array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, np.float64))
