"""The gamma family of ``gpugrad.special``: lgamma, digamma, polygamma, mvlgamma (numerics:
_numerics.py). Derivatives that are special functions themselves (lgamma' = digamma, digamma' =
polygamma(1)) call those ops, so double backward works.
"""
from __future__ import annotations

import math

from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor_inplace import inplace
from .._op import Op
from ..pointwise.arithmetic import _float
from ._numerics import _back, _raw, digamma_array, lgamma_array, polygamma_array


def _array_or_op(F, x, array_fn, op_fn, *args):
    """A special function inside a backward: on arrays, or as the op (create_graph)."""
    if F.fast:
        r = _raw(x)
        return _back(array_fn(xp_of(r), *args, r), r)
    return op_fn(*args, x)


# -- ops ----------------------------------------------------------------------------------------
class _Special(Op):
    """An elementwise special function of one input (subclasses set ``fn``)."""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)
    fn = None

    def forward(self, xp, x):
        x = _float(xp, x)
        return _back(type(self).fn(xp, x), x)


class LgammaBackward0(_Special):
    """y = log |Gamma(x)|"""
    fn = staticmethod(lgamma_array)

    def backward(self, F, gy, x):
        return gy * _array_or_op(F, x, digamma_array, lambda v: digamma(v))


class DigammaBackward0(_Special):
    """y = d/dx log Gamma(x)"""
    fn = staticmethod(digamma_array)

    def backward(self, F, gy, x):
        return gy * _array_or_op(F, x, polygamma_array, polygamma, 1)


class PolygammaBackward0(Op):
    """y = the n-th derivative of digamma"""
    __slots__ = ("n",)
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, n=1):
        self.n = n
        x = _float(xp, x)
        return _back(polygamma_array(xp, n, x), x)

    def backward(self, F, gy, x):
        return gy * _array_or_op(F, x, polygamma_array, polygamma, self.n + 1)


class MvlgammaBackward0(Op):
    """y = sum_i lgamma(x - i / 2) + p (p - 1) / 4 log(pi), i < p"""
    __slots__ = ("p",)
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, p=1):
        self.p = p
        x = _float(xp, x)
        y = sum(lgamma_array(xp, x - i / 2) for i in range(p))
        return _back(y + p * (p - 1) / 4 * math.log(math.pi), x)

    def backward(self, F, gy, x):
        g = None
        for i in range(self.p):
            d = _array_or_op(F, x - i / 2, digamma_array, lambda v: digamma(v))
            g = d if g is None else g + d
        return gy * g


# -- public functions ---------------------------------------------------------------------------
@export("lgamma", method=True, inplace=True)
def lgamma(input):
    return LgammaBackward0.apply(input)


@export("digamma", method=True, inplace=True)
def digamma(input):
    return DigammaBackward0.apply(input)


@export("polygamma")
def polygamma(n, input):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return digamma(input)
    return PolygammaBackward0.apply(input, n=int(n))


@export("mvlgamma", method=True, inplace=True)
def mvlgamma(input, p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return MvlgammaBackward0.apply(input, p=int(p))


OPS = [LgammaBackward0, DigammaBackward0, PolygammaBackward0, MvlgammaBackward0]


# -- Tensor methods (polygamma takes n first) -----------------------------------------------------
tensor_method("polygamma")(lambda s, n: polygamma(n, s))
tensor_method("polygamma_")(lambda s, n: inplace(s, lambda t: polygamma(n, t)))
