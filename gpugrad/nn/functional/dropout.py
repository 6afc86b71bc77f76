"""More layers and the functions behind them: group norm, channel dropout, PReLU, SELU, CELU,
adaptive average pooling, Unflatten, normalize, cosine similarity, pairwise distance,
logsigmoid, softmin, GLU and the KL-divergence loss; each composed from existing ops."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _creation
from ..amp._state import state as _amp
from ..amp._state import upper as _upper
from ..autograd.grad_mode import no_grad
from ..ops import activation, pointwise, reduce, select
from ..ops._op import broadcast_error
from ..ops.extra import broadcast_tensors
from ..ops.linalg import matmul
from ..ops.loss import _check_reduction, _legacy_reduction
from ..ops.norm import layer_norm
from ..tensor_inplace import inplace as _inplace
from . import init
from .layers import _InplaceActivation
from .module import Module
from .parameter import Parameter

__all__ = ["group_norm", "dropout1d", "dropout2d", "prelu", "selu", "celu",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "normalize", "cosine_similarity",
           "pairwise_distance", "logsigmoid", "softmin", "glu", "kl_div",
           "GroupNorm", "Dropout1d", "Dropout2d", "PReLU", "SELU", "CELU", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "Unflatten", "CosineSimilarity", "PairwiseDistance",
           "LogSigmoid", "Softmin", "GLU", "KLDivLoss"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# -- functions ----------------------------------------------------------------------------------
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


def _feature_dropout(input, p, training, inplace, channel_dim=1):
    """Zero whole channels (``channel_dim``, every later position together) with probability
    ``p`` and scale the rest by 1 / (1 - p)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not training or p == 0:
        return input
    size = tuple(input.shape[:channel_dim + 1]) + (1,) * (input.dim() - channel_dim - 1)
    if p == 1:
        noise = _creation.zeros(size, dtype=input.dtype, device=input.device)
    else:
        u = _creation.rand(size, dtype=input.dtype, device=input.device)
        noise = (u < 1 - p).to(input.dtype) / (1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, L) or unbatched (C, L) input."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 1 if input.dim() == 3 else 0)


def _check_channel_dropout(input, p, spatial):
    """PyTorch's checks of dropout{spatial}d (2 or 3): p in [0, 1]; a warning for an input
    that is neither batched nor unbatched (C, *spatial) (the input's rank is returned)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    d, name = input.dim(), f"dropout{spatial}d"
    if d not in (spatial + 1, spatial + 2):
        warnings.warn(f"{name}: Received a {d}-D input to {name}, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and "
                      f"silence this warning, please use dropout instead. Note that {name} "
                      f"exists to provide channel-wise dropout on inputs with {spatial} spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{spatial + 1}D or {spatial + 2}D inputs).", stacklevel=3)
    return d


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Channel dropout of (N, C, H, W) input. As PyTorch, a 3-D input is taken as (N, C, L)."""
    d = _check_channel_dropout(input, p, 2)
    if d == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, "
                      "H, W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


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
    return pointwise.where(input > 0, input, w * input)


def selu(input, inplace=False):
    """y = scale * elu(x, alpha), with the self-normalising constants."""
    f = lambda t: activation.elu(t, _SELU_ALPHA) * _SELU_SCALE   # noqa: E731
    return _inplace(input, f) if inplace else f(input)


def celu(input, alpha=1.0, inplace=False):
    """y = x where x > 0 else alpha * (exp(x / alpha) - 1)."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    f = lambda t: pointwise.where(t > 0, t, activation.elu(t * (1.0 / alpha), alpha))  # noqa
    return _inplace(input, f) if inplace else f(input)


def _pool_matrix(size, out, like):
    """(out, size): row i averages PyTorch's adaptive bin [floor(i size / out),
    ceil((i + 1) size / out))."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -(-(i + 1) * size // out)
        m[i, start:end] = 1.0 / (end - start)
    return _creation.tensor(m, dtype=like.dtype, device=like.device)


