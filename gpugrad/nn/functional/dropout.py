"""Dropout functions: elementwise, per channel (1-, 2- and 3-D) and alpha dropout (elementwise
and per channel)."""
from __future__ import annotations

import math
import warnings

from ... import _creation
from ..._creation import rand, zeros
from ...autograd.grad_mode import no_grad
from ...tensor_inplace import inplace as _inplace

__all__ = ["dropout", "dropout1d", "dropout2d", "alpha_dropout", "feature_alpha_dropout",
           "dropout3d"]


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


# -SELU's alpha * scale: the value alpha dropout sets dropped units to before the affine fix-up
_ALPHA = 1.7580993408473766


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
