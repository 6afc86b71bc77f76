"""``gpugrad.utils``: data loading (``gpugrad.utils.data``), activation checkpointing
(``gpugrad.utils.checkpoint``), hook handles (``gpugrad.utils.hooks``); TensorBoard logging lives
in ``gpugrad.utils.tensorboard``.

The subpackages load on first use: ``utils.hooks`` sits at the bottom of the layers (tensors
import it), and importing it must not pull data loading in."""
from __future__ import annotations

import importlib

__all__ = ["checkpoint", "data", "hooks"]


def __getattr__(name):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
