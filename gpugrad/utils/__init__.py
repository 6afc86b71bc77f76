"""``gpugrad.utils``: data loading (``gpugrad.utils.data``); TensorBoard logging lives in
``gpugrad.utils.tensorboard``."""
from __future__ import annotations

from . import data

__all__ = ["data"]
