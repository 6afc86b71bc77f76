"""More elementwise functions: log1p, expm1, tan, sinh, cosh, asin, acos, atan, log2, log10, and
the roundings (floor, ceil, round, trunc: gradient zero; frac: gradient one)."""
from __future__ import annotations

import math

from ._op import Op, direct
from .pointwise import _float


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
expm1 = direct(Expm1Backward0, 1, "expm1")
tan = direct(TanBackward0, 1, "tan")
sinh = direct(SinhBackward0, 1, "sinh")
cosh = direct(CoshBackward0, 1, "cosh")
asin = arcsin = direct(AsinBackward0, 1, "asin")
acos = arccos = direct(AcosBackward0, 1, "acos")
atan = arctan = direct(AtanBackward0, 1, "atan")
log2 = direct(Log2Backward0, 1, "log2")
log10 = direct(Log10Backward0, 1, "log10")
floor = direct(FloorBackward0, 1, "floor")
ceil = direct(CeilBackward0, 1, "ceil")
trunc = fix = direct(TruncBackward0, 1, "trunc")
frac = direct(FracBackward0, 1, "frac")


def round(input, *, decimals=0):
    if decimals == 0:
        return RoundBackward0.apply(input)
    return RoundBackward1.apply(input, decimals=decimals)


OPS = [Log1PBackward0, Expm1Backward0, TanBackward0, SinhBackward0, CoshBackward0,
       AsinBackward0, AcosBackward0, AtanBackward0, Log2Backward0, Log10Backward0,
       FloorBackward0, CeilBackward0, TruncBackward0, RoundBackward0, RoundBackward1,
       FracBackward0]
