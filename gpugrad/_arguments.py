"""PyTorch's argument errors: a value of the wrong type given to a public function is a
``TypeError`` naming the function, the argument and the type, before numpy sees the value (so
no numpy or Python internals reach the message).

These run on the branch where an argument is not what the fast path expects: the common call
(a Tensor, an int dim) pays an ``isinstance`` or a class comparison at most.
"""
from __future__ import annotations

import numbers
import operator

import numpy as np

from . import _backend
from .tensor import Tensor


def type_name(v) -> str:
    """A value's type as PyTorch names it in argument errors (``list``, ``numpy.ndarray``,
    ``Tensor``)."""
    if isinstance(v, Tensor):
        return "Tensor"
    t = type(v)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def not_tensor(fn: str, arg: str, v) -> TypeError:
    return TypeError(f"{fn}(): argument '{arg}' must be Tensor, not {type_name(v)}")


def expect_tensor(v, fn: str, arg: str = "input"):
    """``v`` itself when it is a Tensor, else PyTorch's TypeError."""
    if not isinstance(v, Tensor):
        raise not_tensor(fn, arg, v)
    return v


def tensor_data(v, fn: str, arg: str = "index"):
    """The array of a tensor argument (an array itself is taken: gpugrad's own functions pass
    them), or PyTorch's TypeError for anything else (a list of indices)."""
    if isinstance(v, Tensor):
        return v._data
    if _backend.is_array(v) and not isinstance(v, np.generic):
        return v
    raise not_tensor(fn, arg, v)


def expect_tensors(fn: str, names, *values, arrays=False):
    """PyTorch's TypeError for the first of ``values`` that is not a Tensor (``arrays``: an
    array is taken too, for functions gpugrad's own code calls with arrays)."""
    for arg, v in zip(names, values):
        if not isinstance(v, Tensor) and not (
                arrays and _backend.is_array(v) and not isinstance(v, np.generic)):
            raise not_tensor(fn, arg, v)


def is_operand(v) -> bool:
    """Whether a value that is not a Tensor may stand for one in an elementwise op: a number,
    or an array (gpugrad's own functions pass them)."""
    return isinstance(v, numbers.Number) or _backend.is_array(v)


def expect_operand(v, fn: str, arg: str = "other"):
    """``v`` when it is a Tensor or a number (or an array), else PyTorch's TypeError."""
    if v.__class__ is not int and v.__class__ is not float and not isinstance(v, Tensor) \
            and not is_operand(v):
        raise not_tensor(fn, arg, v)
    return v


def expect_int(v, fn: str, arg: str = "dim") -> int:
    """``v`` as an int (a numpy integer too); a bool, float, string or None is PyTorch's
    TypeError naming the argument."""
    if v.__class__ is int:
        return v
    if not isinstance(v, bool):
        try:
            return operator.index(v)
        except TypeError:
            pass
    raise TypeError(f"{fn}(): argument '{arg}' must be int, not {type_name(v)}")


def expect_ints(values, fn: str, arg: str = "size") -> tuple:
    """A sequence of ints (a shape, a permutation) as a tuple of ints, or PyTorch's TypeError
    naming the first entry that is not one (a bool is one, except first)."""
    out = []
    for k, v in enumerate(values):
        if v.__class__ is int:
            out.append(v)
            continue
        try:
            if k == 0 and isinstance(v, bool):   # PyTorch reads the first entry's type only
                raise TypeError
            out.append(operator.index(v))
        except TypeError:
            raise TypeError(f"{fn}(): argument '{arg}' must be tuple of ints, but found element "
                            f"of type {type_name(v)} at pos {k}") from None
    return tuple(out)


def expect_number(v, fn: str, arg: str):
    """``v`` when it is a number (or a one-element tensor's value), else PyTorch's TypeError."""
    if isinstance(v, numbers.Number) or isinstance(v, np.generic) and v.dtype.kind in "biufc":
        return v
    raise TypeError(f"{fn}(): argument '{arg}' must be Number, not {type_name(v)}")


def fits(value, dtype) -> bool:
    """Whether the number ``value`` can be written into a tensor of ``dtype`` (PyTorch's check
    before it writes a number): a complex number with an imaginary part fits no real dtype; a
    float fits an integer dtype when it is finite and, truncated, in range; -1 fits uint8 (it
    wraps to 255, as in PyTorch)."""
    dtype = np.dtype(dtype)
    if isinstance(value, (complex, np.complexfloating)):
        return dtype.kind == "c" or value.imag == 0 and fits(value.real, dtype)
    if dtype.kind not in "iu":
        return True
    if not isinstance(value, (int, np.integer)):
        if not np.isfinite(value):
            return False
        value = int(value)
    info = np.iinfo(dtype)
    low = -info.max if info.min == 0 else info.min
    return low <= int(value) <= info.max


def overflow(value, dtype) -> RuntimeError:
    """PyTorch's error for a number that does not fit the dtype it is written into."""
    name = np.dtype(dtype).name
    name = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "int64": "int64_t"}.get(name, name)
    return RuntimeError(f"value cannot be converted to type {name} without overflow")
