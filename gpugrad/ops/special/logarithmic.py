"""Logarithmic and elementary special functions: logit, sinc, xlog1py, entr."""
from __future__ import annotations

import math

from ..._backend import xp_of
from ..._exports import export, method_as_function
from ...tensor import Tensor
from .._op import Op
from ..pointwise.arithmetic import _float
from ._numerics import _back
from .gamma import _Special


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


class LogitBackward0(Op):
    """y = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given"""
    __slots__ = ("eps",)
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, eps=None):
        self.eps = eps
        x = _float(xp, x)
        if eps is not None:
            x = xp.clip(x, eps, 1 - eps)
        return xp.log(x / (1 - x))

    def backward(self, F, gy, x):
        if self.eps is None:
            return gy / (x * (1 - x))
        r = _raw(x)
        inside = ((r >= self.eps) & (r <= 1 - self.eps)).astype(r.dtype)
        x = x * inside + (1 - inside) * 0.5
        return gy / (x * (1 - x)) * inside


class SincBackward0(_Special):
    """y = sin(pi x) / (pi x), 1 at 0"""

    def forward(self, xp, x):
        x = _float(xp, x)
        px = math.pi * xp.where(x == 0, 1.0, x)
        return _back(xp.where(x == 0, 1.0, xp.sin(px) / px), x)

    def backward(self, F, gy, x):
        r = _raw(x)
        zero = (r == 0).astype(r.dtype)
        safe = x + zero
        px = safe * math.pi
        return gy * ((F.cos(px) * px - F.sin(px)) / (px * safe) * (1 - zero))


class SpecialEntrBackward0(_Special):
    """y = -x log x (0 at 0, -inf below 0)"""

    def forward(self, xp, x):
        x = _float(xp, x)
        y = -x * xp.log(xp.where(x > 0, x, 1.0))
        return xp.where(x < 0, -xp.inf, xp.where(xp.isnan(x), xp.nan, y))

    def backward(self, F, gy, x):
        return gy * -(F.log(x) + 1)


class SpecialXlog1PyBackward0(Op):
    """y = x log(1 + other), 0 where x == 0 (unless other is nan)"""
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, other):
        x, other = xp.asarray(_float(xp, x)), xp.asarray(_float(xp, other))
        return xp.where((x == 0) & ~xp.isnan(other), 0, x * xp.log1p(other))

    def backward(self, F, gy, x, other):
        need = self.needs_input_grad
        gx = None
        if need[0]:
            xp = xp_of(_raw(gy))
            keep = ~((xp.asarray(_raw(x)) == 0) & (xp.asarray(_raw(other)) <= -1))
            safe = other * keep
            gx = gy * (F.log1p(safe) if F.fast else _log1p(safe)) * keep
        return gx, (gy * x / (other + 1) if need[1] else None)


class SpecialXlog1PyBackward1(SpecialXlog1PyBackward0):
    """y = x log(1 + other), x a number"""


class SpecialXlog1PyBackward2(SpecialXlog1PyBackward0):
    """y = x log(1 + other), other a number"""


def _log1p(x):
    from ..pointwise.unary import log1p
    return log1p(x)


@export("logit", method=True, inplace=True)
def logit(input, eps=None):
    return LogitBackward0.apply(input, eps=None if eps is None or eps < 0 else float(eps))


@export("sinc", method=True, inplace=True)
def sinc(input):
    return SincBackward0.apply(input)


@export("xlog1py", method=True, inplace=True)
def xlog1py(input, other):
    if not isinstance(input, Tensor):
        return SpecialXlog1PyBackward1.apply(input, other)
    if not isinstance(other, Tensor):
        return SpecialXlog1PyBackward2.apply(input, other)
    return SpecialXlog1PyBackward0.apply(input, other)


def entr(input):
    return SpecialEntrBackward0.apply(input)


OPS = [LogitBackward0, SincBackward0, SpecialEntrBackward0, SpecialXlog1PyBackward0,
       SpecialXlog1PyBackward1, SpecialXlog1PyBackward2]


method_as_function("logit_", "sinc_")
