"""More elementwise functions: the inverse hyperbolic functions (one op class each), and
compositions of recorded ops: exp2, logaddexp2, deg2rad/rad2deg, copysign, ldexp, the mantissa of
frexp. Not differentiable, as in PyTorch: heaviside, gcd/lcm, nextafter, the exponent of frexp,
the predicates (signbit, isneginf, isposinf, isreal, isin, is_nonzero ...) and the comparisons
(eq, greater, less_equal ...)."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .._backend import xp_of
from ..tensor import DEFAULT, Tensor, scalar_name
from ._op import Op, direct
from .pointwise import _float


class AcoshBackward0(Op):
    """y = acosh(x) = log(x + sqrt(x^2 - 1))"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.arccosh(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / F.sqrt(x * x - 1)


class AsinhBackward0(Op):
    """y = asinh(x) = log(x + sqrt(x^2 + 1))"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.arcsinh(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / F.sqrt(x * x + 1)


class AtanhBackward0(Op):
    """y = atanh(x) = log((1 + x) / (1 - x)) / 2"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.arctanh(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / (1 - x * x)


acosh = arccosh = direct(AcoshBackward0, 1, "acosh")
asinh = arcsinh = direct(AsinhBackward0, 1, "asinh")
atanh = arctanh = direct(AtanhBackward0, 1, "atanh")

OPS = [AcoshBackward0, AsinhBackward0, AtanhBackward0]


# -- compositions -------------------------------------------------------------------------------
def _as_float(t):
    """Integer and bool tensors as the default float dtype (PyTorch's float functions do so)."""
    return t.to(DEFAULT.float) if isinstance(t, Tensor) and t.dtype.kind in "iub" else t


def _kind(dtype):
    return scalar_name(dtype).capitalize()


def _raw(v):
    return v._data if isinstance(v, Tensor) else v


def exp2(input):
    """y = 2 ** x"""
    from .pointwise import pow
    return pow(2.0, input)


def logaddexp2(input, other):
    """y = log2(2^x + 2^y), as logaddexp of the inputs scaled by log 2"""
    from .misc import logaddexp
    ln2 = math.log(2.0)
    return logaddexp(_as_float(input) * ln2, _as_float(other) * ln2) / ln2


def deg2rad(input):
    """y = x * pi / 180"""
    return _as_float(input) * (math.pi / 180.0)


def rad2deg(input):
    """y = x * 180 / pi"""
    return _as_float(input) * (180.0 / math.pi)


def copysign(input, other):
    """y = |x| with the sign bit of other (so -0.0 counts as negative). The gradient is
    sign(x) * sign(y) (0 where x == 0); other gets none: the result is flat in it."""
    from .pointwise import abs, where
    a = abs(_as_float(input))
    neg = signbit(other if isinstance(other, Tensor) else Tensor._make(
        xp_of(a._data).asarray(other)))
    return where(neg, -a, a)


def ldexp(input, other):
    """y = x * 2 ** other"""
    from .pointwise import mul, pow
    if isinstance(other, Tensor):
        return mul(_as_float(input), pow(2.0, other))
    return _as_float(input) * (2.0 ** other)


_FREXP = namedtuple("frexp", ["mantissa", "exponent"])
_FREXP.__module__ = "gpugrad.return_types"


def frexp(input):
    """(mantissa, exponent) with x = mantissa * 2 ** exponent, |mantissa| in [0.5, 1); the
    exponent is int32. The mantissa's gradient is 2 ** -exponent."""
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    xp = xp_of(a)
    _, e = xp.frexp(a)
    scale = Tensor._make(xp.ldexp(xp.ones_like(a), -e))   # 2 ** -e, exact
    return _FREXP(input * scale, Tensor._make(e.astype(np.int32)))


def positive(input):
    """The input itself (``+x``)."""
    if input.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# -- not differentiable -------------------------------------------------------------------------
def _pair(input, other):
    a, b = _raw(input), _raw(other)
    xp = xp_of(a if isinstance(input, Tensor) else b)
    return xp, xp.asarray(a), xp.asarray(b)


def _integral_only(name, *arrays):
    for v in arrays:
        if v.dtype.kind not in "iub":
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_kind(v.dtype)}\'')


def heaviside(input, values):
    """0 where x < 0, values where x == 0, 1 where x > 0"""
    xp, a, v = _pair(input, values)
    if a.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return Tensor._make(xp.asarray(xp.where(a == 0, v, (a > 0).astype(a.dtype))))


def gcd(input, other):
    """The greatest common divisor of integers (non-negative; gcd(0, 0) = 0)."""
    xp, a, b = _pair(input, other)
    _integral_only("gcd", a, b)
    return Tensor._make(xp.asarray(xp.gcd(a, b)))


def lcm(input, other):
    """The least common multiple of integers (non-negative; 0 if either is 0)."""
    xp, a, b = _pair(input, other)
    _integral_only("lcm", a, b)
    return Tensor._make(xp.asarray(xp.lcm(a, b)))


def nextafter(input, other):
    """The next floating-point value after x toward other."""
    xp, a, b = _pair(input, other)
    for v in (a, b):
        if v.dtype.kind != "f":
            raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{_kind(v.dtype)}\'')
    return Tensor._make(xp.asarray(xp.nextafter(a, b)))


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
