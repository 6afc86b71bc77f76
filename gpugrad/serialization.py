"""``gpugrad.save`` / ``gpugrad.load``: state dicts in a file that cannot run code when loaded.

The file is an ``.npz`` (a zip of ``.npy`` arrays, read with ``allow_pickle=False``) holding one
array per tensor and a JSON manifest, ``gpugrad.json``, that describes the saved object: nested
dicts, lists and tuples of tensors, numpy arrays, numbers, strings, booleans and None.

Anything else (a whole ``nn.Module``, an object of the user's class) is pickled into a member of
its own, as PyTorch pickles it, and, as in PyTorch since 2.6, ``load`` unpickles it only when
asked with ``weights_only=False`` (unpickling can run code). Tensors inside a pickled object
come back on the CPU, or on ``map_location``'s device when it names one.
"""
from __future__ import annotations

import io
import json
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np

from . import _backend
from .tensor import Tensor

MANIFEST = "gpugrad.json"
FORMAT = "gpugrad.save"
VERSION = 1

__all__ = ["save", "load", "SerializationError"]


class SerializationError(RuntimeError):
    """The file is not one ``gpugrad.save`` wrote, or it is damaged."""


# -- save ---------------------------------------------------------------------------------------
class _Writer:
    def __init__(self):
        self.arrays = {}    # member name -> host array
        self.seen = {}      # id(tensor) -> its manifest entry (shared tensors are saved once)

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
                entry = self._array(obj._host(), tensor=True)
                entry["requires_grad"] = bool(obj.requires_grad)
                entry["device"] = str(obj.device)
                from .nn.parameter import Parameter
                if isinstance(obj, Parameter):
                    entry["parameter"] = True
                self.seen[id(obj)] = entry
            return entry
        if isinstance(obj, np.ndarray):
            return self._array(obj, tensor=False)
        if isinstance(obj, dict):
            kind = "odict" if isinstance(obj, OrderedDict) else "dict"
            return {kind: [[self.encode(k), self.encode(v)] for k, v in obj.items()]}
        if isinstance(obj, tuple):
            return {"tuple": [self.encode(v) for v in obj]}
        if isinstance(obj, list):
            return [self.encode(v) for v in obj]
        return self._pickled(obj)

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
        if a.dtype.kind not in "biufc":
            raise TypeError(f"gpugrad.save: cannot save arrays of dtype {a.dtype}")
        name = f"t{len(self.arrays)}"
        # NOTE: not np.ascontiguousarray, which turns a 0-d array into shape (1,)
        self.arrays[name] = a if a.flags.c_contiguous else a.copy(order="C")
        return {"tensor" if tensor else "ndarray": name}


def save(obj, f) -> None:
    """Write ``obj`` (a state dict, or nested dicts/lists of tensors and plain values) to ``f``,
    a path or a writable binary file."""
    w = _Writer()
    manifest = {"format": FORMAT, "version": VERSION, "object": w.encode(obj)}
    if isinstance(f, (str, os.PathLike)):
        tmp = os.fspath(f) + ".tmp"   # write aside, then rename: a crash keeps the old file
        with open(tmp, "wb") as fh:
            _write(fh, w.arrays, manifest)
        os.replace(tmp, f)
    else:
        _write(f, w.arrays, manifest)


def _write(fh, arrays, manifest):
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(MANIFEST, json.dumps(manifest))
        for name, a in arrays.items():
            with z.open(name + ".npy", "w", force_zip64=True) as out:
                np.lib.format.write_array(out, a, allow_pickle=False)


