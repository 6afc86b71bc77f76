"""Normalisation functions: batch and layer norm (ops), group, instance, RMS and local response
normalisation and ``normalize`` (instance norm is batch norm over a (1, N * C, ...) view, as
PyTorch does)."""
from __future__ import annotations

import math

import numpy as np

from ... import _creation
from ...amp._state import state as _amp
from ...amp._state import upper as _upper
from ...autograd.grad_mode import no_grad
from ...ops.nn.normalization import batch_norm, layer_norm
from ...ops.pointwise import unary
from ...ops.reduction import reduce as reduction_reduce
from ...ops.shape import joining

__all__ = ["batch_norm", "layer_norm", "group_norm", "normalize", "instance_norm", "rms_norm",
           "local_response_norm"]


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each group of ``C / num_groups`` channels (with everything after dim 1) of
    each sample, then scale and shift per channel."""
    if _amp.active:
        input, weight, bias = _upper(input, weight, bias)
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    rest = math.prod(input.shape[2:])
    if n * c // num_groups * rest == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {[n * c // num_groups, num_groups] + list(input.shape[2:])}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(p.shape)} "
                               f"and input of shape {list(input.shape)}")
    group = c // num_groups * rest
    y = layer_norm(input.reshape(n, num_groups, group), (group,), None, None, eps)
    y = y.reshape(input.shape)
    column = (c,) + (1,) * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(column)
    if bias is not None:
        y = y + bias.reshape(column)
    return y


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along ``dim``."""
    y = input / reduction_reduce.norm(input, p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return y if out is None else out.copy_(y)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalise each (sample, channel) slice over its spatial positions, then scale and shift
    per channel. With ``use_input_stats`` the running statistics (when given) move towards the
    batch's per-instance statistics averaged over the samples; without, they normalise."""
    if _amp.active:
        input, weight, bias = _upper(input, weight, bias)
    size = input.shape
    if use_input_stats and int(np.prod(size[2:])) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{size}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    if not use_input_stats and running_mean is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n = size[0]
    rep = lambda t: None if t is None else t.repeat(n)   # noqa: E731
    stats = (rep(running_mean), rep(running_var))
    y = batch_norm(input.reshape((1, -1) + tuple(size[2:])), *stats, rep(weight), rep(bias),
                   use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None:
        with no_grad():   # every sample moved its own copy: keep their mean
            for dst, src in zip((running_mean, running_var), stats):
                dst.copy_(src.reshape(n, -1).mean(0))
    return y.reshape(size)


def _check_normalized_shape(input, shape_):
    if not shape_:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    k = len(shape_)
    if k > input.dim():
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got "
                         f"{input.dim()}")
    if tuple(input.shape[input.dim() - k:]) != shape_:
        raise RuntimeError(f"Given normalized_shape={list(shape_)}, expected input with shape "
                           f"[*{', '.join(map(str, shape_))}], but got input of size"
                           f"{list(input.shape)}")


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """y = x / sqrt(mean(x^2) + eps) * weight, the mean over the last ``normalized_shape``
    dimensions; ``eps`` defaults to the machine epsilon of the input's dtype."""
    if _amp.active:
        input, weight = _upper(input, weight)
    shape_ = ((normalized_shape,) if isinstance(normalized_shape, int)
              else tuple(normalized_shape))
    _check_normalized_shape(input, shape_)
    if weight is not None and tuple(weight.shape) != shape_:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got "
                           f"weight of shape {list(weight.shape)} and normalized_shape = "
                           f"{list(shape_)}")
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    axes = tuple(range(input.dim() - len(shape_), input.dim()))
    y = input * unary.rsqrt((input * input).mean(axes, keepdim=True) + eps)
    return y if weight is None else y * weight


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """y = x / (k + alpha / size * sum of x^2 over ``size`` neighbouring channels)^beta; the
    window is centred (size // 2 before, (size - 1) // 2 after) and zero-padded."""
    if _amp.active:
        input, = _upper(input)
    dim = input.dim()
    if dim < 3:
        # NOTE: the run of spaces is PyTorch's message, word for word
        raise ValueError(f"Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    kw = dict(dtype=input.dtype, device=input.device)
    pads = [_creation.zeros((input.shape[0], p) + tuple(input.shape[2:]), **kw)
            for p in (size // 2, (size - 1) // 2)]
    padded = joining.cat([pads[0], sq, pads[1]], 1)
    window = padded.narrow(1, 0, c)
    for j in range(1, size):
        window = window + padded.narrow(1, j, c)
    div = (window * (alpha / size) + k) ** beta
    return input / div
