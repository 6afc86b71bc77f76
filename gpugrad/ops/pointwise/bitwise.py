"""Bitwise functions of integer and bool tensors: bitwise_and, bitwise_or, bitwise_xor,
bitwise_not, bitwise_left_shift, bitwise_right_shift (no gradients).
"""
from __future__ import annotations

import numpy as np

from ..._backend import xp_of
from ...tensor import Tensor
from ..linalg.norms import _kind_name


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


# -- bitwise --------------------------------------------------------------------------------------
def _bitwise(name, ufunc):
    def fn(input, other=None, *, out=None):
        a = _raw(input)
        b = _raw(other)
        xp = xp_of(a if isinstance(input, Tensor) else b)
        for v in (a, b):
            if isinstance(v, (float, complex)) or getattr(v, "dtype", np.dtype(int)).kind in "fc":
                kind = _kind_name(v.dtype) if hasattr(v, "dtype") else "Float"
                raise NotImplementedError(f'"{name}_cpu" not implemented for \'{kind}\'')
        f = getattr(xp, ufunc)
        y = f(xp.asarray(a)) if other is None else f(xp.asarray(a), b)
        return Tensor._make(xp.asarray(y))
    fn.__name__ = ufunc
    return fn


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")
bitwise_not = _bitwise("bitwise_not", "invert")
bitwise_left_shift = _bitwise("lshift", "left_shift")
bitwise_right_shift = _bitwise("rshift", "right_shift")


OPS: list = []
