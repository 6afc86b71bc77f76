"""Storages: the memory behind a tensor, as PyTorch exposes it (``t.untyped_storage()``,
``t.storage()``).

A gpugrad tensor holds a numpy or CuPy array; views share their *root* array's buffer (the
array at the end of the ``base`` chain). A storage is that buffer: its bytes
(``UntypedStorage``) or its entries in one dtype (``TypedStorage``, deprecated in PyTorch and
warned about the same way). Two tensors share memory exactly when their storages have the same
``data_ptr()``; writing through a storage writes the tensors that view it.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _backend

TYPED_STORAGE_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be "
    "the only storage class. This should only matter to you if you are using storages "
    "directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of "
    "tensor.storage()")


def _root_bytes(a):
    """The whole buffer ``a`` views, as a flat uint8 array over the same memory."""
    root = a
    while isinstance(root.base, type(a)):
        root = root.base
    if root.flags.c_contiguous or root.flags.f_contiguous:
        order = "C" if root.flags.c_contiguous else "F"
        return root.reshape(-1, order=order).view(np.uint8)
    # a root that does not own one dense block (an as_strided owner): the array's own bytes
    return _backend.xp_of(a).ascontiguousarray(a).reshape(-1).view(np.uint8)


class UntypedStorage:
    """The bytes of one buffer, on the CPU or a CUDA device."""

    def __init__(self, size=0, *, device=None):
        if isinstance(size, int):
            size = _backend.on_device(device, lambda xp: xp.zeros(size, dtype=np.uint8))
        self._bytes = size   # a flat uint8 array

    @classmethod
    def _of(cls, a):
        return cls(_root_bytes(a))

    def data_ptr(self) -> int:
        b = self._bytes
        return int(b.ctypes.data) if isinstance(b, np.ndarray) else int(b.data.ptr)

    def nbytes(self) -> int:
        return int(self._bytes.size)

    def size(self) -> int:
        return self.nbytes()

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        return _backend.device_of(self._bytes)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    def tolist(self) -> list:
        return _host(self._values()).tolist()

    def _values(self):
        return self._bytes

    def _index(self, i):
        n = len(self)
        if not isinstance(i, int):
            raise TypeError(f"can't index a {type(self).__name__} with {type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i % n

    def __getitem__(self, i):
        return _host(self._values()[self._index(i)]).item()

    def __setitem__(self, i, value):
        self._values()[self._index(i)] = value

    def __iter__(self):
        return iter(self.tolist())

    def cpu(self):
        return self if self.device.type == "cpu" else type(self)(_host(self._bytes))

    def _label(self) -> str:
        return f"gpugrad.storage.UntypedStorage(device={self.device})"

    def __repr__(self):
        lines = [" " + str(v) for v in self.tolist()] or [" "]
        return "\n".join(lines + [f"[{self._label()} of size {len(self)}]"])

    __str__ = __repr__


class TypedStorage(UntypedStorage):
    """The entries of one buffer in one dtype (deprecated in PyTorch: each use warns there)."""

    def __init__(self, untyped: UntypedStorage, dtype):
        super().__init__(untyped._bytes)
        self.dtype = dtype

    def _values(self):
        return self._bytes.view(self.dtype)

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._bytes)

    def size(self) -> int:
        return self.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self.dtype.itemsize

    def cpu(self):
        return self if self.device.type == "cpu" else TypedStorage(self.untyped().cpu(),
                                                                   self.dtype)

    def _label(self) -> str:
        return (f"gpugrad.storage.TypedStorage(dtype=gpugrad.{self.dtype.name}, "
                f"device={self.device})")


def _host(a):
    return a if isinstance(a, (np.ndarray, np.generic)) else a.get()


def untyped_storage(self) -> UntypedStorage:
    return UntypedStorage._of(self._data)


def storage(self) -> TypedStorage:
    warnings.warn(TYPED_STORAGE_DEPRECATED, UserWarning, stacklevel=2)
    return TypedStorage(UntypedStorage._of(self._data), self.dtype)
