"""Autocast in the amp tests: the dtypes, a float16 autocast region on a device, and test tensors
(float32 unless told)."""
from __future__ import annotations

import numpy as np
from conftest import tensor

import gpugrad
from gpugrad import amp

F16, F32, F64 = gpugrad.float16, gpugrad.float32, gpugrad.float64


def autocast(device):
    return amp.autocast(device, dtype=F16)


def T(a, device, dtype=F32, requires_grad=False):
    return tensor(np.asarray(a), device, dtype, requires_grad)
