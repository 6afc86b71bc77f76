"""``gpugrad.amp``: automatic mixed precision (``autocast``) and loss scaling
(``GradScaler``), as ``torch.amp``."""
from __future__ import annotations

from .autocast_mode import (
    autocast,
    custom_bwd,
    custom_fwd,
    get_autocast_dtype,
    is_autocast_enabled,
)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_enabled",
           "get_autocast_dtype", "is_autocast_available"]


def is_autocast_available(device_type):
    """Whether gpugrad can autocast on ``device_type`` ("cuda" or "cpu")."""
    return device_type in ("cuda", "cpu")
