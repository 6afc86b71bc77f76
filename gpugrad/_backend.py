"""Array backends: numpy on the CPU, CuPy on NVIDIA GPUs.

This is the only module that imports cupy, and it does so lazily, so ``import gpugrad`` works on a
machine without CuPy. Everything else takes its array module from the data (``xp_of``).
"""
from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

from . import _host_memory
from ._bfloat16 import check_device

_cupy = None          # the cupy module once imported, False if it cannot be imported
_cupy_error = None    # why it could not be imported


def cupy_module():
    """The cupy module, or None when it is not installed (import errors are kept for messages)."""
    global _cupy, _cupy_error
    if _cupy is None:
        try:
            import cupy
            _cupy = cupy
        except Exception as e:  # ImportError, or a broken CUDA runtime
            _cupy, _cupy_error = False, e
    return _cupy or None


def cupy_error():
    """Why CuPy could not be imported (the exception), None when it was or was not tried."""
    cupy_module()
    return _cupy_error


def cupy_submodule(name: str):
    """A CuPy submodule (``cupyx.scipy.special``, ``cupy.cuda.memory_hook``): CuPy's imports
    all happen in this module."""
    import importlib
    if cupy_module() is None:
        raise ImportError(f"{name} needs CuPy, which is not installed ({_cupy_error})")
    return importlib.import_module(name)


def special_functions(xp):
    """``scipy.special`` for numpy, ``cupyx.scipy.special`` for CuPy: the libraries that own the
    special functions (vectorised, accurate to double precision, the same names on both)."""
    if xp is np:
        import scipy.special  # on first use: it adds half a second to ``import gpugrad``
        return scipy.special
    return cupy_submodule("cupyx.scipy.special")


def xp_of(a):
    """numpy or cupy, from the type of an array (numpy for Python scalars)."""
    if type(a) is np.ndarray or _cupy is None or _cupy is False:
        return np
    return _cupy if isinstance(a, _cupy.ndarray) else np


def cpu_scalar(a) -> bool:
    """A 0-d numpy array: PyTorch lets a 0-d CPU tensor join tensors of any device."""
    return type(a) is np.ndarray and a.ndim == 0


def is_array(a) -> bool:
    if isinstance(a, (np.ndarray, np.generic)):
        return True
    cp = _cupy or None
    return cp is not None and isinstance(a, cp.ndarray)


class device:
    """Where a tensor lives: ``device('cpu')``, ``device('cuda')``, ``device('cuda', 1)``."""
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}")
        if type == "cpu" and index not in (None, 0):
            raise RuntimeError(f"CPU device index must be 0, got {index}")
        self.type = type
        self.index = None if type == "cpu" else index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index == other.index or self.type == "cpu")

    def __hash__(self):
        return hash((self.type, self.index))


CPU = device("cpu")
_cuda_devices: dict[int, device] = {}


def device_of(a) -> device:
    if type(a) is np.ndarray or isinstance(a, np.generic):
        return CPU
    i = a.device.id
    d = _cuda_devices.get(i)
    if d is None:
        d = _cuda_devices[i] = device("cuda", i)
    return d


class OutOfMemoryError(RuntimeError):
    """A GPU allocation failed (the message names the size requested); ``gpugrad.cuda``
    exports it as PyTorch's ``torch.cuda.OutOfMemoryError``."""


def _require_cuda(dev: device):
    cp = cupy_module()
    if cp is None:
        raise RuntimeError(
            f"gpugrad: device '{dev}' needs CuPy, which is not installed "
            f"({_cupy_error}). Install it from a gpugrad checkout with: "
            'pip install -e ".[cuda]"  (CuPy for CUDA 12 and its libraries; an NVIDIA driver '
            "must be present).")
    try:
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:
        raise RuntimeError(
            f"gpugrad: device '{dev}' needs an NVIDIA GPU and driver, but CUDA reports none "
            f"({type(e).__name__}: {e}). Use device='cpu', or check `nvidia-smi`.") from None
    idx = dev.index or 0
    if idx >= n:
        raise RuntimeError(
            f"gpugrad: CUDA error: invalid device ordinal: '{dev}' requested, "
            f"but only {n} CUDA device(s) are visible")
    return cp


def module_for(dev) :
    """The array module that creates arrays on ``dev`` (a device, a string or None for default)."""
    dev = default_device() if dev is None else dev
    if dev is CPU or dev == "cpu":
        return np
    return _require_cuda(device(dev))


def on_device(dev, fn, *args, **kw):
    """Call ``fn`` (an array constructor) with the current CUDA device set to ``dev``."""
    dev = default_device() if dev is None else device(dev)
    if dev.type == "cpu":
        return fn(np, *args, **kw)
    cp = _require_cuda(dev)
    with cp.cuda.Device(dev.index or 0):
        return fn(cp, *args, **kw)


def to_device(a, dev: device):
    """Copy (or pass through) an array to ``dev``."""
    src = device_of(a)
    if src == dev:
        return a
    if dev.type == "cpu":
        refuse_if_capturing()
        return a.get()
    check_device(a.dtype, "cuda")
    cp = _require_cuda(dev)
    with cp.cuda.Device(dev.index or 0):
        return cp.asarray(a)


_default_device = None
_default_source = None   # who chose the default device: "GPUGRAD_DEVICE", "set_default_device"


def default_device() -> device:
    global _default_device, _default_source
    if _default_device is None:
        env = os.environ.get("GPUGRAD_DEVICE", "")
        _default_device = device(env or "cpu")
        _default_source = "GPUGRAD_DEVICE" if env else None
    return _default_device


def default_device_source() -> str | None:
    """Who chose the default device (``"GPUGRAD_DEVICE"`` or ``"set_default_device"``), None
    when nobody did and it is the CPU by default."""
    default_device()
    return _default_source


def set_default_device(dev) -> None:
    global _default_device, _default_source
    _default_device = None if dev is None else device(dev)
    _default_source = None if dev is None else "set_default_device"


@contextlib.contextmanager
def default_device_as(dev):
    """The default device is ``dev`` inside the block, what it was after it."""
    global _default_device, _default_source
    saved = _default_device, _default_source
    _default_device, _default_source = device(dev), "set_default_device"
    try:
        yield
    finally:
        _default_device, _default_source = saved


# -- CUDA-graph capture (gpugrad.cuda.graphs sets it) -----------------------------------------
class _Captures:
    """The captures running now, each ``(thread id, mode)``. ``count`` is read on the paths
    that would read device memory on the host or call a CUDA library: 0, the common case,
    costs one attribute read."""
    count = 0
    running: list = []


captures = _Captures()
CAPTURE_SYNC = "CUDA error: operation not permitted when stream is capturing"


def refuse_if_capturing() -> None:
    """Raise PyTorch's error when reading device memory on the host would break a capture: any
    capture in ``"global"`` mode, or one this thread runs (``"thread_local"``, ``"relaxed"``)."""
    if captures.count:
        me = threading.get_ident()
        if any(mode == "global" or thread == me for thread, mode in captures.running):
            raise RuntimeError(CAPTURE_SYNC)


def capturing_here() -> bool:
    """True while this thread captures a CUDA graph (device work is recorded, not run)."""
    if not captures.count:
        return False
    me = threading.get_ident()
    return any(thread == me for thread, _ in captures.running)


_host_memory.keep_freed_buffers()
