"""Elementwise tests: isclose, isin, signbit, isneginf, isposinf, isreal; and the tensor
predicates is_nonzero, is_same_size, is_signed.
"""
from __future__ import annotations

import numbers

import numpy as np

from ... import _backend
from ..._arguments import expect_tensors, is_operand, not_tensor
from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
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
export("signbit", method=True)(signbit)
isneginf = _predicate("isneginf")
export("isneginf", method=True)(isneginf)
isposinf = _predicate("isposinf")
export("isposinf", method=True)(isposinf)
isreal = _predicate("isreal")
export("isreal", method=True)(isreal)


@export("isin")
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each entry of elements is among test_elements (a bool tensor of elements'
    shape)."""
    xp, a, b = _pair(elements, test_elements)
    return Tensor._make(xp.asarray(xp.isin(a, b, invert=invert)))


@export("is_nonzero", method=True)
def is_nonzero(input) -> bool:
    """The truth of a one-element tensor."""
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)


@export("is_same_size", method=True)
def is_same_size(input, other) -> bool:
    return tuple(input.shape) == tuple(other.shape)


@export("is_signed", method=True)
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
export("eq")(eq)
export("ne", "not_equal")(ne)
export("lt", "less")(lt)
export("le", "less_equal")(le)
export("gt", "greater")(gt)
export("ge", "greater_equal")(ge)


@export("isclose", method=True)
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    expect_tensors("isclose", ("input", "other"), input, other)
    a = input._data
    return Tensor._make(xp_of(a).isclose(a, _data(other), rtol, atol, equal_nan))


OPS: list = []


# -- Tensor methods: comparison and logic operators (not differentiable) --------------------------
_ORDERINGS = {np.less: "lt", np.less_equal: "le", np.greater: "gt", np.greater_equal: "ge"}


def _is_complex(v):
    return isinstance(v, complex) or getattr(getattr(v, "dtype", None), "kind", "") == "c"


def _unordered(name, a, b):
    """PyTorch's error for ordering complex numbers (which have no order)."""
    wide = np.complex128 in (a.dtype, getattr(b, "dtype", None))
    raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                              f"'{'ComplexDouble' if wide else 'ComplexFloat'}'")


def _cmp(ufunc, name=None):
    """``t.eq(other)`` (``name``: refuses what is neither a tensor nor a number) or the
    operator ``t == other`` (for such a value: NotImplemented, so Python answers: ``x == None``
    is False, ``x < 'a'`` a TypeError, as in PyTorch)."""
    ordering = _ORDERINGS.get(ufunc)

    def compare(self, other):
        if isinstance(other, Tensor):
            o = other._data
        elif other.__class__ is int or other.__class__ is float:
            o = other
        elif is_operand(other):
            o = other
            if ordering is not None and _is_complex(o):   # (checked where it costs nothing:
                _unordered(ordering, self._data, o)       # a tensor's dtype read does)
        elif name is None:
            return NotImplemented
        else:
            raise not_tensor(name, "other", other)
        if isinstance(other, Tensor) and type(o) is not type(self._data):
            if _backend.cpu_scalar(o):    # a 0-d CPU tensor joins any device, as in PyTorch
                o = o[()]
            elif _backend.cpu_scalar(self._data):
                return compare(self.to(other.device), other)
            else:
                from .._op import _device_error
                raise _device_error(ufunc.__name__, self, other)
        try:
            y = ufunc(self._data, o)
        except ValueError as e:
            from .._op import broadcast_error
            raise broadcast_error(e, [self._data, o]) from None
        return Tensor._make(np.asarray(y) if type(self._data) is np.ndarray else y)
    return compare


def _logic(name):
    def op(self, other=None):
        if other is not None and not isinstance(other, Tensor):
            raise not_tensor(name, "other", other)
        xp = _backend.xp_of(self._data)
        f = getattr(xp, name)
        if other is None:
            return Tensor._make(xp.asarray(f(self._data)))  # 0-d: numpy gives a scalar
        return Tensor._make(xp.asarray(f(self._data, other._data if isinstance(other, Tensor)
                                         else other)))
    return op


def _cmp_(name):
    """``t.eq_(v)``: t = (t == v) as t's dtype (a constant: its gradient is 0)."""
    def op(self, other):
        def compute(t, *v):
            return t * 0 + getattr(t, name)(*v).to(t.dtype)
        return inplace(self, compute, other)
    return op


def _logical_(name):
    """``t.logical_and_(v)``: t = logical_and(t, v) in t's dtype (a constant: gradient 0)."""
    fn = _logic(name)

    def op(self, *other):
        def compute(t, *v):
            return t * 0 + fn(t, *v).to(t.dtype)
        xp = _backend.xp_of(self._data)
        return inplace(self, compute, *other, raw=lambda a, *v: a.__setitem__(
            Ellipsis, getattr(xp, name)(a, *v)))
    return op


for _name, _ufunc, _aliases in (("eq", np.equal, ()), ("ne", np.not_equal, ("not_equal",)),
                                ("lt", np.less, ("less",)), ("le", np.less_equal, ("less_equal",)),
                                ("gt", np.greater, ("greater",)),
                                ("ge", np.greater_equal, ("greater_equal",))):
    tensor_method(f"__{_name}__")(_cmp(_ufunc))
    tensor_method(_name, *_aliases)(_cmp(_ufunc, _name))
for _name, _aliases in (("eq", ()), ("ne", ("not_equal_",)), ("lt", ("less_",)),
                        ("le", ("less_equal_",)), ("gt", ("greater_",)),
                        ("ge", ("greater_equal_",))):
    tensor_method(_name + "_", *_aliases)(_cmp_(_name))
tensor_method("logical_not")(_logic("logical_not"))
for _name in ("logical_and", "logical_or", "logical_xor"):
    tensor_method(_name)(_logic(_name))
    tensor_method(_name + "_")(_logical_(_name))
tensor_method("logical_not_")(_logical_("logical_not"))
tensor_method("isnan")(_logic("isnan"))
tensor_method("isinf")(_logic("isinf"))
tensor_method("isfinite")(_logic("isfinite"))


@tensor_method("equal")
def _equal(s, o):
    expect_tensors("equal", ("input", "other"), s, o)
    return bool(s.shape == o.shape and (s._data == o._data).all())


@tensor_method("allclose")
def _allclose(s, o, rtol=1e-05, atol=1e-08, equal_nan=False):
    expect_tensors("allclose", ("input", "other"), s, o)
    return bool(_backend.xp_of(s._data).allclose(s._data, o._data, rtol, atol, equal_nan))



tensor_method("all")(lambda s, dim=None, keepdim=False: Tensor._make(
    _backend.xp_of(s._data).asarray(s._data.all(axis=dim, keepdims=keepdim))))
tensor_method("any")(lambda s, dim=None, keepdim=False: Tensor._make(
    _backend.xp_of(s._data).asarray(s._data.any(axis=dim, keepdims=keepdim))))


@tensor_method("__contains__")
def _contains(self, element):
    """``v in t``: whether any entry equals v (a number or a tensor, broadcast against t)."""
    if not isinstance(element, (Tensor, numbers.Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")
    return bool((self == element).any())
