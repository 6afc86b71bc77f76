"""Autocast's state and its two casts, kept free of heavy imports so every op module can read
``state.active`` (one attribute load when autocast is off)."""
from __future__ import annotations

import numpy as np

from .._bfloat16 import BF16

# what gpugrad can compute in: float16 everywhere, bfloat16 on the CPU (CuPy has none)
LOWER_DTYPES = (np.dtype(np.float16),) + (() if BF16 is None else (BF16,))


class _State:
    """The autocast dtype per device type (None: off there); ``active`` if any is on."""
    __slots__ = ("dtypes", "active")

    def __init__(self):
        self.dtypes = {"cuda": None, "cpu": None}
        self.active = False

    def set(self, device_type, dtype):
        self.dtypes[device_type] = dtype
        self.active = any(d is not None for d in self.dtypes.values())


state = _State()

_F32 = np.dtype(np.float32)


def _device_dtype(tensors):
    from ..tensor import Tensor
    for t in tensors:
        if isinstance(t, Tensor):
            return state.dtypes[t.device.type]
    return None


def lower(*tensors):
    """The tensors as the autocast dtype of their device: float32 ones are cast (float64 and
    integer tensors are left alone, as PyTorch leaves them); others pass through."""
    dtype = _device_dtype(tensors)
    if dtype is None:
        return tensors
    return tuple(t.to(dtype) if getattr(t, "dtype", None) == _F32 else t for t in tensors)


def upper(*tensors):
    """The tensors with any lower-precision floating one cast up to float32 (ops that lose
    accuracy or overflow in float16: softmax, losses, normalisation)."""
    if _device_dtype(tensors) is None:
        return tensors
    return tuple(t.to(_F32) if getattr(t, "dtype", None) in LOWER_DTYPES else t
                 for t in tensors)
