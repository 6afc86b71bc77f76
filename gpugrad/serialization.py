"""``gpugrad.save`` / ``gpugrad.load``: state dicts in a file that cannot run code when loaded.

The file is an ``.npz`` (a zip of ``.npy`` arrays, read with ``allow_pickle=False``) holding one
array per tensor (or per storage: tensors that view one buffer are saved as views of it and load
back as views of one buffer, with their strides, as in PyTorch) and a JSON manifest,
``gpugrad.json``, that describes the saved object: nested dicts, lists, tuples and sets of
tensors, numpy arrays, numbers, strings, bytes, booleans, None, dtypes, devices and sizes.

``load`` also reads a checkpoint written by PyTorch's ``torch.save`` (its zip format), with a
restricted unpickler that, like ``torch.load(weights_only=True)``, builds only tensors,
containers, plain values and the globals listed with ``add_safe_globals``
(``_serialization_torch``).

Anything else (a whole ``nn.Module``, an object of the user's class) is pickled into a member of
its own, as PyTorch pickles it, and, as in PyTorch since 2.6, ``load`` builds it only from
tensors, containers and the globals listed with ``add_safe_globals`` / ``safe_globals``
(``_weights_only``), or from anything when asked with ``weights_only=False`` (unpickling can
run code). Tensors inside a pickled object
come back on the CPU, or on ``map_location``'s device when it names one.

A file is read as untrusted: every dtype it names must be numeric, each member is read whole
(CRC-checked) and must hold exactly the data its header describes, and any damage is a
``SerializationError`` naming the file and member. A save writes a temp file of its own beside
the target, fsyncs it, renames it over the target and fsyncs the directory; on failure the old
file stays and the temp file goes (docs/reliability.md lists each guarantee with its test).
"""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import secrets
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from . import _backend, _bfloat16
from ._weights_only import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    resolve_weights_only,
    safe_globals,
)
from ._weights_only import loads as _loads_weights_only
from .tensor import Size, Tensor

MANIFEST = "gpugrad.json"
FORMAT = "gpugrad.save"
VERSION = 2   # 2: storages shared by views; sets, bytes, complex numbers, dtypes, devices, sizes

__all__ = ["save", "load", "SerializationError", "add_safe_globals", "safe_globals",
           "get_safe_globals", "clear_safe_globals"]


# Where classes that older gpugrad versions pickled now live: a whole Module saved before a file
# was renamed names its class by the old module path; unpickling looks the name up in these
# modules instead (each re-exports every public class of what moved into it).
_MOVED = {
    **dict.fromkeys(
        ("gpugrad.nn.layers", "gpugrad.nn.layers_3d", "gpugrad.nn.layers_extra",
         "gpugrad.nn.layers_remaining", "gpugrad.nn.more_layers", "gpugrad.nn.activations_more",
         "gpugrad.nn.losses_more", "gpugrad.nn.norm_more", "gpugrad.nn.conv_layers",
         "gpugrad.nn.lazy", "gpugrad.nn.containers", "gpugrad.nn.loss", "gpugrad.nn.padding",
         "gpugrad.nn.rnn", "gpugrad.nn.transformer", "gpugrad.nn.attention", "gpugrad.nn.module",
         "gpugrad.nn._module_state", "gpugrad.nn._backward_hooks"),
        ("gpugrad.nn.modules", "gpugrad.nn.parameter", "gpugrad.nn.parallel")),
    **dict.fromkeys(
        ("gpugrad.optim.adam_variants", "gpugrad.optim.adaptive", "gpugrad.optim.muon",
         "gpugrad.optim.rprop", "gpugrad.optim.lr_base", "gpugrad.optim.lr_cyclic"),
        ("gpugrad.optim", "gpugrad.optim.lr_scheduler")),
    **dict.fromkeys(
        ("gpugrad.distributions._functor_transforms", "gpugrad.distributions._matrix_transforms",
         "gpugrad.distributions._kl_extra"),
        ("gpugrad.distributions.transforms", "gpugrad.distributions")),
    "gpugrad._compat": ("gpugrad._memory_format", "gpugrad._runtime"),
    "gpugrad._cuda_stream": ("gpugrad.cuda.streams",),
}


