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
from ._exports import method_as_function, tensor_method

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


# -- Tensor methods: the storage and memory queries -----------------------------------------------
tensor_method("untyped_storage")(untyped_storage)
tensor_method("storage")(storage)


@tensor_method("stride")
def _stride(s, dim=None):
    """Strides in elements, as PyTorch reports them."""
    st = tuple(b // s._data.itemsize for b in s._data.strides)
    return st if dim is None else st[s._dim(dim)]


@tensor_method("data_ptr")
def _data_ptr(self):
    a = self._data
    return int(a.ctypes.data) if isinstance(a, np.ndarray) else int(a.data.ptr)


@tensor_method("storage_offset")
def _storage_offset(self):
    """Elements between the start of the memory the array views and its first entry."""
    a = self._data
    if not isinstance(a, np.ndarray):
        return (a.data.ptr - a.data.mem.ptr) // a.itemsize
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return (a.ctypes.data - root.ctypes.data) // a.itemsize


@tensor_method("pin_memory")
def _pin_memory(self, device=None):
    """A copy in page-locked host memory (faster, asynchronous copies to the GPU). As in
    PyTorch, this needs a CUDA device."""
    from . import cuda
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if _is_pinned(self):
        return self
    y = self.clone()
    pinned = _backend.cupy_submodule("cupyx").empty_pinned(self._data.shape, self._data.dtype)
    pinned[...] = self._data
    y._data = pinned
    y._m()["pinned"] = True
    return y


@tensor_method("is_pinned")
def _is_pinned(self, device=None):
    return bool(self._meta and self._meta.get("pinned"))


@tensor_method("share_memory_")
def _share_memory_(self):
    """Marks the tensor shared (numpy memory is not moved to shared memory: worker processes
    that need it receive a copy)."""
    self._m()["shared"] = True
    return self


tensor_method("is_shared")(lambda s: bool(s._meta and s._meta.get("shared")))


@tensor_method("get_device")
def _get_device(self):
    dev = self.device
    return -1 if dev.type == "cpu" else (dev.index or 0)


tensor_method("is_cpu")(property(lambda s: s.device.type == "cpu"))


@tensor_method("resize_")
def _resize_(self, *sizes, memory_format=None):
    """The tensor reshaped to sizes: the same entries when the count is unchanged; its first
    entries (row-major) when it shrinks; new entries (zeros here, uninitialised in PyTorch)
    after them when it grows."""
    from .tensor_inplace import check  # layering: the version check is the in-place machinery's
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    check(self)
    shape = tuple(int(s) for s in (sizes[0] if len(sizes) == 1 and not isinstance(
        sizes[0], int) else sizes))
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    a = self._data
    xp = _backend.xp_of(a)
    n = int(np.prod(shape))
    if n == a.size:
        self._data = xp.ascontiguousarray(a).reshape(shape)
    else:
        new = xp.zeros(n, dtype=a.dtype)
        k = min(n, a.size)
        new[:k] = a.reshape(-1)[:k]
        self._data = new.reshape(shape)
    self._version_box().v += 1
    return self


tensor_method("resize_as_")(
    lambda s, other, memory_format=None: _resize_(s, tuple(other.shape)))
method_as_function("resize_as_")
