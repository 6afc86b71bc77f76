"""``gpugrad.nn.utils``: gradient clipping, as ``torch.nn.utils``."""
from __future__ import annotations

import math

from .._creation import tensor
from ..autograd.grad_mode import no_grad
from ..ops.reduce import norm
from ..ops.shape import stack
from ..tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p.grad for p in parameters if p.grad is not None]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their joint norm (the norm of the
    vector of all their entries) is at most ``max_norm``; returns that norm before clipping.

    As PyTorch: the scale is ``min(1, max_norm / (norm + 1e-6))`` and every gradient is
    multiplied by it, clipped or not; ``foreach`` is accepted and ignored.
    """
    grads = _grads(parameters)
    max_norm, norm_type = float(max_norm), float(norm_type)
    if not grads:
        return tensor(0.0)
    with no_grad():
        if math.isinf(norm_type):
            norms = [g.abs().max() for g in grads]
            total = norms[0] if len(norms) == 1 else stack(norms).max()
        else:
            norms = [norm(g, norm_type) for g in grads]
            total = norm(stack(norms), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.to(g.dtype))
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of ``parameters`` in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    with no_grad():
        for g in _grads(parameters):
            g.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters):
    """All parameters flattened into one vector (the order of ``parameters``)."""
    from ..ops.shape import cat, reshape
    return cat([reshape(p, -1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into ``parameters`` (the inverse of the above)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected gpugrad.Tensor, but got: {type(vec).__name__}")
    i = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[i:i + n].reshape(p.shape))
            i += n