class _Unpickler(pickle.Unpickler):
    """Pickle's own, except that a class pickled under a module path gpugrad has since renamed is
    found where it lives now."""

    def find_class(self, module, name):
        homes = _MOVED.get(module)
        if homes is None:
            return super().find_class(module, name)
        import importlib
        for home in homes:
            obj = getattr(importlib.import_module(home), name, None)
            if obj is not None:
                return obj
        return super().find_class(module, name)


def _loads(data: bytes):
    return _Unpickler(io.BytesIO(data)).load()


class SerializationError(RuntimeError):
    """The file is not one ``gpugrad.save`` wrote, or it is damaged."""


# -- save ---------------------------------------------------------------------------------------
class _Writer:
    def __init__(self):
        self.arrays = {}    # member name -> host array
        self.seen = {}      # id(tensor) -> its manifest entry (shared tensors are saved once)
        self.tensors = []   # (entry, array) of each tensor, placed by _place_tensors
        self.version = 1    # the oldest format that can read what was written

    def encode(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, (int, float)):
            return obj if not isinstance(obj, float) or np.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, np.generic):
            return self.encode(obj.item())
        if isinstance(obj, Tensor):
            entry = self.seen.get(id(obj))
            if entry is None:
                entry = {"requires_grad": bool(obj.requires_grad), "device": str(obj.device)}
                from .nn.parameter import Parameter
                if isinstance(obj, Parameter):
                    entry["parameter"] = True
                self.seen[id(obj)] = entry
                self.tensors.append((entry, obj._data))
            return entry
        if isinstance(obj, np.ndarray):
            return self._array(obj, tensor=False)
        if isinstance(obj, dict):
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {kind: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, Size):
            return self._v2({"size": list(obj)})
        if isinstance(obj, tuple):
            return {"tuple": [self.encode(v) for v in obj]}
        if isinstance(obj, list):
            return [self.encode(v) for v in obj]
        if isinstance(obj, (set, frozenset)):
            return self._v2({type(obj).__name__: [self.encode(v) for v in obj]})
        if isinstance(obj, complex):
            return self._v2({"complex": [self.encode(obj.real), self.encode(obj.imag)]})
        if isinstance(obj, bytes):
            return self._v2({"bytes": obj.hex()})
        if isinstance(obj, np.dtype) and (obj.kind in "biufc" or obj == _bfloat16.BF16):
            return self._v2({"dtype": _dtype_spec(obj)})
        if isinstance(obj, _backend.device):
            return self._v2({"device_object": str(obj)})
        return self._pickled(obj)

    def _v2(self, entry):
        self.version = 2
        return entry

    def place_tensors(self):
        """Fill in where each tensor's values are: its own member when no other saved tensor
        shares its memory, else a view (byte offset, strides) into one member holding the
        whole buffer. A lone view is saved as a copy of its values (PyTorch writes the whole
        storage) unless it is a permutation of its whole buffer (a transpose keeps its
        strides)."""
        groups = {}
        for entry, a in self.tensors:
            root = a
            while isinstance(root.base, type(a)):
                root = root.base
            dense = a.size and (root.flags.c_contiguous or root.flags.f_contiguous)
            key = id(root) if dense else ("own", id(entry))
            groups.setdefault(key, (root, []))[1].append((entry, a))
        for root, members in groups.values():
            (entry, a), alone = members[0], len(members) == 1
            if alone and (a.flags.c_contiguous or not a.size or a.nbytes != root.nbytes
                          or not (root.flags.c_contiguous or root.flags.f_contiguous)):
                entry.update(self._array(_host(a), tensor=True))
                continue
            name = f"t{len(self.arrays)}"
            flat = root.reshape(-1, order="C" if root.flags.c_contiguous else "F")
            self.arrays[name] = _host(flat.view(np.uint8))
            start = _address(flat)
            self.version = 2
            for entry, a in members:
                entry.update(storage=name, dtype=_dtype_spec(a.dtype), shape=list(a.shape),
                             strides=list(a.strides), offset=_address(a) - start)
        for i, (entry, _) in enumerate(self.tensors):
            entry["id"] = i   # one object per saved tensor, however often it is referenced

    def _pickled(self, obj):
        try:
            data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError) as e:
            raise TypeError(f"gpugrad.save: cannot save an object of type "
                            f"{type(obj).__name__}: it is not a state dict (tensors, arrays, "
                            f"numbers, strings, None, and dicts, lists or tuples of them) and "
                            f"it cannot be pickled ({e})") from None
        name = f"t{len(self.arrays)}"
        self.arrays[name] = np.frombuffer(data, dtype=np.uint8)
        return {"pickle": name, "type": type(obj).__qualname__}

    def _array(self, a, tensor):
        entry = {}
        if a.dtype.kind == "V" and a.dtype == _bfloat16.BF16:   # .npy has no bfloat16: its bits
            a, entry["dtype"] = a.view(np.uint16), "bfloat16"
            self.version = 2
        if a.dtype.kind not in "biufc":
            raise TypeError(f"gpugrad.save: cannot save arrays of dtype {a.dtype}")
        name = f"t{len(self.arrays)}"
        # NOTE: not np.ascontiguousarray, which turns a 0-d array into shape (1,)
        self.arrays[name] = a if a.flags.c_contiguous else a.copy(order="C")
        entry["tensor" if tensor else "ndarray"] = name
        return entry


