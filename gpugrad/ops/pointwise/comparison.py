"""Elementwise tests: isclose, isin, signbit, isneginf, isposinf, isreal; and the tensor
predicates is_nonzero, is_same_size, is_signed.
"""
from __future__ import annotations

from ..._backend import xp_of
from ...tensor import Tensor, scalar_name
from ..indexing.gather import _data


def _kind(dtype):
    return scalar_name(dtype).capitalize()


def _raw(v):
    return v._data if isinstance(v, Tensor) else v


# -- not differentiable -------------------------------------------------------------------------
def _pair(input, other):
    a, b = _raw(input), _raw(other)
    xp = xp_of(a if isinstance(input, Tensor) else b)
    return xp, xp.asarray(a), xp.asarray(b)


def _integral_only(name, *arrays):
    for v in arrays:
        if v.dtype.kind not in "iub":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_kind(v.dtype)}\'')


def _predicate(ufunc):
    def fn(input):
        a = input._data
        xp = xp_of(a)
        return Tensor._make(xp.asarray(getattr(xp, ufunc)(a)))
    fn.__name__ = ufunc
    fn.__doc__ = f"numpy's {ufunc}, entrywise (a bool tensor)."
    return fn


signbit = _predicate("signbit")
isneginf = _predicate("isneginf")
isposinf = _predicate("isposinf")
isreal = _predicate("isreal")


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each entry of elements is among test_elements (a bool tensor of elements'
    shape)."""
    xp, a, b = _pair(elements, test_elements)
    return Tensor._make(xp.asarray(xp.isin(a, b, invert=invert)))


def is_nonzero(input) -> bool:
    """The truth of a one-element tensor."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


def is_same_size(input, other) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input) -> bool:
    return input.dtype.kind in "fic"


def _compare(name):
    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(other).__name__})")
        return getattr(input, name)(other)
    fn.__name__ = name
    return fn


eq, ne, lt, le, gt, ge = (_compare(n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input._data
    return Tensor._make(xp_of(a).isclose(a, _data(other), rtol, atol, equal_nan))


OPS: list = []
