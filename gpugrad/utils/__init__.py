"""``gpugrad.utils``: data loading (``gpugrad.utils.data``), activation checkpointing
(``gpugrad.utils.checkpoint``); TensorBoard logging lives in ``gpugrad.utils.tensorboard``."""
from __future__ import annotations

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
