"""Elementwise ops: arithmetic and transcendental functions (activations: ``activation.py``).

Each op is one class: forward and backward side by side. Backward formulas read only what the
class declares it saves; on plain backward the hot ones run as fused kernels (``kernels``),
under ``create_graph`` the differentiable formula next to them runs instead.
"""
from __future__ import annotations

import math

import numpy as np

from .. import _backend, kernels
from ..tensor import DEFAULT, Tensor, scalar_name
from ._op import Op, broadcast_error, direct, result_type
from .bool_rules import check_neg, check_rounding_mode, check_sub
from .misc import int_clamp_bounds, int_power, rounded_div, wrap_int


def _float(xp, x):
    """Integer and bool inputs of floating-point functions compute in the default dtype."""
    if getattr(x, "dtype", None) is not None and x.dtype.kind in "iub":
        return x.astype(DEFAULT.float)
    return x


def _needs(op, i):
    return op.next_functions[i][0] is not None


# -- arithmetic ---------------------------------------------------------------------------------
class AddBackward0(Op):
    """z = x + alpha * y"""
    elementwise = True
    __slots__ = ("alpha",)
    broadcasts = True

    def forward(self, xp, x, y, alpha=1):
        self.alpha = alpha
        try:
            return x + y if alpha == 1 else x + alpha * y
        except OverflowError:   # int32 tensor + 2**40: the number wraps, as in PyTorch
            return AddBackward0.forward(self, xp, x, wrap_int(x, y), alpha)

    def backward(self, F, gz):
        if self.alpha == 1 or self.next_functions[1][0] is None:
            return gz, gz
        return gz, gz * self.alpha

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class SubBackward0(Op):
    """z = x - alpha * y"""
    elementwise = True
    __slots__ = ("alpha",)
    broadcasts = True

    def forward(self, xp, x, y, alpha=1):
        self.alpha = alpha
        check_sub(x, y)
        try:
            return x - y if alpha == 1 else x - alpha * y
        except OverflowError:
            return SubBackward0.forward(self, xp, x, wrap_int(x, y), alpha)

    def backward(self, F, gz):
        if self.next_functions[1][0] is None:
            return gz, None
        return gz, (-gz if self.alpha == 1 else gz * -self.alpha)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class RsubBackward1(Op):
    """z = y - x   (``2 - x``: the tensor comes first, as in PyTorch's rsub)"""
    elementwise = True
    broadcasts = True

    def forward(self, xp, x, y=None, other=None):
        # ``other``: a number (``2 - x``), which, as in PyTorch, gets no edge
        check_sub(other if y is None else y, x)
        try:
            return (other if y is None else y) - x
        except OverflowError:
            return wrap_int(x, other if y is None else y) - x

    def backward(self, F, gz):
        if len(self.next_functions) == 1:
            return -gz
        return -gz, (gz if self.next_functions[1][0] is not None else None)


class MulBackward0(Op):
    """z = x * y"""
    elementwise = True
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        try:
            return x * y
        except OverflowError:
            return x * wrap_int(x, y)

    def backward(self, F, gz, x, y):
        (nx, _), (ny, _) = self.next_functions
        if nx is not None and ny is not None:
            if F.fast and x.shape == y.shape == gz.shape:
                return kernels.mul_bwd(x, y, gz)
            return gz * y, gz * x
        return (gz * y if nx is not None else None), (gz * x if ny is not None else None)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class DivBackward0(Op):
    """z = x / y"""
    elementwise = True
    saves = (0, 1)
    reads_for = ((1,), (0, 1))
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        try:
            z = x / y
        except OverflowError:   # computed in floating point: the number does not wrap
            z = x / float(y)
        return z.astype(DEFAULT.float) if z.dtype == np.float64 and _ints(x, y) else z

    def backward(self, F, gz, x, y):
        if F.fast and _needs(self, 0) and _needs(self, 1) and x.shape == y.shape == gz.shape:
            return kernels.div_bwd(x, y, gz)
        gx = gz / y if _needs(self, 0) else None
        gy = -gz * x / (y * y) if _needs(self, 1) else None
        return gx, gy

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


def _ints(*arrays):
    """True when no input is floating (so a float64 result came from int true division)."""
    return all(getattr(a, "dtype", np.dtype(int)).kind in "iub" or isinstance(a, (int, bool))
               for a in arrays)


class NegBackward0(Op):
    """y = -x"""
    elementwise = True

    def forward(self, xp, x):
        check_neg(x)
        return -x

    def backward(self, F, gy):
        return -gy


