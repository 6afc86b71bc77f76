"""``gpugrad.cuda.amp``: the older spelling of ``gpugrad.amp`` for CUDA, kept because training
scripts written for ``torch.cuda.amp`` use it."""
from __future__ import annotations

import functools

from . import autocast_mode
from .grad_scaler import GradScaler as _GradScaler

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd"]


class autocast(autocast_mode.autocast):
    """``gpugrad.cuda.amp.autocast(...)`` is ``gpugrad.amp.autocast("cuda", ...)``."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_GradScaler):
    """``gpugrad.cuda.amp.GradScaler(...)`` is ``gpugrad.amp.GradScaler("cuda", ...)``."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)


custom_fwd = functools.partial(autocast_mode.custom_fwd, device_type="cuda")
custom_bwd = functools.partial(autocast_mode.custom_bwd, device_type="cuda")