# -- load ---------------------------------------------------------------------------------------
def load(f, map_location=None, weights_only=True, **_ignored):
    """Read what ``save`` wrote. ``map_location``: None (each tensor on its saved device), a
    device or string (everything there), or a dict {saved device: new device}."""
    if map_location is not None and not isinstance(map_location, (str, dict, _backend.device)):
        raise TypeError("gpugrad.load: map_location must be None, a device, a string or a dict, "
                        f"not {type(map_location).__name__}")
    name = os.fspath(f) if isinstance(f, (str, os.PathLike)) else getattr(f, "name", "<file>")
    try:
        data = f if isinstance(f, (str, os.PathLike)) else io.BytesIO(f.read())
        if not zipfile.is_zipfile(data):
            if _head(data) == b"PK\x03\x04":   # starts like a zip, lacks its directory: cut off
                raise SerializationError(f"gpugrad.load: '{name}' is truncated (the archive's "
                                         "central directory is missing)")
            raise SerializationError(_foreign(name, "it is not a zip/npz archive"))
        with np.load(data, allow_pickle=False) as npz:
            if MANIFEST not in npz.files:
                why = ("it looks like a PyTorch checkpoint (pickle-based), which gpugrad does not "
                       "load because unpickling can run code" if any(
                           n.endswith("data.pkl") for n in npz.files) else
                       f"it has no {MANIFEST} manifest")
                raise SerializationError(_foreign(name, why))
            manifest = json.loads(bytes(npz[MANIFEST]).decode("utf-8"))
            if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
                raise SerializationError(_foreign(name, "its manifest is not gpugrad's"))
            if manifest.get("version", 0) > VERSION:
                raise SerializationError(
                    f"gpugrad.load: '{name}' was written by a newer gpugrad (format version "
                    f"{manifest['version']}); this one reads version {VERSION}")
            return _Reader(npz, map_location, weights_only).decode(manifest["object"])
    except SerializationError:
        raise
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, EOFError, ValueError, KeyError, OSError, TypeError) as e:
        raise SerializationError(
            f"gpugrad.load: '{name}' is truncated or corrupted ({type(e).__name__}: {e})") from None


def _head(data):
    if isinstance(data, io.BytesIO):
        return data.getvalue()[:4]
    with open(data, "rb") as fh:
        return fh.read(4)


def _foreign(name, why):
    return f"gpugrad.load: '{name}' is not a file written by gpugrad.save: {why}"


class _Reader:
    def __init__(self, npz, map_location, weights_only):
        self.npz, self.map_location, self.weights_only = npz, map_location, weights_only
        self.tensors = {}   # member name -> tensor (tensors saved once load as one object)

    def decode(self, v):
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        if not isinstance(v, dict):
            return v
        if "tensor" in v:
            t = self.tensors.get(v["tensor"])
            if t is None:
                t = self.tensors[v["tensor"]] = self._tensor(v)
            return t
        if "ndarray" in v:
            return self._member(v["ndarray"])
        if "pickle" in v:
            return self._unpickle(v)
        if "float" in v:
            return float(v["float"])
        if "tuple" in v:
            return tuple(self.decode(x) for x in v["tuple"])
        kind = "odict" if "odict" in v else "dict"
        items = [(self.decode(k), self.decode(x)) for k, x in v[kind]]
        return OrderedDict(items) if kind == "odict" else dict(items)

    def _member(self, name):
        return self.npz[name]

    def _unpickle(self, v):
        if self.weights_only:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file holds a pickled object of type "
                f"{v.get('type', '?')} (gpugrad.save pickles what is not a state dict). "
                "Re-running gpugrad.load with weights_only=False will load it, but unpickling "
                "can run arbitrary code: do it only if you got the file from a trusted source. "
                "Saving model.state_dict() instead avoids the question.")
        obj = pickle.loads(self._member(v["pickle"]).tobytes())
        if isinstance(self.map_location, (str, _backend.device)) and hasattr(obj, "to"):
            obj = obj.to(_backend.device(self.map_location))
        return obj

    def _tensor(self, v):
        a = self._member(v["tensor"])
        saved = v.get("device", "cpu")
        dev = _target_device(saved, self.map_location)
        if dev.type != "cpu":
            try:
                a = _backend.to_device(a, dev)
            except RuntimeError as e:
                raise RuntimeError(f"gpugrad.load: a tensor saved on '{saved}' cannot be placed on "
                                   f"'{dev}' here ({e}). Pass map_location='cpu' to load it on "
                                   "the CPU.") from None
        t = Tensor._make(a)
        if v.get("parameter"):
            from .nn.parameter import Parameter
            return Parameter(t, v.get("requires_grad", True))
        if v.get("requires_grad"):
            t.requires_grad = True
        return t


def _target_device(saved, map_location):
    if map_location is None:
        return _backend.device(saved)
    if isinstance(map_location, dict):
        return _backend.device(map_location.get(saved, saved))
    return _backend.device(map_location)
