"""The simulated device: one GPU, streams, events, DLPack, and the ``cupy.cuda`` namespace
(its memory part from ``_memory``)."""
from __future__ import annotations

import time
import types

import numpy as np

from . import _memory
from ._memory import TOTAL_MEMORY

NAME = b"Simulated CUDA device (numpy)"


# -- devices, streams, events -------------------------------------------------------------------
class Device:
    """CuPy's ``cuda.Device``: one device, id 0; a context manager."""

    def __init__(self, device=None):
        idx = 0 if device is None else int(device.id if isinstance(device, Device) else device)
        if idx != 0:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self.id = idx

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("device", self.id))

    def use(self):
        pass

    def synchronize(self):
        pass

    compute_capability = "90"
    mem_info = property(lambda self: (TOTAL_MEMORY - _memory.reserved_bytes(), TOTAL_MEMORY))

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


DEVICE = Device(0)


class CUDARuntimeError(RuntimeError):
    pass


class Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, ptr=0, priority=0):
        self.ptr = 0 if null else id(self)
        self.priority = priority
        self.device_id = 0

    def synchronize(self):
        pass

    def use(self):
        _current[0] = self
        return self

    def __enter__(self):
        self._prev = _current[0]
        _current[0] = self
        return self

    def __exit__(self, *exc):
        _current[0] = self._prev

    @property
    def done(self):
        return True

    def record(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event):
        pass

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return hash(self.ptr)


Stream.null = Stream(null=True)
_current = [Stream.null]


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = disable_timing
        self.ptr = id(self)
        self._t = None

    def record(self, stream=None):
        self._t = time.perf_counter()

    def synchronize(self):
        pass

    @property
    def done(self):
        return True


def get_elapsed_time(start, end):
    if start.disable_timing or end.disable_timing:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    if start._t is None or end._t is None:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: event not recorded")
    return (end._t - start._t) * 1e3


def build_cuda(real_cuda):
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.Stream = Stream
    cuda.Event = Event
    cuda.get_elapsed_time = get_elapsed_time
    cuda.get_current_stream = lambda device_id=-1: _current[0]
    cuda.get_device_id = lambda: 0
    cuda.nvrtc = real_cuda.nvrtc          # compiling needs no GPU: the real binding
    cuda.memory_hook = types.ModuleType("cupy.cuda.memory_hook")
    cuda.memory_hook.MemoryHook = _memory.MemoryHook
    cuda.MemoryHook = _memory.MemoryHook
    memory_names = ("MemoryPool", "MemoryPointer", "OutOfMemoryError", "alloc",
                    "set_allocator", "get_allocator")
    cuda.memory = types.ModuleType("cupy.cuda.memory")
    cuda.memory._malloc = _memory._malloc
    for name in memory_names:
        setattr(cuda.memory, name, getattr(_memory, name))
        setattr(cuda, name, getattr(_memory, name))
    cuda.using_allocator = _memory.using_allocator
    cuda.runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDevice=lambda: 0,
        getDeviceProperties=lambda i: _properties(i),
        memGetInfo=lambda: (TOTAL_MEMORY - _memory.reserved_bytes(), TOTAL_MEMORY),
        runtimeGetVersion=lambda: 13000,
        driverGetVersion=lambda: 13000,
        deviceSynchronize=lambda: None,
        CUDARuntimeError=CUDARuntimeError)
    cuda.profiler = types.SimpleNamespace(start=lambda: None, stop=lambda: None)
    cuda.nvtx = types.SimpleNamespace(RangePush=lambda *a, **k: None, RangePop=lambda: None,
                                      Mark=lambda *a, **k: None)
    return cuda


def _properties(i):
    Device(i)
    return {"name": NAME, "totalGlobalMem": TOTAL_MEMORY, "major": 9, "minor": 0,
            "multiProcessorCount": 132, "maxThreadsPerMultiProcessor": 2048, "warpSize": 32,
            "l2CacheSize": 50 * 2 ** 20, "integrated": 0, "isMultiGpuBoard": 0}


# -- DLPack ----------------------------------------------------------------------------------
class Capsule:
    """What ``__dlpack__`` hands over: the device array itself (no real capsule is made). A
    real capsule is opaque to Python; gpugrad reads its device from the DLTensor, which this
    stand-in answers as a producer would."""

    def __init__(self, arr):
        self.array = arr

    def __dlpack__(self, **_):
        return self

    def __dlpack_device__(self):
        return (2, 0)


def from_dlpack(obj):
    from ._array import ndarray, wrap
    if isinstance(obj, Capsule):
        return obj.array
    if isinstance(obj, ndarray):
        return obj
    if not hasattr(obj, "__dlpack__"):
        raise TypeError(f"object {type(obj)} does not support the DLPack protocol")
    dev = obj.__dlpack_device__()[0] if hasattr(obj, "__dlpack_device__") else 1
    if dev == 1:
        raise TypeError("CuPy cannot import a CPU array through DLPack: use cupy.asarray")
    cap = obj.__dlpack__()
    if isinstance(cap, Capsule):
        return wrap(cap.array._a)
    raise TypeError(f"cannot import a DLPack capsule of {type(obj)} in the simulated CuPy")


def as_strided(x, shape=None, strides=None):
    from ._array import ndarray, wrap
    if not isinstance(x, ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    return wrap(np.lib.stride_tricks.as_strided(x._a, shape, strides))