def adaptive_avg_pool1d(input, output_size):
    """Average over ``output_size`` adaptive bins of the last dimension of (N, C, L) or (C, L)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    return matmul(input, _pool_matrix(input.shape[-1], output_size, input).mT)


def adaptive_avg_pool2d(input, output_size):
    """Average over adaptive bins of the last two dimensions of (N, C, H, W) or (C, H, W);
    ``None`` in ``output_size`` keeps that dimension's size."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    size = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    h, w = input.shape[-2:]
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    # the bins are rectangles, so the average is P_h @ x @ P_w^T
    return matmul(matmul(_pool_matrix(h, oh, input), input), _pool_matrix(w, ow, input).mT)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """x / max(||x||_p, eps) along ``dim``."""
    y = input / reduce.norm(input, p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return y if out is None else out.copy_(y)


def _broadcast(x1, x2):
    try:
        return broadcast_tensors(x1, x2)
    except ValueError as e:
        raise broadcast_error(e, (x1._data, x2._data)) from None


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` (broadcast first)."""
    x1, x2 = _broadcast(x1, x2)

    def unit(x):
        n = reduce.norm(x, 2, dim, keepdim=True)
        # NOTE: PyTorch clamps the norm in place under no_grad, so the clamp has no gradient
        with no_grad():
            lift = n.clamp(min=eps) - n
        return x / (n + lift)
    return (unit(x1) * unit(x2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    last = max(x1.dim(), x2.dim()) - 1
    return reduce.norm(x1 - x2 + eps, p, last, keepdim)


def logsigmoid(input):
    """y = log(sigmoid(x)) = -softplus(-x), computed without overflow."""
    return -activation.softplus(-input, 1.0, math.inf)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim``."""
    if dim is None:
        from .functional import _softmax_dim  # functional imports this module
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return reduce.softmax(-input, dim, dtype)


def glu(input, dim=-1):
    """a * sigmoid(b), with a and b the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    (d,) = reduce._axes(dim, input.dim())   # PyTorch's error for a dim out of range
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    a, b = input.chunk(2, d)
    return a * activation.sigmoid(b)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log(target) - input) (input holds log-probabilities; with ``log_target`` so
    does target). 'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction != "batchmean":
        _check_reduction(reduction)
    if input.dtype.kind in "iub" or target.dtype.kind in "iub":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = pointwise.exp(target) * (target - input)
    else:   # xlogy(t, t): 0 where t == 0
        loss = (target * pointwise.log(select.masked_fill(target, target == 0, 1.0))
                - target * input)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    total = loss.sum()
    return total / input.shape[0] if reduction == "batchmean" and input.dim() else total


# -- modules ------------------------------------------------------------------------------------
class GroupNorm(Module):
    """Group normalisation with a per-channel ``weight`` (ones) and ``bias`` (zeros)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        kw = dict(device=device, dtype=dtype)
        self.register_parameter(
            "weight", Parameter(_creation.empty(num_channels, **kw)) if affine else None)
        self.register_parameter(
            "bias", Parameter(_creation.empty(num_channels, **kw)) if affine and bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _DropoutNd(Module):
    _fn = staticmethod(dropout2d)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) / (C, L) input in training mode."""
    _fn = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) input in training mode."""
    _fn = staticmethod(dropout2d)


class PReLU(Module):
    """x where x > 0 else a * x, with a learnt ``weight`` of ``num_parameters`` slopes."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class SELU(_InplaceActivation):
    def forward(self, input):
        return selu(input, self.inplace)


class CELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)


class Unflatten(Module):
    """Expand dimension ``dim`` into ``unflattened_size`` (one entry may be -1)."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                            f"{type(unflattened_size).__name__}")
        for idx, elem in enumerate(unflattened_size):
            if not isinstance(elem, int):
                raise TypeError(f"unflattened_size must be tuple of ints, but found element of "
                                f"type {type(elem).__name__} at pos {idx}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        d = self.dim % input.dim()
        sizes = list(self.unflattened_size)
        n = input.shape[d]
        known = math.prod(s for s in sizes if s != -1)
        if -1 in sizes and known and n % known == 0:
            sizes[sizes.index(-1)] = n // known
        if math.prod(sizes) != n or -1 in sizes:
            raise RuntimeError(f"unflatten: Provided sizes {list(self.unflattened_size)} don't "
                               f"multiply up to the size of dim {self.dim} ({n}) in the input "
                               "tensor")
        return input.reshape(tuple(input.shape[:d]) + tuple(sizes) + tuple(input.shape[d + 1:]))

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class CosineSimilarity(Module):
    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class LogSigmoid(Module):
    def forward(self, input):
        return logsigmoid(input)


class Softmin(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class KLDivLoss(Module):
    """KL divergence of ``target`` from the log-probabilities ``input``."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        self.reduction = _legacy_reduction(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
