"""PyTorch's checkpoint format (``torch.save``'s zip, PyTorch >= 1.6): reading it, and writing it
for ``gpugrad.save(..., format="torch")``.

The archive holds ``<name>/data.pkl``, a pickle whose tensors point at raw storages stored as
``<name>/data/<key>``. The unpickler here resolves only the globals a state dict needs (tensor
and parameter rebuilders, storage types, dtypes, devices, sizes, ``OrderedDict`` and a few
builtins), as ``torch.load(weights_only=True)`` does; any other global is refused before it can
run, so loading a file cannot run code.

The writer emits the same layout torch 2.x writes (``archive/data.pkl`` at pickle protocol 2,
``archive/data/<key>`` storages aligned to 64 bytes, ``byteorder``, ``version``,
``.data/serialization_id``) and only globals ``torch.load(weights_only=True)`` admits, so
PyTorch reads the file without ``weights_only=False``. Tensors viewing one contiguous buffer
share one storage, as in PyTorch; a view PyTorch cannot express (negative strides, another
dtype than its buffer) is written as a copy.
"""
from __future__ import annotations

import builtins
import codecs
import collections
import io
import pickle
import secrets
import zipfile

import numpy as np

from . import _backend
from ._bfloat16 import BF16
from ._weights_only import allowed, refusal
from .nn.parameter import Parameter
from .serialization import SerializationError, _address, _host, strided
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
    def __init__(self, fh, archive, prefix, placer, byteorder, moved=None):
        super().__init__(fh)
        self.archive, self.prefix, self.placer, self.moved = archive, prefix, placer, moved
        self.byteorder, self.storages = byteorder, {}

    def find_class(self, module, name):
        found = _GLOBALS.get((module, name))
        if found is not None:
            return found
        if module == "torch" and name in _STORAGE_DTYPES:
            return _StorageType(_dtype(_STORAGE_DTYPES[name]))
        if module == "torch" and name in _DTYPES:
            return _dtype(name)
        found = allowed(module, name, self.moved)   # listed with add_safe_globals
        if found is None:
            raise TorchCheckpointError(refusal(module, name))
        return found

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


def load_torch_zip(archive, name, placer, moved=None):
    """The object in PyTorch checkpoint ``archive`` (an open ``zipfile.ZipFile``);
    ``placer(saved_location)(host_array)`` puts each storage on its device."""
    pkl = next(n for n in archive.namelist() if n.endswith("data.pkl"))
    prefix = pkl[:-len("/data.pkl")] if "/" in pkl else ""
    order = f"{prefix}/byteorder"
    big = order in archive.namelist() and archive.read(order).strip() == b"big"
    with archive.open(pkl) as fh:
        try:
            return _Unpickler(fh, archive, prefix, placer, ">" if big else "<", moved).load()
        except TorchCheckpointError as e:
            raise TorchCheckpointError(f"gpugrad.load: '{name}' looks like a PyTorch checkpoint "
                                       f"that holds more than tensors and plain values: {e}") \
                from None


# -- writing ------------------------------------------------------------------------------------
_STORAGE_NAMES = {np.dtype(v): k for k, v in _STORAGE_DTYPES.items()
                  if k not in ("UntypedStorage", "BFloat16Storage")}
if BF16 is not None:
    _STORAGE_NAMES[BF16] = "BFloat16Storage"
_ALIGNMENT = 64


