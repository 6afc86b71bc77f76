"""Dtype facts and promotion: finfo, iinfo, promote_types, result_type, can_cast, is_complex.

gpugrad's dtypes are numpy dtypes; promotion follows PyTorch's rules (``ops._op.result_type``):
a higher category (bool < integer < floating < complex) wins whatever its width, so
float16 with int64 is float16, where numpy would widen to float64.
"""
from __future__ import annotations

import numpy as np

from ._bfloat16 import finfo_values, is_inexact
from ._creation import as_dtype, get_default_dtype
from ._promotion import _CATEGORY, _widest
from ._promotion import result_type as _result_type
from .tensor import Tensor


class finfo:  # noqa: N801  (PyTorch's name)
    """Machine limits of a floating-point dtype (the default dtype when none is given)."""

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else as_dtype(type)
        if not is_inexact(d):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo "
                            "to handle 'torch.finfo'")
        self.dtype = d.name
        low = finfo_values(d)   # bfloat16: numpy's finfo does not know it
        if low is not None:
            self.bits, self.eps, self.resolution = low["bits"], low["eps"], low["resolution"]
            self.max, self.min, self.tiny = low["max"], low["min"], low["tiny"]
            self.smallest_normal = self.tiny
            return
        info = np.finfo(d)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801  (PyTorch's name)
    """Limits of an integer dtype."""

    def __init__(self, type):
        d = as_dtype(type)
        if d.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(d)
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = d.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def promote_types(type1, type2):
    """The dtype both promote to: the higher category, then the wider type within it."""
    return _widest([as_dtype(type1), as_dtype(type2)])


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on these operands (tensors or numbers) returns."""
    return _result_type([t._data if isinstance(t, Tensor) else t for t in (tensor1, tensor2)])


def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` -> ``to``: never to a lower category
    (float to integer, integer to bool, complex to real); any width within one."""
    return _CATEGORY[as_dtype(from_).kind] <= _CATEGORY[as_dtype(to).kind]


def is_complex(input) -> bool:
    return input.dtype.kind == "c"
