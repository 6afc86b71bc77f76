"""Bitwise functions of integer and bool tensors: bitwise_and, bitwise_or, bitwise_xor,
bitwise_not, bitwise_left_shift, bitwise_right_shift (no gradients).
"""
from __future__ import annotations

import numpy as np

from ..._arguments import is_operand, not_tensor, type_name
from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor import Tensor
from ...tensor_inplace import inplace
from ..linalg.norms import _kind_name


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


# -- bitwise --------------------------------------------------------------------------------------
def _bitwise(name, ufunc):
    def fn(input, other=None, *, out=None):
        for arg, v in (("input", input), ("other", other)):
            if v is not None and not isinstance(v, Tensor) and not is_operand(v):
                raise not_tensor(name, arg, v)
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
export("bitwise_and", method=True)(bitwise_and)
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
export("bitwise_or", method=True)(bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")
export("bitwise_xor", method=True)(bitwise_xor)
bitwise_not = _bitwise("bitwise_not", "invert")
export("bitwise_not", method=True)(bitwise_not)
bitwise_left_shift = _bitwise("lshift", "left_shift")
export("bitwise_left_shift", method=("bitwise_left_shift", "__lshift__"))(bitwise_left_shift)
bitwise_right_shift = _bitwise("rshift", "right_shift")
export("bitwise_right_shift", method=("bitwise_right_shift", "__rshift__"))(bitwise_right_shift)


OPS: list = []


# -- Tensor methods: the operators ``& | ^ ~ << >>`` and the in-place forms -----------------------
def _bitwise_op(fn, symbol=None):
    """Operators ``& | ^ ~`` are bitwise, as in PyTorch: logical on two bools, an integer
    result for a bool with an integer, refused for floating-point tensors."""
    def op(self, *other):
        if not other and self._data.dtype.kind not in "iub":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        if other and not isinstance(other[0], Tensor) and not is_operand(other[0]):
            raise TypeError(f"unsupported operand type(s) for {symbol}: 'Tensor' and "
                            f"'{type_name(other[0])}'")
        return fn(self, *other)
    return op


tensor_method("__and__", "__rand__")(_bitwise_op(bitwise_and, "&"))
tensor_method("__or__", "__ror__")(_bitwise_op(bitwise_or, "|"))
tensor_method("__xor__", "__rxor__")(_bitwise_op(bitwise_xor, "^"))
tensor_method("__invert__")(_bitwise_op(bitwise_not))
tensor_method("__rlshift__")(lambda s, o: bitwise_left_shift(o, s))
tensor_method("__rrshift__")(lambda s, o: bitwise_right_shift(o, s))
tensor_method("bitwise_and_")(lambda s, other, _fn=bitwise_and: inplace(s, _fn, other))
tensor_method("bitwise_or_")(lambda s, other, _fn=bitwise_or: inplace(s, _fn, other))
tensor_method("bitwise_xor_")(lambda s, other, _fn=bitwise_xor: inplace(s, _fn, other))
tensor_method("bitwise_left_shift_")(lambda s, other, _fn=bitwise_left_shift: inplace(
    s, _fn, other))
tensor_method("bitwise_right_shift_")(lambda s, other, _fn=bitwise_right_shift: inplace(
    s, _fn, other))
tensor_method("bitwise_not_")(lambda s: inplace(s, bitwise_not))
