"""``.safetensors`` files for ``gpugrad.save`` / ``gpugrad.load``, through the ``safetensors``
package.

A safetensors file is a JSON header naming each tensor's dtype, shape and byte range, then the
raw bytes: a flat ``{name: tensor}`` dict and nothing else, so loading it cannot run code. What
cannot go in (a nested dict, a list, a number, a tensor whose memory another saved tensor also
uses) is refused with the name of the entry, as ``safetensors.torch.save_file`` refuses it.

Reading parses the header with the package's validating parser (every byte range inside the
file, no overlaps, lengths matching the shapes) and builds only numeric dtypes; any damage is a
``SerializationError`` naming the file. bfloat16 tensors load as bfloat16 (through ml_dtypes);
only without ml_dtypes installed do they load as float32 (exactly: a bfloat16 is the top half of
a float32's bits), with a ``UserWarning`` naming them (docs/design.md, "Checkpoint formats").
"""
from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from ._bfloat16 import BF16
from .serialization import SerializationError, _address, _host, _placer
from .tensor import Tensor

# the dtypes of a safetensors header that gpugrad builds, and the name each numpy dtype is written
# under (safetensors' own names), BF16 with them; any other (F8_*, F4 ...) is refused
_DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "U16": np.uint16, "I16": np.int16,
           "U32": np.uint32, "I32": np.int32, "U64": np.uint64, "I64": np.int64,
           "F16": np.float16, "F32": np.float32, "F64": np.float64, "C64": np.complex64}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}
if BF16 is not None:
    _DTYPES["BF16"] = BF16
    _NAMES[BF16] = "BF16"


def _package(what):
    try:
        import safetensors
        import safetensors.numpy
    except ImportError:
        raise ImportError(f"{what} .safetensors files needs the safetensors package: "
                          "pip install safetensors") from None
    return safetensors


def encode(obj) -> bytes:
    """The bytes of a safetensors file holding ``obj``, a flat dict of tensors."""
    st = _package("gpugrad.save: writing")
    if not isinstance(obj, Mapping):
        raise TypeError(f"gpugrad.save: a .safetensors file holds a flat dict of tensors "
                        f"{{name: tensor}}, not a {type(obj).__name__}")
    arrays, owners = {}, {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise TypeError(f"gpugrad.save: a .safetensors file names its tensors with strings; "
                            f"key {key!r} is of type {type(key).__name__}")
        if isinstance(value, Mapping):
            raise ValueError(f"gpugrad.save: a .safetensors file holds a flat dict of tensors; "
                             f"'{key}' is a nested dict. Save a flat state dict (model."
                             "state_dict(), or join the nested keys with '.')")
        if not isinstance(value, Tensor):
            raise TypeError(f"gpugrad.save: a .safetensors file holds tensors only; '{key}' is "
                            f"of type {type(value).__name__} (save it with the default format "
                            "instead)")
        a = value._data
        name = _NAMES.get(a.dtype)
        if name is None:
            raise TypeError(f"gpugrad.save: safetensors has no dtype for '{key}' ({a.dtype})")
        root = a
        while isinstance(root.base, type(a)):
            root = root.base
        for other in owners.get(id(root), ()):
            if a.size and obj[other]._data.size and _share(a, obj[other]._data):
                raise RuntimeError(
                    f"gpugrad.save: tensors '{other}' and '{key}' share memory; a .safetensors "
                    "file stores each tensor on its own, so they would load as two. Save one "
                    "of them, or a .clone() of the other, as safetensors.torch asks")
        owners.setdefault(id(root), []).append(key)
        arrays[key] = np.ascontiguousarray(_host(a)).reshape(a.shape)
    try:
        return st.numpy.save(arrays)
    except Exception as e:   # the package's own refusals (e.g. a name too long for the header)
        raise ValueError(f"gpugrad.save: safetensors cannot write this dict: {e}") from None


def _share(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return bool(np.shares_memory(a, b))
    lo, hi = (_span(x) for x in (a, b))   # CuPy: overlapping byte ranges
    return lo[0] < hi[1] and hi[0] < lo[1]


def _span(a):
    start = _address(a) + sum(s * (n - 1) for s, n in zip(a.strides, a.shape) if s < 0)
    return start, start + sum(abs(s) * (n - 1) for s, n in zip(a.strides, a.shape)) + a.itemsize


def decode(data: bytes, name: str, map_location=None) -> dict:
    """The ``{name: tensor}`` dict in the safetensors file ``data`` (named ``name`` in errors)."""
    st = _package("gpugrad.load: reading")
    try:
        records = st.deserialize(bytes(data))
    except Exception as e:   # SafetensorError, and the header's JSON errors
        raise SerializationError(f"gpugrad.load: '{name}' is not a readable .safetensors file "
                                 f"({type(e).__name__}: {e})") from None
    place = _placer("cpu", map_location)
    out, widened = {}, []
    for key, rec in records:
        dtype, shape, raw = rec.get("dtype"), rec.get("shape"), rec.get("data")
        if dtype == "BF16" and BF16 is None:   # no ml_dtypes: widened, exactly
            a = _bfloat16_to_float32(raw)
            widened.append(key)
        elif dtype == "BOOL":
            a = np.frombuffer(raw, dtype=np.uint8) != 0   # a byte other than 0 or 1 is True
        elif dtype in _DTYPES:
            a = np.frombuffer(raw, dtype=np.dtype(_DTYPES[dtype]).newbyteorder("<")).astype(
                _DTYPES[dtype])
        else:
            raise SerializationError(f"gpugrad.load: '{name}': tensor '{key}' has dtype "
                                     f"{dtype}, which gpugrad does not read")
        if a.size != int(np.prod(shape, dtype=np.int64)):
            raise SerializationError(f"gpugrad.load: '{name}': tensor '{key}' holds {a.size} "
                                     f"values where its shape {shape} needs another count")
        out[key] = Tensor._make(place(a.reshape(shape)))
    if widened:
        names = ", ".join(map(repr, sorted(widened)))
        warnings.warn(f"gpugrad.load: '{name}': bfloat16 needs the ml_dtypes package (pip "
                      f"install ml_dtypes); {names} load as float32 (exactly the same values)",
                      UserWarning, stacklevel=3)
    return out


def _bfloat16_to_float32(raw) -> np.ndarray:
    bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
    return bits.view(np.float32)

