"""Float64 test tensors for the nn tests, and reading them back as numpy arrays."""
from __future__ import annotations

import numpy as np
from conftest import tensor

import gpugrad


def arr(t):
    return t.detach().numpy()


def f64(a, requires_grad=False):
    return gpugrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def T(a, device, requires_grad=False):
    return tensor(np.asarray(a, dtype=np.float64), device, requires_grad=requires_grad)
