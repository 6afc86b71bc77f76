"""Toy custom ``autograd.Function`` classes shared by the autograd tests."""
from __future__ import annotations

from gpugrad.autograd import Function


class Square(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * 2 * a
