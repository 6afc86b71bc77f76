"""DLPack in: ``gpugrad.from_dlpack`` over producers and bare capsules, on either device."""
from __future__ import annotations

import ctypes

import numpy as np

from ._backend import _require_cuda, device
from .tensor import Tensor


def from_dlpack(ext):
    """A tensor sharing memory with any DLPack producer (numpy, CuPy, PyTorch ...), or with a
    DLPack capsule (what ``__dlpack__()`` returns; it can be consumed once)."""
    if not hasattr(ext, "__dlpack__"):
        if type(ext).__name__ != "PyCapsule":
            raise TypeError(f"from_dlpack() expects a DLPack producer (an object with "
                            f"__dlpack__) or a DLPack capsule, got {type(ext).__name__}")
        ext = _Capsule(ext)
    dev_type = ext.__dlpack_device__()[0] if hasattr(ext, "__dlpack_device__") else 1
    if int(dev_type) == 1:  # kDLCPU
        a = np.from_dlpack(ext)
        return Tensor._make(_Capsule.writeable(a) if isinstance(ext, _Capsule) else a)
    cp = _require_cuda(device("cuda"))
    return Tensor._make(cp.from_dlpack(ext._capsule if isinstance(ext, _Capsule) else ext))


class _Capsule:
    """A bare DLPack capsule as a producer: its device read from the DLTensor it points to."""

    def __init__(self, capsule):
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        is_valid = ctypes.pythonapi.PyCapsule_IsValid
        is_valid.restype, is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
        if not is_valid(capsule, b"dltensor"):
            raise RuntimeError("from_dlpack received an invalid capsule. Note that a DLTensor "
                               "capsule can be consumed only once, and you may have already "
                               "constructed a tensor from it once.")
        # DLManagedTensor starts with its DLTensor: void *data, then DLDevice {int32 type, id}
        device_type, device_id = (ctypes.c_int32 * 2).from_address(get(capsule, b"dltensor")
                                                                  + ctypes.sizeof(ctypes.c_void_p))
        self._capsule, self._device = capsule, (device_type, device_id)

    def __dlpack__(self, **_):
        return self._capsule

    @staticmethod
    def writeable(a):
        """numpy marks arrays from an unversioned capsule read-only (the capsule cannot say
        otherwise); PyTorch writes through them. A writeable alias of the same memory that
        keeps ``a`` (and with it the producer's memory) alive."""
        if a.flags.writeable or a.size == 0 or any(st < 0 for st in a.strides):
            return a
        extent = sum((d - 1) * st for d, st in zip(a.shape, a.strides)) + a.itemsize
        buf = (ctypes.c_char * extent).from_address(a.__array_interface__["data"][0])
        buf.owner = a
        return np.ndarray(a.shape, a.dtype, buffer=buf, strides=a.strides)

    def __dlpack_device__(self):
        return self._device
