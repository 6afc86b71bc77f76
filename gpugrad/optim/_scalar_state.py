"""What Rprop and ASGD share: the dtype of their scalar state (``step``, ``eta``, ``mu``), the lr
check, and the gradient each step reads (negated under maximize)."""
from __future__ import annotations

import numpy as np

from .. import _backend
from .._creation import get_default_dtype
from ..tensor import Tensor


def _scalar_dtype():
    """The dtype of scalar state (``step``, ``eta``, ``mu``): float64 under a float64 default
    dtype, else float32, as PyTorch keeps them."""
    return np.float64 if get_default_dtype() == np.float64 else np.float32


def _lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _grads(group):
    """(parameter, its gradient array, negated under maximize, xp) for each param with one."""
    for p in group["params"]:
        if p._grad is not None:
            g = p._grad._data
            yield p, (-g if group["maximize"] else g), _backend.xp_of(g)
