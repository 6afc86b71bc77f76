"""Reading checkpoints written by PyTorch's ``torch.save`` (its zip format, PyTorch >= 1.6).

The archive holds ``<name>/data.pkl``, a pickle whose tensors point at raw storages stored as
``<name>/data/<key>``. The unpickler here resolves only the globals a state dict needs (tensor
and parameter rebuilders, storage types, dtypes, devices, sizes, ``OrderedDict`` and a few
builtins), as ``torch.load(weights_only=True)`` does; any other global is refused before it can
run, so loading a file cannot run code.
"""
from __future__ import annotations

import builtins
import codecs
import collections
import pickle

import numpy as np

from . import _backend
from .serialization import SerializationError, strided
from .tensor import Size, Tensor


class TorchCheckpointError(SerializationError, pickle.UnpicklingError):
    """A PyTorch checkpoint holding an object this reader does not build."""


_STORAGE_DTYPES = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "UntypedStorage": "uint8", "ComplexFloatStorage": "complex64",
    "ComplexDoubleStorage": "complex128",
}
_DTYPES = {"float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
           "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64"}


class _StorageType:
    def __init__(self, dtype):
        self.dtype = dtype


def _dtype(name):
    import gpugrad
    dtype = getattr(gpugrad, name, None)
    if dtype is None:
        raise TorchCheckpointError(f"Weights only load failed: dtype {name} is not supported")
    return dtype


def _rebuild_tensor(storage, storage_offset, size, stride, requires_grad=False,
                    backward_hooks=None, metadata=None, dtype=None):
    buf, dt = storage
    dt = dt if dtype is None else dtype
    a = strided(buf.reshape(-1).view(np.uint8), storage_offset * dt.itemsize, dt, size,
                [s * dt.itemsize for s in stride])
    t = Tensor._make(a)
    if requires_grad:
        t.requires_grad = True
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    return _rebuild_tensor(storage, storage_offset, size, stride, requires_grad, dtype=dtype)


def _rebuild_parameter(data, requires_grad, backward_hooks, state=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


_GLOBALS = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch", "Size"): Size,
    ("torch", "device"): _backend.device,
    ("_codecs", "encode"): codecs.encode,   # how protocol 2 pickles bytes
}
for _name in ("set", "frozenset", "complex", "slice", "bytearray", "int", "float", "bool"):
    _GLOBALS[("builtins", _name)] = _GLOBALS[("__builtin__", _name)] = getattr(builtins, _name)


class _Unpickler(pickle.Unpickler):
    def __init__(self, fh, archive, prefix, placer, byteorder):
        super().__init__(fh)
        self.archive, self.prefix, self.placer = archive, prefix, placer
        self.byteorder, self.storages = byteorder, {}

    def find_class(self, module, name):
        found = _GLOBALS.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(_dtype(_STORAGE_DTYPES[name]))
        if module == "torch" and name in _DTYPES:
            return _dtype(name)
        raise TorchCheckpointError(
            f"Weights only load failed: unsupported global {module}.{name}. gpugrad reads "
            "the tensors, state dicts and plain values of a PyTorch checkpoint, not other "
            "pickled objects (unpickling them could run arbitrary code).")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise TorchCheckpointError(f"Weights only load failed: unknown record {pid!r}")
        _, kind, key, location, _numel = pid
        dtype = kind.dtype if isinstance(kind, _StorageType) else _dtype("uint8")
        got = self.storages.get(key)
        if got is None:
            raw = bytearray(self.archive.read(f"{self.prefix}/data/{key}"))
            a = np.frombuffer(raw, dtype=dtype.newbyteorder(self.byteorder))
            got = self.storages[key] = (self.placer(location)(a.astype(dtype, copy=False)),
                                        dtype)
        return got


def load_torch_zip(archive, name, placer):
    """The object in PyTorch checkpoint ``archive`` (an open ``zipfile.ZipFile``);
    ``placer(saved_location)(host_array)`` puts each storage on its device."""
    pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    prefix = pkl[:-len("/data.pkl")] if "/" in pkl else ""
    order = f"{prefix}/byteorder"
    big = order in archive.namelist() and archive.read(order).strip() == b"big"
    with archive.open(pkl) as fh:
        try:
            return _Unpickler(fh, archive, prefix, placer, ">" if big else "<").load()
        except TorchCheckpointError as e:
            raise TorchCheckpointError(f"gpugrad.load: '{name}' looks like a PyTorch checkpoint "
                                       f"that holds more than tensors and plain values: {e}") \
                from None