class ReciprocalBackward0(Op):
    """y = 1 / x"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return 1 / _float(xp, x)

    def backward(self, F, gy, y):
        return -gy * y * y


class PowBackward0(Op):
    """y = x ** p   (p a number)"""
    elementwise = True
    __slots__ = ("exponent",)
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, exponent):
        self.exponent = exponent
        if x.dtype.kind in "biu":   # integer arithmetic unless the exponent is a float
            return (int_power(xp, x, exponent) if isinstance(exponent, int) else
                    x.astype(DEFAULT.float) ** exponent)
        return x * x if exponent == 2 else x ** exponent

    def backward(self, F, gy, x):
        p = self.exponent
        if p == 0:
            return gy * 0
        if F.fast:
            return kernels.pow_bwd(x, gy, float(p))
        return gy * (p * x ** (p - 1)) if p != 2 else gy * (2 * x)


class PowBackward1(Op):
    """z = x ** y   (both tensors)"""
    elementwise = True
    saves = (0, 1)
    saves_output = True
    saved_names = ("self", "exponent", "result")
    broadcasts = True

    def forward(self, xp, x, y):
        if x.dtype.kind in "biu":
            if y.dtype.kind in "biu":
                return int_power(xp, x, y)
            x = x.astype(DEFAULT.float)
        return x ** y

    def backward(self, F, gz, x, y, z):
        gx = gz * y * x ** (y - 1) if _needs(self, 0) else None
        # NOTE: d/dy x**y = x**y log x; where x == 0 and y >= 0 the limit is 0, not nan
        gy = None
        if _needs(self, 1):
            safe = F.where(x == 0, 1, x) if F.fast else F.where(x == 0, F.ones_like(x), x)
            gy = gz * z * F.log(safe)
        return gx, gy

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class PowBackward2(Op):
    """z = b ** x   (b a number)"""
    elementwise = True
    __slots__ = ("base",)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x, base):
        self.base = base
        if x.dtype.kind in "biu":
            if isinstance(base, int):
                return int_power(xp, base, x)
            x = x.astype(DEFAULT.float)
        return base ** x

    def backward(self, F, gz, z):
        return gz * z * math.log(self.base) if self.base > 0 else gz * z * math.nan


# -- transcendental -----------------------------------------------------------------------------
class ExpBackward0(Op):
    """y = exp(x)"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return xp.exp(_float(xp, x))

    def backward(self, F, gy, y):
        return gy * y


class LogBackward0(Op):
    """y = log(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.log(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / x


class SqrtBackward0(Op):
    """y = sqrt(x)"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return xp.sqrt(_float(xp, x))

    def backward(self, F, gy, y):
        return gy / (2 * y)


class AbsBackward0(Op):
    """y = |x|   (NOTE: gradient 0 at x == 0, as PyTorch)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.abs(x)

    def backward(self, F, gy, x):
        return gy * F.sign(x)


class SignBackward0(Op):
    """y = sign(x)   (gradient zero everywhere)"""
    elementwise = True

    def forward(self, xp, x):
        y = xp.sign(x) if x.dtype.kind != "b" else x.copy()   # NaN's sign is 0 (PyTorch)
        return xp.where(x == x, y, y.dtype.type(0)) if y.dtype.kind == "f" else y

    def backward(self, F, gy):
        return gy * 0


class SinBackward0(Op):
    """y = sin(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.sin(_float(xp, x))

    def backward(self, F, gy, x):
        return gy * F.cos(x)


class CosBackward0(Op):
    """y = cos(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.cos(_float(xp, x))

    def backward(self, F, gy, x):
        return -gy * F.sin(x)


class TanhBackward0(Op):
    """y = tanh(x)"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return xp.tanh(_float(xp, x))

    def backward(self, F, gy, y):
        if F.fast:
            return kernels.tanh_bwd(y, gy)
        return gy * (1 - y * y)


class ClampBackward1(Op):
    """y = min(max(x, min), max)   (numbers)"""
    elementwise = True
    __slots__ = ("min", "max")
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        self.min, self.max = min, max
        if x.dtype.kind in "biu":
            x, min, max = int_clamp_bounds(x, min, max)
        return xp.clip(x, min, max).astype(x.dtype, copy=False)

    def backward(self, F, gy, x):
        keep = True
        if self.min is not None:
            keep = x >= self.min
        if self.max is not None:
            keep = (x <= self.max) if keep is True else keep & (x <= self.max)
        return F.where(keep, gy, 0) if F.fast else gy * keep

    def bad_input(self, e, arrays, kw):
        return RuntimeError(f"clamp: {e}")


class ClampBackward0(Op):
    """y = max(x, bound) (or min(x, bound) with ``upper``), the bound a tensor; the gradient
    goes to x where it is kept and to the bound where the bound is taken"""
    elementwise = True
    __slots__ = ("upper",)
    saves = (0, 1)
    saved_names = ("self", "min")
    broadcasts = True

    def forward(self, xp, x, bound, upper=False):
        self.upper = upper
        return xp.minimum(x, bound) if upper else xp.maximum(x, bound)

    def backward(self, F, gy, x, bound):
        keep = (x <= bound) if self.upper else (x >= bound)
        if F.fast:
            return F.where(keep, gy, 0), F.where(keep, 0, gy)
        return gy * keep, gy * ~keep

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class MaximumBackward0(Op):
    """z = max(x, y)   (NOTE: ties split the gradient evenly, as PyTorch)"""
    elementwise = True
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        return xp.maximum(x, y)

    def backward(self, F, gz, x, y):
        w = (x > y) + 0.5 * (x == y)
        return gz * w, gz * (1 - w)


class MinimumBackward0(Op):
    """z = min(x, y)   (NOTE: ties split the gradient evenly, as PyTorch)"""
    elementwise = True
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        return xp.minimum(x, y)

    def backward(self, F, gz, x, y):
        w = (x < y) + 0.5 * (x == y)
        return gz * w, gz * (1 - w)


class WhereBackward0(Op):
    """z = x where cond else y"""
    __slots__ = ("cond",)
    broadcasts = True
    temps = ("cond",)

    def forward(self, xp, x, y, cond=None):
        self.cond = cond
        out = xp.where(cond, x, y)
        return out

    def backward(self, F, gz):
        c = self.cond
        if F.fast:
            return F.where(c, gz, 0), F.where(c, 0, gz)
        return gz * c, gz * ~c

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw.get("cond")] + list(arrays))


