"""``gpugrad.cuda``: the CUDA devices as PyTorch's ``torch.cuda`` shows them, through CuPy.

Every function works on a machine without CuPy or without a GPU: ``is_available()`` is then
False and the rest either answers 0 or raises a clear error saying what is missing.
"""
from __future__ import annotations

from . import _backend


class OutOfMemoryError(RuntimeError):
    """A GPU allocation failed (the message names the size requested)."""


def _cp():
    return _backend.cupy_module()


def is_available() -> bool:
    cp = _cp()
    if cp is None:
        return False
    try:
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def device_count() -> int:
    return _cp().cuda.runtime.getDeviceCount() if is_available() else 0


def _need():
    return _backend._require_cuda(_backend.device("cuda"))


def current_device() -> int:
    return _need().cuda.Device().id


def set_device(device) -> None:
    d = _backend.device(device if not isinstance(device, int) else f"cuda:{device}")
    _backend._require_cuda(d).cuda.Device(d.index or 0).use()


def get_device_name(device=None) -> str:
    cp = _need()
    idx = 0 if device is None else _backend.device(
        device if not isinstance(device, int) else f"cuda:{device}").index or 0
    name = cp.cuda.runtime.getDeviceProperties(idx)["name"]
    return name.decode() if isinstance(name, bytes) else name


def synchronize(device=None) -> None:
    if is_available():
        _cp().cuda.Device(0 if device is None else _backend.device(device).index or 0) \
            .synchronize()


def manual_seed(seed) -> None:
    """Seed the generators behind ``device='cuda'`` (the one default generator serves all)."""
    from ._creation import default_generator
    default_generator.manual_seed(seed)


manual_seed_all = manual_seed


# -- memory (CuPy's default memory pool) ---------------------------------------------------------
class _PeakHook:
    """Tracks the peak of the pool's used bytes (installed on first use of the peak figures)."""

    def __init__(self, cp):
        memory_hook = _backend.cupy_submodule("cupy.cuda.memory_hook")

        class Hook(memory_hook.MemoryHook):
            name = "gpugrad_peak"

            def malloc_postprocess(hook, device_id, size, mem_size, mem_ptr, pmem_id):
                used = cp.get_default_memory_pool().used_bytes()
                if used > self.peak:
                    self.peak = used

        self.peak = cp.get_default_memory_pool().used_bytes()
        self.hook = Hook()
        self.hook.__enter__()


_peak: _PeakHook | None = None


def memory_allocated(device=None) -> int:
    """Bytes held by live arrays on the GPU (0 without CUDA)."""
    return _cp().get_default_memory_pool().used_bytes() if is_available() else 0


def memory_reserved(device=None) -> int:
    return _cp().get_default_memory_pool().total_bytes() if is_available() else 0


def max_memory_allocated(device=None) -> int:
    global _peak
    if not is_available():
        return 0
    if _peak is None:
        _peak = _PeakHook(_cp())
    return max(_peak.peak, memory_allocated())


def reset_peak_memory_stats(device=None) -> None:
    global _peak
    if not is_available():
        return
    if _peak is None:
        _peak = _PeakHook(_cp())
    _peak.peak = memory_allocated()


def empty_cache() -> None:
    """Give cached, unused GPU blocks back to the driver."""
    if is_available():
        _cp().get_default_memory_pool().free_all_blocks()


def _amp_module():
    """``gpugrad.cuda.amp`` (also importable as a module, as ``torch.cuda.amp`` is)."""
    import sys

    from .amp import cuda_amp
    sys.modules[__name__ + ".amp"] = cuda_amp
    return cuda_amp


amp = _amp_module()
