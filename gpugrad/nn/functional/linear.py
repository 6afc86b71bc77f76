"""Bilinear, alpha dropout (elementwise and per channel), Dropout3d, channel shuffle, Gumbel
softmax, pdist and the ``*_with_indices`` pooling aliases; each composed from existing ops."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _creation
from ..autograd.grad_mode import no_grad
from ..ops import pointwise, reduce
from ..ops.einsum import einsum
from ..ops.pool import adaptive_max_pool1d, adaptive_max_pool2d, max_pool1d, max_pool2d
from ..tensor_inplace import inplace as _inplace
from . import init
from .module import Module
from .more_layers import _check_channel_dropout, _DropoutNd, _feature_dropout
from .parameter import Parameter

__all__ = ["bilinear", "alpha_dropout", "feature_alpha_dropout", "dropout3d", "channel_shuffle",
           "gumbel_softmax", "pdist", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "Bilinear", "AlphaDropout", "FeatureAlphaDropout", "Dropout3d", "ChannelShuffle"]

# -SELU's alpha * scale: the value alpha dropout sets dropped units to before the affine fix-up
_ALPHA = 1.7580993408473766


# -- functions ----------------------------------------------------------------------------------
def bilinear(input1, input2, weight, bias=None):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")
    y = einsum("...i,oij,...j->...o", input1, weight, input2)
    return y if bias is None else y + bias


def _alpha_dropout(input, p, training, inplace, feature):
    """Keep each unit (or, with ``feature``, each channel) with probability 1 - p and set the
    rest to -alpha; then a x + b restores zero mean and unit variance of SELU activations:
    a = 1 / sqrt((alpha^2 p + 1)(1 - p)), b = a alpha (keep - 1 + p)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = _creation.zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(zero) if inplace else input * zero
    if feature and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    size = (tuple(input.shape[:2]) + (1,) * (input.dim() - 2)) if feature else input.shape
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    with no_grad():
        keep = (_creation.rand(size, dtype=input.dtype, device=input.device) < 1 - p)
        keep = keep.to(input.dtype)
        scale, shift = keep * a, (keep - 1 + p) * (_ALPHA * a)
    f = lambda t: t * scale + shift   # noqa: E731
    return _inplace(input, f) if inplace else f(input)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps the self-normalising property of SELU networks."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1)."""
    return _alpha_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, D, H, W) or unbatched (C, D, H, W) input."""
    d = _check_channel_dropout(input, p, 3)
    if d == 5:
        return _feature_dropout(input, p, training, inplace)
    if d >= 2:   # unbatched: dim 0 holds the channels
        return _feature_dropout(input, p, training, inplace, 0)
    y = _feature_dropout(input.unsqueeze(0), p, training, False).squeeze(0)
    return input.copy_(y) if inplace else y


def channel_shuffle(input, groups):
    """Regroup the C channels as (groups, C / groups), transpose to (C / groups, groups)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, rest = input.shape[0], input.shape[1], tuple(input.shape[2:])
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    y = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return y.reshape(input.shape)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1) from the default generator. ``hard``:
    the one-hot of the argmax in the forward pass, the soft sample's gradient in the backward
    (y_hard - y_soft.detach() + y_soft)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with no_grad():
        gumbels = -pointwise.log(_creation.empty(logits.shape, dtype=logits.dtype,
                                                 device=logits.device).exponential_())
    y_soft = reduce.softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros(logits.shape, dtype=logits.dtype, device=logits.device)
    y_hard = y_hard.scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def pdist(input, p=2):
    """||x_i - x_j||_p for every pair of rows i < j, in row-major order of (i, j)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input.shape[0], 1)   # from the shape alone: no device read
    idx = lambda a: _creation.tensor(a, dtype=_creation.long, device=input.device)  # noqa
    diff = input.index_select(0, idx(rows)) - input.index_select(0, idx(cols))
    return reduce.norm(diff, p, 1)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool1d(..., return_indices=True)``: (values, indices)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool2d(..., return_indices=True)``: (values, indices)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d(..., return_indices=True)``: (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d(..., return_indices=True)``: (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)


# -- modules ------------------------------------------------------------------------------------
class Bilinear(Module):
    """y = x1^T A x2 + b, A of shape (out_features, in1_features, in2_features); weight and
    bias start U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        kw = dict(device=device, dtype=dtype)
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features),
                                                **kw))
        self.register_parameter("bias", Parameter(_creation.empty(out_features, **kw))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class AlphaDropout(_DropoutNd):
    """Alpha dropout in training mode, the identity in eval mode."""
    _fn = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels in training mode."""
    _fn = staticmethod(feature_alpha_dropout)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) input in training mode."""
    _fn = staticmethod(dropout3d)


class ChannelShuffle(Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