def save(obj, f, *, format=None) -> None:
    """Write ``obj`` (a state dict, or nested dicts/lists of tensors and plain values) to ``f``,
    a path or a writable binary file.

    ``format`` (gpugrad's own keyword): ``"safetensors"`` (also chosen by a path ending in
    ``.safetensors``) writes a safetensors file, which holds a flat ``{name: tensor}`` dict
    only; ``"torch"`` writes PyTorch's zip format, which ``torch.load(weights_only=True)``
    reads: tensors, dicts, lists, tuples and plain values only. A path ending in ``.pt`` or
    ``.pth`` is written in PyTorch's format when the object fits it, in gpugrad's otherwise."""
    fmt = _format(f, format)
    if fmt == "safetensors":
        from ._serialization_safetensors import encode
        data = encode(obj)
        write = lambda fh: fh.write(data)
    elif fmt == "torch" or (fmt is None and _torch_name(f)
                            and (torch_zip := _as_torch_zip(obj)) is not None):
        from ._serialization_torch import encode_torch_zip, write_torch_zip
        pickled, storages = encode_torch_zip(obj) if fmt == "torch" else torch_zip
        write = lambda fh: write_torch_zip(fh, pickled, storages)
    else:
        w = _Writer()
        encoded = w.encode(obj)
        w.place_tensors()
        manifest = {"format": FORMAT, "version": w.version, "object": encoded}
        write = lambda fh: _write(fh, w.arrays, manifest)
    if isinstance(f, (str, os.PathLike)):
        _save_to_path(os.fspath(f), write)
    else:
        write(f)


def _torch_name(f) -> bool:
    """A path named as PyTorch's checkpoints are (``.pt``, ``.pth``): saved in PyTorch's
    layout when the object fits it, so ``torch.load`` opens what the name promises."""
    return isinstance(f, (str, os.PathLike)) and os.fspath(f).lower().endswith((".pt", ".pth"))


def _as_torch_zip(obj):
    """``obj`` encoded in PyTorch's layout, or None when that layout cannot hold it (numpy
    arrays, sets, bytes, complex numbers, whole pickled objects: gpugrad's own format holds
    those)."""
    from ._serialization_torch import encode_torch_zip
    try:
        return encode_torch_zip(obj)
    except TypeError:
        return None


def _format(f, format):
    if format not in (None, "safetensors", "torch"):
        raise ValueError(f"gpugrad: format must be None, 'safetensors' or 'torch', not "
                         f"{format!r}")
    if format is None and isinstance(f, (str, os.PathLike)) \
            and os.fspath(f).lower().endswith(".safetensors"):
        return "safetensors"
    return format


def _save_to_path(path, write):
    """Write aside, then rename: a crash, a full disk or a power cut leaves the old file whole.
    The temp file is unique to this call (two processes saving to one path each write their own
    and the last rename wins with a whole file), flushed to the disk before the rename, and the
    directory after it; on any error it is removed."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    while True:
        tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        try:   # mode 0o666 under the umask, as open() would create the file
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
            break
        except FileExistsError:
            continue
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(parent)


def _fsync_dir(path):
    """Make a rename in ``path`` durable (POSIX; Windows cannot open a directory for this)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _host(a):
    return a if isinstance(a, np.ndarray) else a.get()