# -- public functions ---------------------------------------------------------------------------
def _t(x):
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


def add(input, other, *, alpha=1):
    return AddBackward0.apply(input, other, alpha=alpha)


def sub(input, other, *, alpha=1):
    return SubBackward0.apply(input, other, alpha=alpha)


subtract = sub


def rsub(input, other, *, alpha=1):
    return RsubBackward1.apply(input, other) if alpha == 1 else sub(other * alpha, input)


def mul(input, other):
    return MulBackward0.apply(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None):
    check_rounding_mode(rounding_mode)
    if rounding_mode is None:
        return DivBackward0.apply(input, other)
    return rounded_div(input, other, rounding_mode)


divide = true_divide = div


def neg(input):
    return NegBackward0.apply(input)


negative = neg


def reciprocal(input):
    return ReciprocalBackward0.apply(input)


def pow(input, exponent):
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return PowBackward1.apply(input, exponent)
        return PowBackward0.apply(input, exponent=exponent)
    return PowBackward2.apply(exponent, base=input)


def square(input):
    return PowBackward0.apply(input, exponent=2)


exp = direct(ExpBackward0, 1, "exp")
log = direct(LogBackward0, 1, "log")
sqrt = direct(SqrtBackward0, 1, "sqrt")


def rsqrt(input):
    return reciprocal(sqrt(input))


def abs(input):
    return AbsBackward0.apply(input)


absolute = abs


def sign(input):
    return SignBackward0.apply(input)


sin = direct(SinBackward0, 1, "sin")
cos = direct(CosBackward0, 1, "cos")
tanh = direct(TanhBackward0, 1, "tanh")


def clamp(input, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is None or max is None:
            return ClampBackward0.apply(input, min if max is None else max,
                                        upper=max is not None)
        return ClampBackward0.apply(ClampBackward0.apply(input, min), max, upper=True)
    return ClampBackward1.apply(input, min=min, max=max)


clip = clamp


def maximum(input, other):
    return MaximumBackward0.apply(input, other)


def minimum(input, other):
    return MinimumBackward0.apply(input, other)


def where(condition, input=None, other=None):
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in _t(condition)._data.nonzero())
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_name(cond.dtype).capitalize()}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):   # two numbers
        d, xp = result_type([input, other]), _backend.xp_of(cond)
        input, other = xp.asarray(input, dtype=d), xp.asarray(other, dtype=d)
    return WhereBackward0.apply(input, other, cond=cond)


OPS = [AddBackward0, SubBackward0, RsubBackward1, MulBackward0, DivBackward0, NegBackward0,
       ReciprocalBackward0, PowBackward0, PowBackward1, PowBackward2, ExpBackward0, LogBackward0,
       SqrtBackward0, AbsBackward0, SignBackward0, SinBackward0, CosBackward0, TanhBackward0,
       ClampBackward0, ClampBackward1, MaximumBackward0, MinimumBackward0, WhereBackward0]


class ErfBackward0(Op):
    """y = erf(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return kernels.erf(_float(xp, x))

    def backward(self, F, gy, x):
        return gy * F.exp(-x * x) * (2 / math.sqrt(math.pi))


def erf(input):
    return ErfBackward0.apply(input)


OPS.append(ErfBackward0)
