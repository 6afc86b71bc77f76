"""Conversion: ``Tensor.to`` and its shorthands (``cuda``, ``cpu``, ``float``, ``double`` ...,
``type``, ``type_as``), a copy to another dtype or device through ``ToCopyBackward0``."""
from __future__ import annotations

import numpy as np

from .. import _backend, _bfloat16
from .._arguments import expect_tensor
from .._creation import as_dtype
from .._exports import tensor_method
from ..tensor import Tensor
from .shape import views


def to_args(args, kwargs):
    """(device or None, dtype or None) from PyTorch's ``to`` forms: ``to(dtype)``,
    ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``, ``to(cuda_index)``."""
    dtype, dev = kwargs.get("dtype"), kwargs.get("device")
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _backend.device)) and not _is_dtype_name(a):
            dev = a
        elif isinstance(a, int) and not isinstance(a, bool):
            dev = _backend.device("cuda", a)
        elif a is not None:
            dtype = a
    return (None if dev is None else _backend.device(dev)), as_dtype(dtype)


@tensor_method("to")
def _to(self, *args, **kwargs):
    dev, dtype = to_args(args, kwargs)
    if not kwargs.get("copy") and (dtype is None or dtype == self._data.dtype) and (
            dev is None or dev == self.device):
        return self
    if (dtype or self._data.dtype).kind == "V":   # bfloat16 never goes to CUDA
        _bfloat16.check_device(dtype or self._data.dtype, (dev or self.device).type)
    if dtype is not None and not _bfloat16.is_inexact(np.dtype(dtype)) and self._rg:
        from ..autograd.grad_mode import no_grad
        with no_grad():   # integer and bool results are not differentiable (PyTorch)
            return views.ToCopyBackward0.apply(self, dtype=dtype, device=dev)
    return views.ToCopyBackward0.apply(self, dtype=dtype, device=dev)


def _is_dtype_name(a):
    return isinstance(a, str) and a.replace("torch.", "").replace("gpugrad.", "") in (
        "float16", "float32", "float64", "int32", "int64", "bool", "half", "float", "double",
        "long", "int", "int8", "uint8", "int16", "bfloat16")


@tensor_method("cuda")
def _cuda(self, device=None):
    return _to(self, "cuda" if device is None else _backend.device(device if not isinstance(
        device, int) else f"cuda:{device}"))


tensor_method("cpu")(lambda s: _to(s, "cpu"))
tensor_method("type_as")(lambda s, o: _to(s, expect_tensor(o, "type_as", "other").dtype))
tensor_method("float")(lambda s: _to(s, np.float32))
tensor_method("double")(lambda s: _to(s, np.float64))
tensor_method("half")(lambda s: _to(s, np.float16))
tensor_method("bfloat16")(lambda s: _to(s, _bfloat16.bfloat16))
tensor_method("long")(lambda s: _to(s, np.int64))
tensor_method("int")(lambda s: _to(s, np.int32))
tensor_method("bool")(lambda s: _to(s, np.bool_))
tensor_method("byte")(lambda s: s.to(np.uint8))
tensor_method("char")(lambda s: s.to(np.int8))
tensor_method("short")(lambda s: s.to(np.int16))


@tensor_method("type")
def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``t.type()``: the type's name; ``t.type(T)``: t as type T: a dtype, a tensor type
    (``gpugrad.FloatTensor``) or such a type's name (``'torch.cuda.LongTensor'``, which also
    names the device)."""
    from .._creation import TENSOR_TYPES, TensorType
    from ..tensor import describe
    if dtype is None:
        return describe(self._data).split(" ")[0]
    device = None
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.").removeprefix("gpugrad.")
        cls = TENSOR_TYPES.get(name.removeprefix("cuda."))
        if cls is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype, device = cls, "cuda" if name.startswith("cuda.") else "cpu"
    if isinstance(dtype, TensorType):
        dtype, device = dtype.dtype, device or "cpu"
    return self.to(dtype) if device is None else self.to(device, dtype)
