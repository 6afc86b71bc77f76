"""Elementwise tests: isclose, isin, signbit, isneginf, isposinf, isreal; and the tensor
predicates is_nonzero, is_same_size, is_signed.
"""
from __future__ import annotations

from ..._backend import xp_of
from ...tensor import Tensor
from ..indexing.gather import _data
from .unary import _pair, _predicate

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


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a = input._data
    return Tensor._make(xp_of(a).isclose(a, _data(other), rtol, atol, equal_nan))


OPS: list = []
