"""Elementwise functions of one tensor: exp, log, sqrt, rsqrt, abs, sign, sgn, the trigonometric
and hyperbolic functions and their inverses, erf, log1p, expm1, log2, log10, exp2, deg2rad /
rad2deg, frexp, nan_to_num, and the roundings (floor, ceil, round, trunc: gradient zero; frac:
gradient one).
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ... import kernels
from ..._backend import xp_of
from ..._exports import export, method_as_function, tensor_method
from ...tensor import DEFAULT, Tensor
from ...tensor_inplace import inplace
from .._op import Op, direct
from .arithmetic import _float, reciprocal


class Log1PBackward0(Op):
    """y = log(1 + x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.log1p(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / (x + 1)


class Expm1Backward0(Op):
    """y = exp(x) - 1"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return xp.expm1(_float(xp, x))

    def backward(self, F, gy, y):
        return gy * (y + 1)


class TanBackward0(Op):
    """y = tan(x)"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return xp.tan(_float(xp, x))

    def backward(self, F, gy, y):
        return gy * (y * y + 1)


class SinhBackward0(Op):
    """y = sinh(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.sinh(_float(xp, x))

    def backward(self, F, gy, x):
        return gy * ((F.exp(x) + F.exp(-x)) * 0.5)   # cosh(x)


class CoshBackward0(Op):
    """y = cosh(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.cosh(_float(xp, x))

    def backward(self, F, gy, x):
        return gy * ((F.exp(x) - F.exp(-x)) * 0.5)   # sinh(x)


class AsinBackward0(Op):
    """y = asin(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.arcsin(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / F.sqrt(1 - x * x)


class AcosBackward0(Op):
    """y = acos(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.arccos(_float(xp, x))

    def backward(self, F, gy, x):
        return -gy / F.sqrt(1 - x * x)


class AtanBackward0(Op):
    """y = atan(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.arctan(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / (x * x + 1)


class Log2Backward0(Op):
    """y = log2(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.log2(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / (x * math.log(2.0))


class Log10Backward0(Op):
    """y = log10(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.log10(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / (x * math.log(10.0))


class FloorBackward0(Op):
    """y = floor(x)   (gradient zero)"""
    elementwise = True

    def forward(self, xp, x):
        return xp.floor(x) if x.dtype.kind == "f" else x.copy()

    def backward(self, F, gy):
        return gy * 0


class CeilBackward0(FloorBackward0):
    """y = ceil(x)   (gradient zero)"""

    def forward(self, xp, x):
        return xp.ceil(x) if x.dtype.kind == "f" else x.copy()


class TruncBackward0(FloorBackward0):
    """y = trunc(x), toward zero   (gradient zero)"""

    def forward(self, xp, x):
        return xp.trunc(x) if x.dtype.kind == "f" else x.copy()


class RoundBackward0(FloorBackward0):
    """y = round(x), halves to even   (gradient zero)"""

    def forward(self, xp, x):
        return xp.round(x) if x.dtype.kind == "f" else x.copy()


class RoundBackward1(FloorBackward0):
    """y = round(x, decimals)   (gradient zero)"""
    __slots__ = ()

    def forward(self, xp, x, decimals=0):
        return xp.round(x, decimals) if x.dtype.kind == "f" else x.copy()


class FracBackward0(Op):
    """y = x - trunc(x)   (gradient one)"""
    elementwise = True

    def forward(self, xp, x):
        return x - xp.trunc(x)

    def backward(self, F, gy):
        return gy


log1p = direct(Log1PBackward0, 1, "log1p")
export("log1p", method=True)(log1p)
expm1 = direct(Expm1Backward0, 1, "expm1")
export("expm1", method=True)(expm1)
tan = direct(TanBackward0, 1, "tan")
export("tan", method=True)(tan)
sinh = direct(SinhBackward0, 1, "sinh")
export("sinh", method=True)(sinh)
cosh = direct(CoshBackward0, 1, "cosh")
export("cosh", method=True)(cosh)
asin = arcsin = direct(AsinBackward0, 1, "asin")
export("asin", "arcsin", method=True)(asin)
acos = arccos = direct(AcosBackward0, 1, "acos")
export("acos", "arccos", method=True)(acos)
atan = arctan = direct(AtanBackward0, 1, "atan")
export("atan", "arctan", method=True)(atan)
log2 = direct(Log2Backward0, 1, "log2")
export("log2", method=True)(log2)
log10 = direct(Log10Backward0, 1, "log10")
export("log10", method=True)(log10)
floor = direct(FloorBackward0, 1, "floor")
export("floor", method=True)(floor)
ceil = direct(CeilBackward0, 1, "ceil")
export("ceil", method=True)(ceil)
trunc = fix = direct(TruncBackward0, 1, "trunc")
export("trunc", "fix", method=True)(trunc)
frac = direct(FracBackward0, 1, "frac")
export("frac", method=True)(frac)


@export("round", method=True)
def round(input, *, decimals=0):
    if decimals == 0:
        return RoundBackward0.apply(input)
    return RoundBackward1.apply(input, decimals=decimals)


# -- transcendental -----------------------------------------------------------------------------
class ExpBackward0(Op):
    """y = exp(x)"""
    elementwise = True
    cpu_ufunc = np.exp   # the forward on floats (see Op.cpu_ufunc)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return xp.exp(_float(xp, x))

    def backward(self, F, gy, y):
        return gy * y


class LogBackward0(Op):
    """y = log(x)"""
    elementwise = True
    cpu_ufunc = np.log   # the forward on floats (see Op.cpu_ufunc)
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return xp.log(_float(xp, x))

    def backward(self, F, gy, x):
        return gy / x


class SqrtBackward0(Op):
    """y = sqrt(x)"""
    elementwise = True
    cpu_ufunc = np.sqrt   # the forward on floats (see Op.cpu_ufunc)
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
    cpu_ufunc = np.tanh   # the forward on floats (see Op.cpu_ufunc)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        if xp is not np and (y := kernels.lean_unary(kernels.tanh, x)) is not None:
            return y
        return xp.tanh(_float(xp, x))

    def backward(self, F, gy, y):
        if F.fast:
            return kernels.tanh_bwd(y, gy)
        return gy * (1 - y * y)


exp = direct(ExpBackward0, 1, "exp")
export("exp", method=True)(exp)
log = direct(LogBackward0, 1, "log")
export("log", method=True)(log)
sqrt = direct(SqrtBackward0, 1, "sqrt")
export("sqrt", method=True)(sqrt)


@export("rsqrt", method=True)
def rsqrt(input):
    return reciprocal(sqrt(input))


@export("abs", "absolute", method=True)
def abs(input):
    return AbsBackward0.apply(input)


absolute = abs


@export("sign", method=True)
def sign(input):
    return SignBackward0.apply(input)


sin = direct(SinBackward0, 1, "sin")
export("sin", method=True)(sin)
cos = direct(CosBackward0, 1, "cos")
export("cos", method=True)(cos)
tanh = direct(TanhBackward0, 1, "tanh")
export("tanh", method=True)(tanh)


class ErfBackward0(Op):
    """y = erf(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        return kernels.erf(_float(xp, x))

    def backward(self, F, gy, x):
        return gy * F.exp(-x * x) * (2 / math.sqrt(math.pi))


@export("erf", method=True)
def erf(input):
    return ErfBackward0.apply(input)


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
export("acosh", "arccosh", method=True, inplace=True)(acosh)
asinh = arcsinh = direct(AsinhBackward0, 1, "asinh")
export("asinh", "arcsinh", method=True, inplace=True)(asinh)
atanh = arctanh = direct(AtanhBackward0, 1, "atanh")
export("atanh", "arctanh", method=True, inplace=True)(atanh)


# -- compositions -------------------------------------------------------------------------------
def _as_float(t):
    """Integer and bool tensors as the default float dtype (PyTorch's float functions do so)."""
    return t.to(DEFAULT.float) if isinstance(t, Tensor) and t.dtype.kind in "iub" else t


def _raw(v):
    return v._data if isinstance(v, Tensor) else v


@export("exp2", method=True, inplace=True)
def exp2(input):
    """y = 2 ** x"""
    from .arithmetic import pow
    return pow(2.0, input)


@export("deg2rad", method=True, inplace=True)
def deg2rad(input):
    """y = x * pi / 180"""
    return _as_float(input) * (math.pi / 180.0)


@export("rad2deg", method=True, inplace=True)
def rad2deg(input):
    """y = x * 180 / pi"""
    return _as_float(input) * (180.0 / math.pi)


_FREXP = namedtuple("frexp", ["mantissa", "exponent"])
_FREXP.__module__ = "gpugrad.return_types"


@export("frexp", method=True)
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


class NanToNumBackward0(Op):
    """y = x with nan, +inf and -inf replaced by numbers"""
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, nan=0.0, posinf=None, neginf=None):
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, F, gy, x):
        return gy * xp_of(_raw(x)).isfinite(_raw(x))


@export("nan_to_num", method=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return NanToNumBackward0.apply(input, nan=nan, posinf=posinf, neginf=neginf)


@export("sgn", method=True)
def sgn(input):
    return sign(input)


OPS = [Log1PBackward0, Expm1Backward0, TanBackward0, SinhBackward0, CoshBackward0, AsinBackward0,
       AcosBackward0, AtanBackward0, Log2Backward0, Log10Backward0, FloorBackward0, CeilBackward0,
       TruncBackward0, RoundBackward0, RoundBackward1, FracBackward0, ExpBackward0, LogBackward0,
       SqrtBackward0, AbsBackward0, SignBackward0, SinBackward0, CosBackward0, TanhBackward0,
       ErfBackward0, AcoshBackward0, AsinhBackward0, AtanhBackward0, NanToNumBackward0]


# -- Tensor methods: in-place forms ---------------------------------------------------------------
tensor_method("__abs__")(lambda s: AbsBackward0.apply(s))
tensor_method("abs_", "absolute_")(lambda s: inplace(s, abs))
tensor_method("sgn_")(lambda s: inplace(s, sgn))
tensor_method("exp_")(lambda s: inplace(s, exp))
tensor_method("tanh_")(lambda s: inplace(s, tanh))
tensor_method("sqrt_")(lambda s: inplace(s, sqrt))
tensor_method("round_")(lambda s, *, decimals=0: inplace(s, lambda t: round(t, decimals=decimals)))
tensor_method("nan_to_num_")(lambda s, nan=0.0, posinf=None, neginf=None: inplace(
    s, lambda t: nan_to_num(t, nan, posinf, neginf)))
for _name, _fn in {
    "log_": log, "log2_": log2, "log10_": log10, "log1p_": log1p,
    "expm1_": expm1, "sin_": sin, "cos_": cos, "tan_": tan, "asin_": asin,
    "arcsin_": asin, "acos_": acos, "arccos_": acos, "atan_": atan,
    "arctan_": atan, "sinh_": sinh, "cosh_": cosh, "rsqrt_": rsqrt,
    "erf_": erf, "floor_": floor,
    "ceil_": ceil, "trunc_": trunc, "fix_": trunc, "frac_": frac,
    "sign_": sign,
}.items():
    tensor_method(_name)(lambda s, _fn=_fn: inplace(s, _fn))
method_as_function(
    "abs_", "absolute_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_",
    "deg2rad_", "erf_", "exp2_", "exp_", "expm1_", "fix_", "floor_", "frac_", "log10_", "log1p_",
    "log2_", "log_", "nan_to_num_", "rad2deg_", "round_", "rsqrt_", "sin_", "sinh_", "sqrt_",
    "tan_", "tanh_", "trunc_")
