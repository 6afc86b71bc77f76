"""The simulated device: one GPU, and the ``cupy.cuda`` namespace around it (devices, the
runtime's calls and constants, streams, events, graphs, memory), plus DLPack."""
from __future__ import annotations

import types

import numpy as np

from . import _capture, _errors, _memory, _streams
from ._errors import CUDADriverError, CUDARuntimeError
from ._memory import TOTAL_MEMORY

NAME = b"Simulated CUDA device (numpy)"


class Device:
    """CuPy's ``cuda.Device``: one device, id 0; a context manager."""

    def __init__(self, device=None):
        idx = 0 if device is None else int(device.id if isinstance(device, Device) else device)
        if idx != 0:
            raise CUDARuntimeError(_errors.INVALID_DEVICE)
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
        _capture.device_synchronize()

    compute_capability = "90"
    mem_info = property(lambda self: _mem_info())

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


DEVICE = Device(0)


def _mem_info():
    return TOTAL_MEMORY - _memory.reserved_bytes(), TOTAL_MEMORY


def _runtime():
    """``cupy.cuda.runtime``: what gpugrad and capture code call, with CUDA's constants."""
    return types.SimpleNamespace(
        getDeviceCount=lambda: 1,
        getDevice=lambda: 0,
        getDeviceProperties=lambda i: _properties(i),
        memGetInfo=_mem_info,
        runtimeGetVersion=lambda: 13000,
        driverGetVersion=lambda: 13000,
        deviceSynchronize=_capture.device_synchronize,
        streamSynchronize=_streams.stream_synchronize,
        streamQuery=_streams.stream_query,
        streamGetFlags=_streams.stream_get_flags,
        streamIsCapturing=_streams.stream_is_capturing,
        streamBeginCapture=_streams.stream_begin_capture,
        streamEndCapture=_streams.stream_end_capture,
        streamCaptureModeGlobal=_capture.MODE_GLOBAL,
        streamCaptureModeThreadLocal=_capture.MODE_THREAD_LOCAL,
        streamCaptureModeRelaxed=_capture.MODE_RELAXED,
        streamCaptureStatusNone=_capture.STATUS_NONE,
        streamCaptureStatusActive=_capture.STATUS_ACTIVE,
        streamCaptureStatusInvalidated=_capture.STATUS_INVALIDATED,
        streamDefault=_streams.STREAM_DEFAULT,
        streamNonBlocking=_streams.STREAM_NON_BLOCKING,
        streamLegacy=_streams.STREAM_LEGACY,
        streamPerThread=_streams.STREAM_PER_THREAD,
        is_hip=False,
        CUDARuntimeError=CUDARuntimeError)


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    return mod


def build_cuda(real_cuda):
    cuda = types.ModuleType("cupy.cuda")
    cuda.Device = Device
    cuda.get_device_id = lambda: 0
    cuda.nvrtc = real_cuda.nvrtc          # compiling needs no GPU: the real binding
    for lib in ("cublas", "curand", "cusolver", "cusparse", "cufft"):   # present, versionless
        setattr(cuda, lib, _module(f"cupy.cuda.{lib}"))
    cuda.runtime = _runtime()
    cuda.driver = _module("cupy.cuda.driver", CUDADriverError=CUDADriverError)

    cuda.stream = _module("cupy.cuda.stream", Stream=_streams.Stream, Event=_streams.Event,
                          get_current_stream=_streams.get_current_stream,
                          get_elapsed_time=_streams.get_elapsed_time)
    for name in ("Stream", "Event", "get_current_stream", "get_elapsed_time"):
        setattr(cuda, name, getattr(cuda.stream, name))
    cuda.graph = _module("cupy.cuda.graph", Graph=_capture.Graph)
    cuda.Graph = _capture.Graph

    cuda.memory_hook = _module("cupy.cuda.memory_hook", MemoryHook=_memory.MemoryHook)
    cuda.MemoryHook = _memory.MemoryHook
    memory_names = ("MemoryPool", "MemoryPointer", "OutOfMemoryError", "alloc",
                    "set_allocator", "get_allocator")
    cuda.memory = _module("cupy.cuda.memory", _malloc=_memory._malloc,
                          **{n: getattr(_memory, n) for n in memory_names})
    for name in memory_names:
        setattr(cuda, name, getattr(_memory, name))
    cuda.using_allocator = _memory.using_allocator

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
