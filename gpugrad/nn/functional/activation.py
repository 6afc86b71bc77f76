"""Activation functions: ReLU and its relatives, the sigmoid/tanh family, the shrinks and
thresholds, (log-)softmax, softmin, Gumbel softmax and GLU, with PyTorch's in-place ``F.*_``
variants. Each is composed from existing ops; the ``where`` branches are written so that the
gradient at a kink is the one PyTorch's kernel gives."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _creation
from ...autograd.grad_mode import no_grad
from ...ops.nn import activation as nn_activation
from ...ops.pointwise import minmax, unary
from ...ops.reduction import reduce as reduction_reduce
from ...ops.reduction import softmax as reduction_softmax
from ...tensor_inplace import inplace as _inplace

__all__ = ["tanh", "sigmoid", "relu", "relu_", "leaky_relu", "gelu", "silu", "softplus", "elu",
           "hardtanh", "relu6", "mish", "softmax", "log_softmax", "prelu", "selu", "celu",
           "logsigmoid", "softmin", "glu", "hardsigmoid", "hardswish", "hardshrink", "softshrink",
           "softsign", "tanhshrink", "threshold", "threshold_", "rrelu", "rrelu_", "elu_",
           "leaky_relu_", "hardtanh_", "selu_", "celu_", "gumbel_softmax"]


tanh = unary.tanh
sigmoid = nn_activation.sigmoid


def relu(input, inplace=False):
    return input.relu_() if inplace else nn_activation.relu(input)


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _inplace(input, lambda t: nn_activation.leaky_relu(t, negative_slope))
    return nn_activation.leaky_relu(input, negative_slope)


def gelu(input, approximate="none"):
    return nn_activation.gelu(input, approximate)


def silu(input, inplace=False):
    return _inplace(input, nn_activation.silu) if inplace else nn_activation.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    return nn_activation.softplus(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):
    f = lambda t: nn_activation.elu(t, alpha)   # noqa: E731
    return _inplace(input, f) if inplace else f(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    kind = input.dtype.kind
    if kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if kind in "iu":   # integers stay integers: the limits are truncated to the input's type
        if kind == "u" and (min_val < 0 or max_val < 0):
            raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
        lo, hi = int(min_val), int(max_val)
        return input.clamp_(lo, hi) if inplace else input.clamp(lo, hi)
    f = lambda t: nn_activation.hardtanh(t, min_val, max_val)   # noqa: E731
    return _inplace(input, f) if inplace else f(input)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def mish(input, inplace=False):
    return _inplace(input, nn_activation.mish) if inplace else nn_activation.mish(input)


def _softmax_dim(name, ndim, stacklevel):
    """The dimension PyTorch's deprecated ``dim=None`` picks (0 for 0-, 1- and 3-D input)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return reduction_softmax.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return reduction_softmax.log_softmax(input, dim, dtype)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def prelu(input, weight):
    """y = x where x > 0 else weight * x, one weight per channel (dim 1) or one for all."""
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    channels = input.shape[1] if input.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = "
                           f"{channels}.")
    w = weight.reshape(()) if weight.numel() == 1 else weight.reshape(
        (channels,) + (1,) * (input.dim() - 2))
    return minmax.where(input > 0, input, w * input)


def selu(input, inplace=False):
    """y = scale * elu(x, alpha), with the self-normalising constants."""
    f = lambda t: nn_activation.elu(t, _SELU_ALPHA) * _SELU_SCALE   # noqa: E731
    return _inplace(input, f) if inplace else f(input)


def celu(input, alpha=1.0, inplace=False):
    """y = x where x > 0 else alpha * (exp(x / alpha) - 1)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    f = lambda t: minmax.where(t > 0, t, nn_activation.elu(t * (1.0 / alpha), alpha))  # noqa
    return _inplace(input, f) if inplace else f(input)


def logsigmoid(input):
    """y = log(sigmoid(x)) = -softplus(-x), computed without overflow."""
    return -nn_activation.softplus(-input, 1.0, math.inf)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return reduction_softmax.softmax(-input, dim, dtype)


def glu(input, dim=-1):
    """a * sigmoid(b), with a and b the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    (d,) = reduction_reduce._axes(dim, input.dim())   # PyTorch's error for a dim out of range
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * nn_activation.sigmoid(b)


_DTYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}


def _maybe_inplace(input, f, inplace):
    """f(input), or written back into ``input`` (what f's inner nodes saved from the input
    stays valid: the in-place machinery gives them a private copy)."""
    return _inplace(input, f) if inplace else f(input)


def hardsigmoid(input, inplace=False):
    """y = min(max(x + 3, 0), 6) / 6   (gradient 1/6 strictly inside (-3, 3), as PyTorch)."""
    f = lambda t: nn_activation.hardtanh(t + 3.0, 0.0, 6.0) / 6.0   # noqa: E731
    return _maybe_inplace(input, f, inplace)


def hardswish(input, inplace=False):
    """y = x * min(max(x + 3, 0), 6) / 6. NOTE: PyTorch's gradient is 0 for x <= -3,
    x / 3 + 1/2 for -3 < x < 3 and 1 for x >= 3; the branches below give exactly that."""
    def f(t):
        inner = minmax.where(t < 3.0, t * (t + 3.0) / 6.0, t)
        return minmax.where(t <= -3.0, 0.0, inner)
    return _maybe_inplace(input, f, inplace)


def hardshrink(input, lambd=0.5):
    """y = x where |x| > lambd else 0."""
    return minmax.where((input >= -lambd) & (input <= lambd), 0.0, input)


def softshrink(input, lambd=0.5):
    """y = x - lambd where x > lambd, x + lambd where x < -lambd, else 0."""
    if input.dtype.kind == "f":
        top = float(np.finfo(input.dtype).max)
        if not 0 <= lambd <= top:
            name = _DTYPE_NAMES.get(input.dtype.name, input.dtype.name)
            raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {name}, "
                               f"but found {lambd:g}")
    low = minmax.where(input < -lambd, input + lambd, 0.0)
    return minmax.where(input > lambd, input - lambd, low)


def softsign(input):
    """y = x / (1 + |x|)."""
    return input / (unary.abs(input) + 1)


def tanhshrink(input):
    """y = x - tanh(x)."""
    return input - unary.tanh(input)


def threshold(input, threshold, value, inplace=False):
    """y = x where x > threshold else value (gradient 0 at x == threshold)."""
    if input.dtype.kind == "b":
        raise NotImplementedError('"threshold_cpu" not implemented for \'Bool\'')
    if input.dtype.kind in "iu":   # integers stay integers: both scalars truncate to the type
        threshold, value = int(threshold), int(value)
    f = lambda t: minmax.where(t > threshold, t, value)   # noqa: E731
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
        return _maybe_inplace(input, lambda t: nn_activation.leaky_relu(t, slope), inplace)
    with no_grad():   # the slopes are constants of the graph, as PyTorch's saved noise
        u = _creation.rand(input.shape, dtype=input.dtype, device=input.device)
        noise = minmax.where(input > 0, 1.0, u * (upper - lower) + lower)
    return _maybe_inplace(input, lambda t: t * noise, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return rrelu(input, lower, upper, training, True)


def elu_(input, alpha=1.0):
    return _inplace(input, lambda t: nn_activation.elu(t, alpha))


def leaky_relu_(input, negative_slope=0.01):
    return _inplace(input, lambda t: nn_activation.leaky_relu(t, negative_slope))


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace(input, lambda t: nn_activation.hardtanh(t, min_val, max_val))


def selu_(input):
    return _maybe_inplace(input, selu, True)


def celu_(input, alpha=1.0):
    return _maybe_inplace(input, lambda t: celu(t, alpha), True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) from the default generator. ``hard``:
    the one-hot of the argmax in the forward pass, the soft sample's gradient in the backward
    (y_hard - y_soft.detach() + y_soft)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with no_grad():
        gumbels = -unary.log(_creation.empty(logits.shape, dtype=logits.dtype,
                                                 device=logits.device).exponential_())
    y_soft = reduction_softmax.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros(logits.shape, dtype=logits.dtype, device=logits.device)
    y_hard = y_hard.scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
