"""Elementwise functions of two tensors: atan2, hypot, logaddexp / logaddexp2, xlogy, copysign,
ldexp, heaviside, gcd, lcm, nextafter.
"""
from __future__ import annotations

import math

from ..._arguments import expect_operand, expect_tensors
from ..._backend import xp_of
from ..._exports import export, method_as_function, tensor_method
from ...tensor import Tensor
from ...tensor_inplace import inplace
from .._op import Op
from .comparison import _integral_only, _kind, _pair, signbit
from .unary import _as_float


class HypotBackward0(Op):
    """y = sqrt(a^2 + b^2)"""
    elementwise = True
    saves = (0, 1)
    saves_output = True
    reads_for = ((0,), (1,))
    saved_names = ("self", "other", "result")
    broadcasts = True

    def forward(self, xp, a, b):
        return xp.hypot(a, b)

    def backward(self, F, gy, a, b, y):
        need, g = self.needs_input_grad, gy / y
        return (g * a if need[0] else None), (g * b if need[1] else None)


class LogaddexpBackward0(Op):
    """y = log(exp(a) + exp(b))"""
    elementwise = True
    saves = (0, 1)
    saves_output = True
    reads_for = ((0,), (1,))
    saved_names = ("self", "other", "result")
    broadcasts = True

    def forward(self, xp, a, b):
        return xp.logaddexp(a, b)

    def backward(self, F, gy, a, b, y):
        need = self.needs_input_grad
        return (gy * F.exp(a - y) if need[0] else None), (gy * F.exp(b - y) if need[1] else None)


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


class XlogyBackward0(Op):
    """y = x log(other), 0 where x == 0 (unless other is nan)"""
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, other):
        x, other = xp.asarray(x), xp.asarray(other)   # either may be a number
        return xp.where((x == 0) & ~xp.isnan(other), 0, x * xp.log(other))

    def backward(self, F, gy, x, other):
        need = self.needs_input_grad
        gx = None
        if need[0]:
            # log(other), but 0 where x == 0 and other <= 0 (PyTorch's convention)
            xp = xp_of(_raw(gy))
            keep = ~((xp.asarray(_raw(x)) == 0) & (xp.asarray(_raw(other)) <= 0))
            gx = gy * F.log(other * keep + (1 - keep))
        return gx, (gy * x / other if need[1] else None)


class XlogyBackward1(XlogyBackward0):
    """y = x log(other), x a number"""


class XlogyBackward2(XlogyBackward0):
    """y = x log(other), other a number"""


@export("hypot", method=True, inplace=True)
def hypot(input, other):
    expect_tensors("hypot", ("input", "other"), input, other)
    return HypotBackward0.apply(input, other)


@export("logaddexp", method=True, inplace=True)
def logaddexp(input, other):
    return LogaddexpBackward0.apply(input, other)


@export("xlogy", method=True, inplace=True)
def xlogy(input, other):
    if not isinstance(input, Tensor):
        return XlogyBackward1.apply(input, other)
    if not isinstance(other, Tensor):
        return XlogyBackward2.apply(input, other)
    return XlogyBackward0.apply(input, other)


@export("logaddexp2", method=True)
def logaddexp2(input, other):
    """y = log2(2^x + 2^y), as logaddexp of the inputs scaled by log 2"""
    ln2 = math.log(2.0)
    return logaddexp(_as_float(input) * ln2, _as_float(other) * ln2) / ln2


@export("copysign", method=True, inplace=True)
def copysign(input, other):
    """y = |x| with the sign bit of other (so -0.0 counts as negative). The gradient is
    sign(x) * sign(y) (0 where x == 0); other gets none: the result is flat in it."""
    from .minmax import where
    from .unary import abs
    expect_operand(other, "copysign")
    a = abs(_as_float(input))
    neg = signbit(other if isinstance(other, Tensor) else Tensor._make(
        xp_of(a._data).asarray(other)))
    return where(neg, -a, a)


@export("ldexp", method=True, inplace=True)
def ldexp(input, other):
    """y = x * 2 ** other"""
    from .arithmetic import mul, pow
    if isinstance(other, Tensor):
        return mul(_as_float(input), pow(2.0, other))
    return _as_float(input) * (2.0 ** other)


@export("heaviside", method=True)
def heaviside(input, values):
    """0 where x < 0, values where x == 0, 1 where x > 0"""
    xp, a, v = _pair(input, values)
    if a.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return Tensor._make(xp.asarray(xp.where(a == 0, v, (a > 0).astype(a.dtype))))


@export("gcd", method=True, inplace=True)
def gcd(input, other):
    """The greatest common divisor of integers (non-negative; gcd(0, 0) = 0)."""
    xp, a, b = _pair(input, other)
    _integral_only("gcd", a, b)
    return Tensor._make(xp.asarray(xp.gcd(a, b)))


@export("lcm", method=True, inplace=True)
def lcm(input, other):
    """The least common multiple of integers (non-negative; 0 if either is 0)."""
    xp, a, b = _pair(input, other)
    _integral_only("lcm", a, b)
    return Tensor._make(xp.asarray(xp.lcm(a, b)))


@export("nextafter", method=True, inplace=True)
def nextafter(input, other):
    """The next floating-point value after x toward other."""
    xp, a, b = _pair(input, other)
    for v in (a, b):
        if v.dtype.kind != "f":
            raise NotImplementedError(f'"nextafter_cpu" not implemented for \'{_kind(v.dtype)}\'')
    return Tensor._make(xp.asarray(xp.nextafter(a, b)))


class Atan2Backward0(Op):
    """y = atan2(a, b), the angle of the point (b, a)"""
    elementwise = True
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, a, b):
        return xp.arctan2(a, b)

    def backward(self, F, gy, a, b):
        # NOTE: at a = b = 0 both gradients are 0 (and -0), as in PyTorch, not 0 / 0
        d = a * a + b * b
        g = gy / (d + (d == 0))
        need = self.needs_input_grad
        return (g * b if need[0] else None), (-g * a if need[1] else None)


@export("atan2", "arctan2", method=True)
def atan2(input, other):
    expect_tensors("atan2", ("input", "other"), input, other)
    return Atan2Backward0.apply(input, other)


arctan2 = atan2


OPS = [HypotBackward0, LogaddexpBackward0, XlogyBackward0, XlogyBackward1, XlogyBackward2,
       Atan2Backward0]


# -- Tensor methods -------------------------------------------------------------------------------
tensor_method("atan2_", "arctan2_")(lambda s, other: inplace(s, atan2, other))
tensor_method("heaviside_")(lambda s, values: inplace(s, lambda t: heaviside(t, values)))
method_as_function("gcd_", "lcm_", "ldexp_", "xlogy_")
