"""softmax and log_softmax, one op each."""
from __future__ import annotations

import builtins

from ... import _cpu_kernels, kernels
from ..._exports import export
from ...amp._state import state as _amp
from ...amp._state import upper as _upper
from ...tensor import as_dim, scalar_name
from .._op import Op
from .reduce import _axes, _cast


class SoftmaxBackward0(Op):
    """y = exp(x) / sum(exp(x), dim)"""
    __slots__ = ("axis",)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x, axis=-1):
        self.axis = axis
        if x.ndim and axis % x.ndim == x.ndim - 1 and (
                y := _cpu_kernels.call("softmax", x)) is not None:
            return y
        e = x - x.max(axis=axis, keepdims=True)
        xp.exp(e, out=e)
        e /= e.sum(axis=axis, keepdims=True)
        return e

    def backward(self, F, gy, y):
        if F.fast and y.ndim:   # arrays: one buffer, reused (a new one per pass page-faults)
            if self.axis % y.ndim == y.ndim - 1 and (
                    g := _cpu_kernels.call("softmax_bwd", y, gy)) is not None:
                return g
            g = gy * y
            s = g.sum(axis=self.axis, keepdims=True)
            F.subtract(gy, s, out=g)
            g *= y
            return g
        return y * (gy - F.sum(gy * y, axis=self.axis, keepdims=True))


class LogSoftmaxBackward0(Op):
    """y = x - logsumexp(x, dim)"""
    __slots__ = ("axis",)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x, axis=-1):
        self.axis = axis
        if x.ndim and axis % x.ndim == x.ndim - 1:   # rows: one kernel on the GPU
            return kernels.log_softmax(x)
        z = x - x.max(axis=axis, keepdims=True)
        return z - xp.log(xp.exp(z).sum(axis=axis, keepdims=True))

    def backward(self, F, gy, y):
        if F.fast and y.ndim and self.axis % y.ndim == y.ndim - 1:
            return kernels.log_softmax_bwd(y, gy)
        return gy - F.exp(y) * F.sum(gy, axis=self.axis, keepdims=True)


def _softmax_input(name, input, dim, dtype):
    """(input, axis): the input upcast under autocast or cast to dtype; PyTorch's error for an
    integer or bool input without a dtype."""
    if _amp.active:
        input, = _upper(input)
    input = _cast(input, dtype, name)
    if dim.__class__ is not int:
        dim = as_dim(dim)
    axis = _axes(dim, input.ndim)[0] if input.ndim else 0
    if input._data.dtype.kind in "biu":
        last = "lastdim_" if axis == builtins.max(input.ndim - 1, 0) else ""
        raise NotImplementedError(f'"{name}_{last}kernel_impl" not implemented for '
                                  f"'{scalar_name(input.dtype).capitalize()}'")
    return input, axis


@export("softmax", method=True)
def softmax(input, dim=None, dtype=None):
    input, axis = _softmax_input("softmax", input, dim, dtype)
    return SoftmaxBackward0.apply(input, axis=axis)


@export("log_softmax", method=True)
def log_softmax(input, dim=None, dtype=None):
    input, axis = _softmax_input("log_softmax", input, dim, dtype)
    return LogSoftmaxBackward0.apply(input, axis=axis)


OPS = [SoftmaxBackward0, LogSoftmaxBackward0]
