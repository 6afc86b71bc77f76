"""``gpugrad.nn.functional``: the stateless functions behind the layers; each calls ops."""
from __future__ import annotations

import warnings

from .._creation import int64, rand, zeros
from ..ops import activation, pointwise, reduce
from ..ops.conv import conv1d, conv2d, conv_transpose1d, conv_transpose2d
from ..ops.conv3d import conv3d, conv_transpose3d
from ..ops.ctc import ctc_loss
from ..ops.fractional import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ..ops.linalg import linear
from ..ops.loss import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ..ops.norm import batch_norm, layer_norm
from ..ops.padding import pad
from ..ops.pool import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    embedding_bag,
    max_pool1d,
    max_pool2d,
)
from ..ops.pool3d import (
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    max_pool3d,
    max_pool3d_with_indices,
)
from ..ops.resize import fold, interpolate, pixel_shuffle, pixel_unshuffle, unfold
from ..ops.sampling import affine_grid, grid_sample
from ..ops.select import embedding
from ..ops.unpool import (
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ..tensor_inplace import inplace as _inplace
from .activations_more import (
    celu_,
    elu_,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh_,
    leaky_relu_,
    rrelu,
    rrelu_,
    selu_,
    softshrink,
    softsign,
    tanhshrink,
    threshold,
    threshold_,
)
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .layers_extra import (
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    alpha_dropout,
    bilinear,
    channel_shuffle,
    dropout3d,
    feature_alpha_dropout,
    gumbel_softmax,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    pdist,
)
from .losses_more import (
    cosine_embedding_loss,
    gaussian_nll_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from .more_layers import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    celu,
    cosine_similarity,
    dropout1d,
    dropout2d,
    glu,
    group_norm,
    kl_div,
    logsigmoid,
    normalize,
    pairwise_distance,
    prelu,
    selu,
    softmin,
)
from .norm_more import instance_norm, local_response_norm, rms_norm

__all__ = ["linear", "relu", "relu_", "leaky_relu", "gelu", "silu", "tanh", "sigmoid", "softplus",
           "softmax", "log_softmax", "dropout", "mse_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy_with_logits", "one_hot", "layer_norm", "batch_norm",
           "embedding", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "elu", "hardtanh", "relu6", "mish", "conv1d", "conv2d", "max_pool2d",
           "avg_pool2d", "pad",
           "scaled_dot_product_attention", "multi_head_attention_forward", "group_norm",
           "dropout1d", "dropout2d", "prelu", "selu", "celu", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "normalize", "cosine_similarity", "pairwise_distance",
           "logsigmoid", "softmin", "glu", "kl_div",
           # convolution, pooling and resampling (ops/conv.py, pool.py, resize.py)
           "conv_transpose1d", "conv_transpose2d", "max_pool1d", "avg_pool1d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "interpolate", "upsample",
           "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle", "unfold",
           "fold", "embedding_bag",
           # more activations and their in-place forms (activations_more.py)
           "hardsigmoid", "hardswish", "hardshrink", "softshrink", "softsign", "tanhshrink",
           "threshold", "threshold_", "rrelu", "rrelu_", "elu_", "leaky_relu_", "hardtanh_",
           "selu_", "celu_",
           # normalisation (norm_more.py)
           "instance_norm", "rms_norm", "local_response_norm",
           # layers, dropouts, sampling and pooling aliases (layers_extra.py)
           "bilinear", "alpha_dropout", "feature_alpha_dropout", "dropout3d", "channel_shuffle",
           "gumbel_softmax", "pdist", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           # losses (losses_more.py)
           "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "gaussian_nll_loss", "poisson_nll_loss",
           # 3-D convolutions and pools, unpooling, Lp pools, spatial transformers
           "conv3d", "conv_transpose3d", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
           "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "affine_grid", "grid_sample",
           # CTC loss and fractional max pooling (ops/ctc.py, ops/fractional.py)
           "ctc_loss", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

tanh = pointwise.tanh
sigmoid = activation.sigmoid


def relu(input, inplace=False):
    return input.relu_() if inplace else activation.relu(input)


def relu_(input):
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _inplace(input, lambda t: activation.leaky_relu(t, negative_slope))
    return activation.leaky_relu(input, negative_slope)


def gelu(input, approximate="none"):
    return activation.gelu(input, approximate)


def silu(input, inplace=False):
    return _inplace(input, activation.silu) if inplace else activation.silu(input)


def softplus(input, beta=1.0, threshold=20.0):
    return activation.softplus(input, beta, threshold)


def elu(input, alpha=1.0, inplace=False):
    f = lambda t: activation.elu(t, alpha)   # noqa: E731
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
    f = lambda t: activation.hardtanh(t, min_val, max_val)   # noqa: E731
    return _inplace(input, f) if inplace else f(input)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def mish(input, inplace=False):
    return _inplace(input, activation.mish) if inplace else activation.mish(input)


def _softmax_dim(name, ndim, stacklevel):
    """The dimension PyTorch's deprecated ``dim=None`` picks (0 for 0-, 1- and 3-D input)."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  "include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return reduce.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return reduce.log_softmax(input, dim, dtype)


def dropout(input, p=0.5, training=True, inplace=False, *, generator=None):
    """input * mask / (1 - p), mask ~ Bernoulli(1 - p); the input itself when not training
    (the graph, as PyTorch's on CPU, is a MulBackward0 with the scaled mask)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        noise = zeros((), dtype=input.dtype, device=input.device)
    else:
        u = rand(input.shape, dtype=input.dtype, device=input.device, generator=generator)
        noise = (u < 1 - p).to(input.dtype) / (1 - p)
    return input.mul_(noise) if inplace else input * noise


def one_hot(tensor, num_classes=-1):
    """int64 tensor with a trailing dimension of size ``num_classes`` (not differentiable)."""
    from .._creation import arange, empty
    if tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return empty(tuple(tensor.shape) + (num_classes,), dtype=int64, device=tensor.device)
    if int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(tensor.max().item()) + 1
    elif num_classes <= int(tensor.max().item()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate`` (warns, as PyTorch)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
