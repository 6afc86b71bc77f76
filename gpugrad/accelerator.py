"""``gpugrad.accelerator``: PyTorch's device-generic view of the accelerator, answered from
``gpugrad.cuda`` (CUDA through CuPy is gpugrad's only accelerator). Without a GPU there is no
accelerator: ``current_accelerator()`` is None, the counts are 0, and what needs a device raises
PyTorch's error."""
from __future__ import annotations

import warnings

from . import _backend, cuda
from .cuda.streams import device_index as _cuda_index

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count",
           "device_index", "empty_cache", "is_available", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats", "set_device_idx",
           "set_device_index", "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False):
    """``device(type='cuda')`` when a GPU is there, else None (gpugrad is not compiled per
    accelerator: the accelerator it has is the one CuPy finds)."""
    return _backend.device("cuda") if cuda.is_available() else None


def is_available() -> bool:
    return cuda.is_available()


def device_count() -> int:
    return cuda.device_count()


def _need():
    if not cuda.is_available():
        raise RuntimeError(_NONE)


def _index(device, optional):
    _need()
    return _cuda_index(device, optional=optional)


def current_device_index() -> int:
    _need()
    return cuda.current_device()


def set_device_index(device, /) -> None:
    index = _index(device, optional=False)
    if index >= 0:      # a negative index is a no-op, as in PyTorch
        cuda.set_device(index)


def current_device_idx() -> int:
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /) -> None:
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device=None, /) -> None:
    cuda.synchronize(_index(device, optional=True))


class device_index:
    """``with accelerator.device_index(i):`` makes device ``i`` current inside the block; None
    switches nothing."""

    def __init__(self, device, /):
        self.idx, self.prev_idx = device, -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None and self.prev_idx >= 0:
            set_device_index(self.prev_idx)


def empty_cache() -> None:
    _need()
    cuda.empty_cache()


def memory_allocated(device=None, /) -> int:
    return cuda.memory_allocated(_index(device, optional=True))


def max_memory_allocated(device=None, /) -> int:
    return cuda.max_memory_allocated(_index(device, optional=True))


def memory_reserved(device=None, /) -> int:
    return cuda.memory_reserved(_index(device, optional=True))


def max_memory_reserved(device=None, /) -> int:
    return cuda.max_memory_reserved(_index(device, optional=True))


def memory_stats(device=None, /) -> dict:
    return cuda.memory_stats(_index(device, optional=True))


def reset_peak_memory_stats(device=None, /) -> None:
    cuda.reset_peak_memory_stats(_index(device, optional=True))


def reset_accumulated_memory_stats(device=None, /) -> None:
    cuda.reset_accumulated_memory_stats(_index(device, optional=True))
