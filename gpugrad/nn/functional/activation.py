"""Further activations and the functions behind them: hardsigmoid, hardswish, hardshrink,
softshrink, softsign, tanhshrink, threshold, RReLU and Softmax2d, plus the in-place ``F.*_``
variants PyTorch has. Each is composed from existing ops; the ``where`` branches are written so
that the gradient at a kink is the one PyTorch's kernel gives."""
from __future__ import annotations

import numpy as np

from .. import _creation
from ..autograd.grad_mode import no_grad
from ..ops import activation, pointwise, reduce
from ..tensor_inplace import inplace as _inplace
from .module import Module
from .more_layers import celu, selu

__all__ = ["hardsigmoid", "hardswish", "hardshrink", "softshrink", "softsign", "tanhshrink",
           "threshold", "threshold_", "rrelu", "rrelu_", "elu_", "leaky_relu_", "hardtanh_",
           "selu_", "celu_",
           "Hardsigmoid", "Hardswish", "Hardshrink", "Softshrink", "Softsign", "Tanhshrink",
           "Threshold", "RReLU", "Softmax2d"]

_DTYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}


def _maybe_inplace(input, f, inplace):
    """f(input), or written back into ``input`` (what f's inner nodes saved from the input
    stays valid: the in-place machinery gives them a private copy)."""
    return _inplace(input, f) if inplace else f(input)


# -- functions ----------------------------------------------------------------------------------
def hardsigmoid(input, inplace=False):
    """y = min(max(x + 3, 0), 6) / 6   (gradient 1/6 strictly inside (-3, 3), as PyTorch)."""
    f = lambda t: activation.hardtanh(t + 3.0, 0.0, 6.0) / 6.0   # noqa: E731
    return _maybe_inplace(input, f, inplace)


def hardswish(input, inplace=False):
    """y = x * min(max(x + 3, 0), 6) / 6. NOTE: PyTorch's gradient is 0 for x <= -3,
    x / 3 + 1/2 for -3 < x < 3 and 1 for x >= 3; the branches below give exactly that."""
    def f(t):
        inner = pointwise.where(t < 3.0, t * (t + 3.0) / 6.0, t)
        return pointwise.where(t <= -3.0, 0.0, inner)
    return _maybe_inplace(input, f, inplace)


def hardshrink(input, lambd=0.5):
    """y = x where |x| > lambd else 0."""
    return pointwise.where((input >= -lambd) & (input <= lambd), 0.0, input)


def softshrink(input, lambd=0.5):
    """y = x - lambd where x > lambd, x + lambd where x < -lambd, else 0."""
    if input.dtype.kind == "f":
        top = float(np.finfo(input.dtype).max)
        if not 0 <= lambd <= top:
            name = _DTYPE_NAMES.get(input.dtype.name, input.dtype.name)
            raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {name}, "
                               f"but found {lambd:g}")
    low = pointwise.where(input < -lambd, input + lambd, 0.0)
    return pointwise.where(input > lambd, input - lambd, low)


def softsign(input):
    """y = x / (1 + |x|)."""
    return input / (pointwise.abs(input) + 1)


def tanhshrink(input):
    """y = x - tanh(x)."""
    return input - pointwise.tanh(input)


def threshold(input, threshold, value, inplace=False):
    """y = x where x > threshold else value (gradient 0 at x == threshold)."""
    if input.dtype.kind == "b":
        raise NotImplementedError('"threshold_cpu" not implemented for \'Bool\'')
    if input.dtype.kind in "iu":   # integers stay integers: both scalars truncate to the type
        threshold, value = int(threshold), int(value)
    f = lambda t: pointwise.where(t > threshold, t, value)   # noqa: E731
    return _maybe_inplace(input, f, inplace)


def threshold_(input, threshold, value):
    return _threshold(input, threshold, value, True)


_threshold = threshold


def _rrelu_check(lower, upper):
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Training: y = x where x > 0 else a x, a ~ U(lower, upper) drawn per element from the
    default generator. Eval: the mean slope (lower + upper) / 2 (a leaky ReLU)."""
    _rrelu_check(lower, upper)
    if not training:
        slope = (lower + upper) / 2
        return _maybe_inplace(input, lambda t: activation.leaky_relu(t, slope), inplace)
    with no_grad():   # the slopes are constants of the graph, as PyTorch's saved noise
        u = _creation.rand(input.shape, dtype=input.dtype, device=input.device)
        noise = pointwise.where(input > 0, 1.0, u * (upper - lower) + lower)
    return _maybe_inplace(input, lambda t: t * noise, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def elu_(input, alpha=1.0):
    return _inplace(input, lambda t: activation.elu(t, alpha))


def leaky_relu_(input, negative_slope=0.01):
    return _inplace(input, lambda t: activation.leaky_relu(t, negative_slope))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace(input, lambda t: activation.hardtanh(t, min_val, max_val))


def selu_(input):
    return _maybe_inplace(input, selu, True)


def celu_(input, alpha=1.0):
    return _maybe_inplace(input, lambda t: celu(t, alpha), True)


# -- modules ------------------------------------------------------------------------------------
class _Inplace(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_Inplace):
    def forward(self, input):
        return hardsigmoid(input, self.inplace)


class Hardswish(_Inplace):
    def forward(self, input):
        return hardswish(input, self.inplace)


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return softshrink(input, self.lambd)


class Softsign(Module):
    def forward(self, input):
        return softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return tanhshrink(input)


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return (f"threshold={self.threshold}, value={self.value}"
                + (", inplace=True" if self.inplace else ""))


class RReLU(Module):
    """Randomised leaky ReLU: a random negative slope in training, the mean one in eval."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                            else "")


class Softmax2d(Module):
    """Softmax over the channels (dim -3) of (N, C, H, W) or (C, H, W) input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return reduce.softmax(input, -3)
