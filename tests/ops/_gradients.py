"""Gradients in the ops tests: one backward pass read back as lists, and gradcheck with
gradgradcheck at the ops tests' tolerances."""
from __future__ import annotations

from conftest import to_numpy

from gpugrad.autograd import gradcheck, gradgradcheck
from tests.ops._tensors import t


def grad_of(fn, data, device, gy=None):
    """fn(x).backward(gy) for x = data (float64, on device); returns (value, x.grad) as lists."""
    x = t(data, device, True)
    y = fn(x)
    y.backward(None if gy is None else t(gy, device))
    return to_numpy(y.detach()).tolist(), to_numpy(x.grad).tolist()


def _check_grads(fn, *inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5)
