"""Float64 test tensors for the autograd tests."""
from __future__ import annotations

import gpugrad


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