def _address(a):
    return int(a.ctypes.data) if isinstance(a, np.ndarray) else int(a.data.ptr)


def _write(fh, arrays, manifest):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(MANIFEST, json.dumps(manifest))
        for name, a in arrays.items():
            with z.open(name + ".npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, a, allow_pickle=False)


# -- load ---------------------------------------------------------------------------------------
def load(f, map_location=None, weights_only=None, *, format=None, **_ignored):
    """Read what ``save`` (or PyTorch's ``torch.save``) wrote. ``map_location``: None (each
    tensor on its saved device), a device or string (everything there), a dict {saved device:
    new device}, or ``fn(storage, saved_location)`` returning a storage on the device to use
    (or None for the saved device). A safetensors file is recognised by its content (or
    ``format="safetensors"``, or its ``.safetensors`` name) and loads as a dict of tensors.
    ``weights_only``: None (the default) is True unless ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` is
    set; ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` makes it True always, as in PyTorch."""
    weights_only = resolve_weights_only(weights_only)
    if map_location is not None and not (isinstance(map_location, (str, dict, _backend.device))
                                         or callable(map_location)):
        raise TypeError("gpugrad.load: map_location must be None, a device, a string, a dict or "
                        f"a function, not {type(map_location).__name__}")
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    try:
        data = f if isinstance(f, (str, os.PathLike)) else io.BytesIO(f.read())
        fmt = _format(f, format)
        if fmt == "safetensors" or (not zipfile.is_zipfile(data) and _is_safetensors(data)):
            from ._serialization_safetensors import decode
            raw = data.getvalue() if isinstance(data, io.BytesIO) else _read_all(data)
            return decode(raw, name, map_location)
        if not zipfile.is_zipfile(data):
            if _head(data) == b"PK\x03\x04":   # starts like a zip, lacks its directory: cut off
                raise SerializationError(f"gpugrad.load: '{name}' is truncated (the archive's "
                                         "central directory is missing)")
            raise SerializationError(_foreign(name, "it is not a zip/npz archive"))
        with zipfile.ZipFile(data) as z:
            names = z.namelist()
            if MANIFEST not in names:
                if any(n.endswith("data.pkl") for n in names):
                    from ._serialization_torch import load_torch_zip
                    return load_torch_zip(z, name, lambda loc: _placer(loc, map_location),
                                          moved=_MOVED)
                raise SerializationError(_foreign(name, f"it has no {MANIFEST} manifest"))
        with zipfile.ZipFile(data) as z:
            npz = _Members(z, name)
            manifest = json.loads(npz.raw(MANIFEST).decode("utf-8"))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise SerializationError(_foreign(name, "its manifest is not gpugrad's"))
            if manifest.get("version", 0) > VERSION:
                raise SerializationError(
                    f"gpugrad.load: '{name}' was written by a newer gpugrad (format version "
                    f"{manifest['version']}); this one reads version {VERSION}")
            return _Reader(npz, map_location, weights_only).decode(manifest["object"])
    except (SerializationError, FileNotFoundError, pickle.UnpicklingError):
        raise
    except (zipfile.BadZipFile, EOFError, ValueError, KeyError, OSError, TypeError,
            AttributeError, IndexError, UnicodeError, NotImplementedError, RuntimeError,
            zlib.error, SyntaxError, MemoryError, RecursionError, OverflowError) as e:
        raise SerializationError(
            f"gpugrad.load: '{name}' is truncated or corrupted ({type(e).__name__}: {e})") from None


# the dtypes a file may name: bool, signed and unsigned integers, floats, complex (no objects,
# no structured or sub-array dtypes: numpy would build those from the file's bytes as pointers)
_KINDS = "biufc"


def _safe_dtype(spec, name, where):
    try:
        if spec == "bfloat16":   # (numpy's own spelling, '<V2', is refused: a bare void)
            return _bfloat16.require(_bfloat16.bfloat16)
        dt = np.dtype(spec)
    except (TypeError, ValueError, SyntaxError, RecursionError) as e:
        raise SerializationError(f"gpugrad.load: '{name}': {where} names an unreadable dtype "
                                 f"({type(e).__name__}: {e})") from None
    if dt.kind not in _KINDS or dt.hasobject or dt.fields is not None or dt.subdtype is not None:
        raise SerializationError(f"gpugrad.load: '{name}': {where} has dtype {dt.str!r}; only "
                                 "bool, integer, float and complex data is read")
    return dt


class _Members:
    """The members of a gpugrad.save archive. Each is read whole, so the zip's CRC is checked
    (numpy's reader stops where a damaged header says the data ends), and parsed with numeric
    dtypes only, the data's length checked against the header before anything is allocated."""

    def __init__(self, z, name):
        self.z, self.name = z, name

    def raw(self, member):
        try:
            return self.z.read(member)
        except KeyError:
            raise SerializationError(f"gpugrad.load: '{self.name}' has no member "
                                     f"'{member}'") from None
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as e:
            raise SerializationError(f"gpugrad.load: '{self.name}' is truncated or corrupted: "
                                     f"member '{member}' ({type(e).__name__}: {e})") from None

    def __getitem__(self, key):
        member = key + ".npy"
        data = self.raw(member)
        try:
            f = io.BytesIO(data)
            version = np.lib.format.read_magic(f)
            read = {(1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read is None:
                raise ValueError(f"unknown .npy format version {version}")
            shape, fortran, dtype = read(f)
        except SerializationError:
            raise
        except Exception as e:   # numpy parses the header with literal_eval: anything can come
            raise SerializationError(f"gpugrad.load: '{self.name}' is truncated or corrupted: "
                                     f"member '{member}' has a damaged header "
                                     f"({type(e).__name__}: {e})") from None
        dtype = _safe_dtype(dtype, self.name, f"member '{member}'")
        if not (isinstance(shape, tuple) and all(isinstance(n, int) and n >= 0 for n in shape)):
            raise SerializationError(f"gpugrad.load: '{self.name}' is truncated or corrupted: "
                                     f"member '{member}' has a damaged header (shape {shape!r})")
        count = math.prod(shape)
        body = memoryview(data)[f.tell():]
        if len(body) != count * dtype.itemsize:
            raise SerializationError(
                f"gpugrad.load: '{self.name}' is truncated or corrupted: member '{member}' holds "
                f"{len(body)} bytes of data where its header describes {count * dtype.itemsize}")
        a = np.frombuffer(body, dtype=dtype, count=count).copy()   # writable, the file's own
        return a.reshape(shape[::-1]).T if fortran else a.reshape(shape)


def _head(data, n=4):
    if isinstance(data, io.BytesIO):
        return data.getvalue()[:n]
    with open(data, "rb") as fh:
        return fh.read(n)


def _read_all(path):
    with open(path, "rb") as fh:
        return fh.read()


def _is_safetensors(data):
    # an 8-byte little-endian header length, then the header's JSON object
    head = _head(data, 9)
    return len(head) == 9 and head[8:9] == b"{"


def _foreign(name, why):
    return f"gpugrad.load: '{name}' is not a file written by gpugrad.save: {why}"


class _Reader:
    def __init__(self, npz, map_location, weights_only):
        self.npz, self.map_location, self.weights_only = npz, map_location, weights_only
        self.tensors = {}    # tensor id (or member name) -> tensor: one object per saved tensor
        self.storages = {}   # (member name, device) -> the buffer's bytes there

    def decode(self, v):
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        if not isinstance(v, dict):
            return v
        if "tensor" in v or "storage" in v:
            key = v.get("id", v.get("tensor"))
            t = self.tensors.get(key)
            if t is None:
                t = self.tensors[key] = self._tensor(v)
            return t
        if "ndarray" in v:
            return self._bits(v, self._member(v["ndarray"]))
        if "pickle" in v:
            return self._unpickle(v)
        if "float" in v:
            return float(v["float"])
        if "tuple" in v:
            return tuple(self.decode(x) for x in v["tuple"])
        for kind, build in _PLAIN.items():
            if kind in v:
                if kind == "dtype":
                    return _safe_dtype(v[kind], self.npz.name, "a saved dtype")
                return build([self.decode(x) for x in v[kind]] if kind in _NESTED else v[kind])
        kind = "odict" if "odict" in v else "dict"
        items = [(self.decode(k), self.decode(x)) for k, x in v[kind]]
        return OrderedDict(items) if kind == "odict" else dict(items)

    def _member(self, name):
        return self.npz[name]

    def _bits(self, v, a):
        """A member saved as the bits of another dtype (bfloat16's, as uint16) in that dtype."""
        if "dtype" not in v:
            return a
        dtype = _safe_dtype(v["dtype"], self.npz.name, "a saved array")
        if a.dtype.itemsize != dtype.itemsize:
            raise SerializationError(f"gpugrad.load: '{self.npz.name}' is truncated or "
                                     f"corrupted: an array of {a.dtype} is saved as {dtype}")
        return a.view(dtype)

    def _unpickle(self, v):
        data = self._member(v["pickle"]).tobytes()
        obj = _loads_weights_only(data, _MOVED) if self.weights_only else _loads(data)
        if isinstance(self.map_location, (str, _backend.device)) and hasattr(obj, "to"):
            obj = obj.to(_backend.device(self.map_location))
        return obj

    def _tensor(self, v):
        saved = v.get("device", "cpu")
        if "storage" in v:
            a = self._view(v, saved)
        else:
            a = _placer(saved, self.map_location)(self._bits(v, self.npz[v["tensor"]]))
        t = Tensor._make(a)
        if v.get("parameter"):
            from .nn.parameter import Parameter
            return Parameter(t, v.get("requires_grad", True))
        if v.get("requires_grad"):
            t.requires_grad = True
        return t

    def _view(self, v, saved):
        key = (v["storage"], saved)
        buf = self.storages.get(key)
        if buf is None:
            buf = self.storages[key] = _placer(saved, self.map_location)(
                self.npz[v["storage"]])
        dtype = _safe_dtype(v["dtype"], self.npz.name, f"the view of '{v['storage']}'")
        return strided(buf, v["offset"], dtype, v["shape"], v["strides"])


def _dtype_spec(d) -> str:
    """How a dtype is written: numpy's string, or 'bfloat16' (numpy's is a bare '<V2')."""
    return "bfloat16" if d.kind == "V" and d == _bfloat16.BF16 else d.str


def strided(buf, offset, dtype, shape, strides):
    """The array of ``dtype``, ``shape`` and byte ``strides`` starting ``offset`` bytes into
    the flat uint8 buffer ``buf`` (numpy or CuPy), sharing its memory."""
    if isinstance(buf, np.ndarray):   # base stays buf: storage() and storage_offset() see it
        return np.ndarray(tuple(shape), dtype, buffer=buf, offset=offset, strides=tuple(strides))
    flat = buf[offset:]
    typed = flat[:flat.size - flat.size % dtype.itemsize].view(dtype)
    return _backend.xp_of(buf).lib.stride_tricks.as_strided(typed, tuple(shape), tuple(strides))


_NESTED = ("set", "frozenset", "complex")
_PLAIN = {"size": Size, "set": set, "frozenset": frozenset, "complex": lambda v: complex(*v),
          "bytes": bytes.fromhex, "dtype": np.dtype, "device_object": _backend.device}


def _target_device(saved, map_location, host=None):
    if map_location is None:
        return _backend.device(saved)
    if isinstance(map_location, dict):
        return _backend.device(map_location.get(saved, saved))
    if callable(map_location):
        from .storage import UntypedStorage
        got = map_location(UntypedStorage(np.zeros(0, np.uint8) if host is None else
                                          host.reshape(-1).view(np.uint8)), saved)
        return _backend.device(saved) if got is None else _backend.device(got.device)
    return _backend.device(map_location)


def _placer(saved, map_location):
    """A function putting a host array where a tensor saved on ``saved`` belongs."""
    def place(a):
        dev = _target_device(saved, map_location, a)
        if dev.type == "cpu":
            return a
        try:
            return _backend.to_device(a, dev)
        except RuntimeError as e:
            raise RuntimeError(f"gpugrad.load: a tensor saved on '{saved}' cannot be placed on "
                               f"'{dev}' here ({e}). Pass map_location='cpu' to load it on "
                               "the CPU.") from None
    return place
