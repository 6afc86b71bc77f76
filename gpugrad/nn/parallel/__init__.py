"""``gpugrad.nn.parallel``: DataParallel (on one device, the wrapped module itself)."""
from .data_parallel import DataParallel

__all__ = ["DataParallel"]
