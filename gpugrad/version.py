"""``gpugrad.version``: what ``torch.version`` answers. ``cuda`` is the CUDA runtime CuPy was
built against ("12.4"), None without CuPy, as a CPU-only PyTorch answers None."""
from __future__ import annotations

from . import __version__, _backend

__all__ = ["__version__", "cuda", "debug", "hip"]

debug = False
hip = None


def _cuda_version():
    cp = _backend.cupy_module()
    if not cp:
        return None
    try:
        v = cp.cuda.runtime.runtimeGetVersion()
    except Exception:   # CuPy without a usable CUDA runtime
        return None
    return f"{v // 1000}.{v % 1000 // 10}"


cuda = _cuda_version()
