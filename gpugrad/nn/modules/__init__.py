"""``gpugrad.nn.modules``: where PyTorch keeps its layers; here ``Module`` and the global module
hooks of ``gpugrad.nn.modules.module``."""
from . import module
from .module import Module

__all__ = ["Module", "module"]
