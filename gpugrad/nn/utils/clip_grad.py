"""Gradient clipping, as ``torch.nn.utils.clip_grad``: the joint norm of many tensors, scaling
gradients by ``min(1, max_norm / (norm + 1e-6))``, and clamping them elementwise."""
from __future__ import annotations

import math
import types
import warnings

from ..._creation import tensor
from ...autograd.grad_mode import no_grad
from ...ops.reduction.reduce import norm
from ...ops.shape.joining import stack
from ...tensor import Tensor


def _tensors(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _grads(parameters):
    return [p.grad for p in _tensors(parameters) if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all entries of ``tensors`` taken as one vector: the norm of the
    vector of the per-tensor norms. ``foreach`` is accepted and ignored."""
    tensors = _tensors(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        device = tensors[0].device
        if norm_type == math.inf:
            norms = [t.abs().max().to(device) for t in tensors]
            total = norms[0] if len(norms) == 1 else stack(norms).max()
        else:   # -inf too: the smallest per-tensor minimum, as PyTorch's norm of norms
            norms = [norm(t, norm_type).to(device) for t in tensors]
            total = norm(stack(norms), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. To disable this error and scale the "
            "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Multiply every gradient in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    grads = _grads(parameters)
    if not grads:
        return
    with no_grad():
        # NOTE: multiplied even when the scale is 1, as PyTorch does (no host sync on the GPU)
        scale = (float(max_norm) / (total_norm + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(device=g.device, dtype=g.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their joint norm (the norm of the
    vector of all their entries) is at most ``max_norm``; returns that norm before clipping.

    ``get_total_norm`` followed by ``clip_grads_with_norm_``; ``foreach`` is ignored.
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)   # a generator is read twice below
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=2)
    total = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)
