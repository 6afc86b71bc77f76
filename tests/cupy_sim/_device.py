"""The simulated device: one GPU, CuPy's memory pool and hooks, streams, events, DLPack."""
from __future__ import annotations

import contextlib
import time
import types
import weakref

import numpy as np

TOTAL_MEMORY = 80 * 2 ** 30
NAME = b"Simulated CUDA device (numpy)"


# -- the memory pool --------------------------------------------------------------------------
class OutOfMemoryError(MemoryError):
    def __init__(self, size, total, limit=0):
        super().__init__(f"Out of memory allocating {size:,} bytes "
                         f"(allocated so far: {total:,} bytes).")


OutOfMemoryError.__module__ = "cupy.cuda.memory"


class MemoryPool:
    """Live bytes (rounded to CuPy's 512-byte blocks), cached bytes, a limit, memory hooks.
    Each allocation holds a weak reference whose callback books the free."""

    def __init__(self):
        self._roots: dict[int, tuple] = {}   # id(numpy array) -> (weak reference, bytes)
        self._used = 0
        self._cached = 0
        self._limit = 0
        self.hooks: list = []

    def used_bytes(self):
        return self._used

    def total_bytes(self):
        return self._used + self._cached

    def free_bytes(self):
        return self._cached

    def free_all_blocks(self, stream=None):
        self._cached = 0

    def n_free_blocks(self):
        return 0

    def set_limit(self, size=None, fraction=None):
        self._limit = int(size or (fraction or 0) * TOTAL_MEMORY)

    def get_limit(self):
        return self._limit

    def _alloc(self, a: np.ndarray):
        key = id(a)
        known = self._roots.get(key)
        if known is not None and known[0]() is a:
            return
        size = -(-a.nbytes // 512) * 512
        if size and (size > TOTAL_MEMORY or (self._limit and self._used + size > self._limit)):
            raise OutOfMemoryError(a.nbytes, self._used, self._limit)
        self._roots[key] = (weakref.ref(a, lambda r, key=key: self._freed(key, r)), size)
        self._used += size
        self._cached = max(0, self._cached - size)
        for h in self.hooks:
            h.malloc_postprocess(device_id=0, size=a.nbytes, mem_size=size, mem_ptr=key,
                                 pmem_id=key)

    def _freed(self, key, ref):
        known = self._roots.get(key)
        if known is None or known[0] is not ref:   # the id was reused by a newer allocation
            return
        del self._roots[key]
        size = known[1]
        self._used -= size
        self._cached += size
        for h in self.hooks:
            h.free_postprocess(device_id=0, mem_size=size, mem_ptr=key, pmem_id=key)


POOL = MemoryPool()
PINNED_POOL = types.SimpleNamespace(free_all_blocks=lambda: None, n_free_blocks=lambda: 0)


def allocated(arr):
    """Count a new device array's memory (raising CuPy's error past the pool's limit)."""
    POOL._alloc(arr._a)


class MemoryHook:
    """Base of CuPy's memory hooks: ``with hook:`` (or ``__enter__``) installs it."""
    name = "MemoryHook"

    def __enter__(self):
        POOL.hooks.append(self)
        return self

    def __exit__(self, *exc):
        POOL.hooks.remove(self)

    def malloc_postprocess(self, **kw):
        pass

    def free_postprocess(self, **kw):
        pass


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
    mem_info = property(lambda self: (TOTAL_MEMORY - POOL.total_bytes(), TOTAL_MEMORY))

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
    cuda.memory_hook.MemoryHook = MemoryHook
    cuda.memory = types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError,
                                        MemoryPool=MemoryPool)
    cuda.OutOfMemoryError = OutOfMemoryError
    cuda.runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDevice=lambda: 0,
        getDeviceProperties=lambda i: _properties(i),
        memGetInfo=lambda: (TOTAL_MEMORY - POOL.total_bytes(), TOTAL_MEMORY),
        runtimeGetVersion=lambda: 13000,
        driverGetVersion=lambda: 13000,
        deviceSynchronize=lambda: None,
        CUDARuntimeError=CUDARuntimeError)
    cuda.profiler = types.SimpleNamespace(start=lambda: None, stop=lambda: None)
    cuda.nvtx = types.SimpleNamespace(RangePush=lambda *a, **k: None, RangePop=lambda: None,
                                      Mark=lambda *a, **k: None)
    cuda.using_allocator = contextlib.nullcontext
    return cuda


def _properties(i):
    Device(i)
    return {"name": NAME, "totalGlobalMem": TOTAL_MEMORY, "major": 9, "minor": 0,
            "multiProcessorCount": 132, "maxThreadsPerMultiProcessor": 2048, "warpSize": 32,
            "l2CacheSize": 50 * 2 ** 20, "integrated": 0, "isMultiGpuBoard": 0}


# -- memory views and DLPack --------------------------------------------------------------------
class MemoryPointer:
    """``ndarray.data``: ``ptr`` where the array starts, ``mem`` the allocation it is in."""

    def __init__(self, a, base=None):
        self._owner = a   # as CuPy's pointer holds its memory: a copy through it stays valid
        self.ptr = a.__array_interface__["data"][0]
        self.device_id = 0
        root = a if base is None else base._a
        self.mem = types.SimpleNamespace(ptr=root.__array_interface__["data"][0],
                                         size=root.nbytes, device_id=0)

    def copy_from_device(self, src, size):
        import ctypes
        if size:
            ctypes.memmove(self.ptr, src.ptr, size)

    def copy_from_device_async(self, src, size, stream=None):
        self.copy_from_device(src, size)


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
