"""Float64 test tensors for the distributions tests."""
from __future__ import annotations

from conftest import tensor

import gpugrad

F64 = gpugrad.float64


def grad_tensor(data, device="cpu"):
    return tensor(data, device, F64, requires_grad=True)
