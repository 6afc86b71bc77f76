"""Instance, RMS and local response normalisation: the functions and their modules, composed
from existing ops (instance norm is batch norm over a (1, N * C, ...) view, as PyTorch does)."""
from __future__ import annotations

import warnings

import numpy as np

from .. import _creation
from ..amp._state import state as _amp
from ..amp._state import upper as _upper
from ..autograd.grad_mode import no_grad
from ..ops import pointwise, shape
from ..ops.norm import batch_norm
from . import init
from .layers import _BatchNorm
from .module import Module
from .parameter import Parameter

__all__ = ["instance_norm", "rms_norm", "local_response_norm", "InstanceNorm1d",
           "InstanceNorm2d", "InstanceNorm3d", "RMSNorm", "LocalResponseNorm"]


# -- functions ----------------------------------------------------------------------------------
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
    y = input * pointwise.rsqrt((input * input).mean(axes, keepdim=True) + eps)
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
    padded = shape.cat([pads[0], sq, pads[1]], 1)
    window = padded.narrow(1, 0, c)
    for j in range(1, size):
        window = window + padded.narrow(1, j, c)
    div = (window * (alpha / size) + k) ** beta
    return input / div


# -- modules ------------------------------------------------------------------------------------
class _InstanceNorm(_BatchNorm):
    """Shared by InstanceNorm1d/2d/3d: no affine parameters and no running statistics unless
    asked; an unbatched input (one dimension fewer) is taken as a batch of one."""
    _no_batch = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias)

    def forward(self, input):
        dims = (self._no_batch, self._no_batch + 1)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D "
                             "input)")
        feature_dim = input.dim() - self._no_batch
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        unbatched = input.dim() == self._no_batch
        x = input.unsqueeze(0) if unbatched else input
        y = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                          self.training or not self.track_running_stats,
                          self.momentum if self.momentum is not None else 0.0, self.eps)
        return y.squeeze(0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or unbatched (C, L) input."""
    _no_batch = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or unbatched (C, H, W) input."""
    _no_batch = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or unbatched (C, D, H, W) input."""
    _no_batch = 4


class RMSNorm(Module):
    """Root-mean-square normalisation over the last dimensions, with a ``weight`` (ones)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                                 else tuple(normalized_shape))
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.register_parameter("weight", Parameter(_creation.empty(
            self.normalized_shape, device=device, dtype=dtype)) if elementwise_affine else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