class _Global:
    """A ``module.name`` global written into the pickle by name: torch need not be installed."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):   # pickle asks a reduce's function to be callable
        raise TypeError(f"{self.module}.{self.name} is written by name only")


class _StorageRef:
    def __init__(self, key, kind, numel, location="cpu"):
        self.key, self.kind, self.numel, self.location = key, kind, numel, location


class _Pickler(pickle._Pickler):
    """Python's pickler, writing ``_Global`` as a GLOBAL opcode and storages as persistent ids;
    anything outside a weights-only checkpoint is refused by name."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, fh):
        super().__init__(fh, protocol=2)
        self.storages = {}   # key -> host array (C order, its whole buffer)
        self.roots = {}      # id(root buffer) -> _StorageRef

    def save_global_ref(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = save_global_ref

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, np.dtype) and obj in _STORAGE_NAMES:   # torch.float32 is a global
            obj = _Global("torch", str(obj))
        super().save(obj, save_persistent_id)

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            return ("storage", _Global("torch", obj.kind), obj.key, obj.location, obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, (_Global, _StorageRef, str, bytes, bool, int, float, type(None))):
            return NotImplemented
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, Size):
            return _Global("torch", "Size"), (tuple(obj),)
        if isinstance(obj, _backend.device):
            return _Global("torch", "device"), (str(obj),)
        if type(obj) in (dict, list, tuple):
            return NotImplemented
        if type(obj) is collections.OrderedDict:
            return _Global("collections", "OrderedDict"), (), None, None, iter(obj.items())
        raise TypeError(f"gpugrad.save: PyTorch's format (format='torch') holds tensors, dicts, "
                        f"lists, tuples, numbers, strings, None and bools, not an object of "
                        f"type {type(obj).__name__}")

    def _tensor(self, t):
        a = t._data
        if a.dtype not in _STORAGE_NAMES:
            raise TypeError(f"gpugrad.save: PyTorch's format has no storage for dtype {a.dtype}")
        ref, offset, stride = self._storage(a)
        args = (ref, offset, tuple(a.shape), stride, bool(t.requires_grad),
                collections.OrderedDict())
        if isinstance(t, Parameter):
            plain = Tensor._make(a)
            plain.requires_grad = False
            return (_Global("torch._utils", "_rebuild_parameter"),
                    (plain, bool(t.requires_grad), collections.OrderedDict()))
        return _Global("torch._utils", "_rebuild_tensor_v2"), args

    def _storage(self, a):
        """The storage holding ``a`` (its buffer's, shared with other views of it, when PyTorch
        can express the view), and a's element offset and strides in it."""
        root = a
        while isinstance(root.base, type(a)):
            root = root.base
        size = a.itemsize
        if (a.size and root.dtype == a.dtype and root.flags.c_contiguous
                and all(s >= 0 and s % size == 0 for s in a.strides)):
            ref = self.roots.get(id(root))
            if ref is None:
                ref = self.roots[id(root)] = self._add(root)
            return (ref, (_address(a) - _address(root)) // size,
                    tuple(s // size for s in a.strides))
        c = a.copy(order="C") if not a.flags.c_contiguous else a
        return self._add(c), 0, tuple(s // size for s in c.strides)

    def _add(self, a):
        key = str(len(self.storages))
        self.storages[key] = _host(a).reshape(-1)
        # where the storage lived, as PyTorch records it ("cuda:0"): load puts it back there
        where = "cpu" if isinstance(a, np.ndarray) else f"cuda:{a.device.id}"
        return _StorageRef(key, _STORAGE_NAMES[a.dtype], a.size, where)


def encode_torch_zip(obj):
    """``(pickle bytes, {key: host array})`` of ``obj`` in PyTorch's checkpoint format."""
    buf = io.BytesIO()
    p = _Pickler(buf)
    p.dump(obj)
    return buf.getvalue(), p.storages


def write_torch_zip(fh, pickled, storages, prefix="archive"):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        def put(name, data):
            info = zipfile.ZipInfo(f"{prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            start = z.start_dir + 30 + len(info.filename) + 4   # where the data would begin
            pad = -start % _ALIGNMENT
            info.extra = b"FB" + pad.to_bytes(2, "little") + b"Z" * pad
            z.writestr(info, data)
        put("data.pkl", pickled)
        put(".format_version", b"1")
        put(".storage_alignment", str(_ALIGNMENT).encode())
        put("byteorder", b"little")
        for key, a in storages.items():
            put(f"data/{key}", a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes())
        put("version", b"3\n")
        put(".data/serialization_id", "".join(
            str(secrets.randbelow(10)) for _ in range(40)).encode())
