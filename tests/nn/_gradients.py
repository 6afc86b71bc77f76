"""Gradients for the nn tests: of a sum, and gradcheck with gradgradcheck."""
from __future__ import annotations

from conftest import tensor, to_numpy

from gpugrad.autograd import gradcheck, gradgradcheck


def grads(fn, *arrays, device="cpu"):
    """fn's value and the gradients of its sum w.r.t. every input."""
    xs = [tensor(a, device, requires_grad=True) for a in arrays]
    y = fn(*xs)
    y.sum().backward()
    return to_numpy(y), [to_numpy(x.grad) for x in xs]


def _check_grads(f, args):
    assert gradcheck(f, args)
    assert gradgradcheck(f, args)
