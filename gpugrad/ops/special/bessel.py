"""The Bessel and Airy functions of ``gpugrad.special``: i0, i1, i0e, i1e with gradients, and the
gradient-free bessel_j0/j1, bessel_y0/y1, modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
spherical_bessel_j0 and airy_ai (numerics: _bessel.py).
"""
from __future__ import annotations

import numpy as np

from ..._exports import export, method_as_function
from . import _bessel as bessel
from ._numerics import _raw, i0_array, i1_array
from .error import _Scaled, _tensor_input
from .gamma import _array_or_op, _Special
from .incomplete_gamma import _out
from .polynomials import evaluate


def _i0e_array(xp, x):
    return bessel.bessel_i_scaled_array(xp, 0, x)


def _i1e_array(xp, x):
    return bessel.bessel_i_scaled_array(xp, 1, x)


class SpecialI0EBackward0(_Scaled):
    """y = exp(-|x|) I0(x); dy/dx = i1e(x) - sign(x) y"""
    fn = staticmethod(_i0e_array)
    op_name = "i0e"

    def backward(self, F, gy, x, y):
        return gy * (_array_or_op(F, x, _i1e_array, lambda v: i1e(v)) - F.sign(x) * y)


class SpecialI1EBackward0(_Scaled):
    """y = exp(-|x|) I1(x); dy/dx = i0e(x) - y (sign(x) + 1 / x), 1/2 at 0"""
    fn = staticmethod(_i1e_array)
    op_name = "i1e"

    def backward(self, F, gy, x, y):
        r = _raw(x)
        tiny = (abs(r) <= np.finfo(r.dtype).eps).astype(r.dtype)
        safe = x * (1 - tiny) + tiny
        g = _array_or_op(F, safe, _i0e_array, lambda v: i0e(v)) - y * (F.sign(safe) + 1 / safe)
        return gy * (g * (1 - tiny) + tiny * 0.5)


def i0e(input, *, out=None):
    _tensor_input("i0e", input)
    return _out(SpecialI0EBackward0.apply(input), out)


def i1e(input, *, out=None):
    _tensor_input("i1e", input)
    return _out(SpecialI1EBackward0.apply(input), out)


# -- gradient-free Bessel and Airy functions ------------------------------------------------------
def _unary(name, array_fn):
    def fn(input, *, out=None):
        return _out(evaluate(name, array_fn, input), out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}(input): no gradient, as in PyTorch."
    return fn


bessel_j0 = _unary("bessel_j0", lambda xp, x: bessel.bessel_j_array(xp, 0, x))
bessel_j1 = _unary("bessel_j1", lambda xp, x: bessel.bessel_j_array(xp, 1, x))
bessel_y0 = _unary("bessel_y0", lambda xp, x: bessel.bessel_y_array(xp, 0, x))
bessel_y1 = _unary("bessel_y1", lambda xp, x: bessel.bessel_y_array(xp, 1, x))
modified_bessel_i0 = _unary("modified_bessel_i0", lambda xp, x: bessel.bessel_i_array(xp, 0, x))
modified_bessel_i1 = _unary("modified_bessel_i1", lambda xp, x: bessel.bessel_i_array(xp, 1, x))
modified_bessel_k0 = _unary("modified_bessel_k0", lambda xp, x: bessel.bessel_k_array(xp, 0, x))
modified_bessel_k1 = _unary("modified_bessel_k1", lambda xp, x: bessel.bessel_k_array(xp, 1, x))
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0",
                                   lambda xp, x: bessel.bessel_k_array(xp, 0, x, scaled=True))
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1",
                                   lambda xp, x: bessel.bessel_k_array(xp, 1, x, scaled=True))
spherical_bessel_j0 = _unary("spherical_bessel_j0", bessel.spherical_j0_array)
airy_ai = _unary("airy_ai", bessel.airy_ai_array)


class I0Backward0(_Special):
    """y = the modified Bessel function of the first kind, order 0"""
    fn = staticmethod(i0_array)

    def backward(self, F, gy, x):
        return gy * _array_or_op(F, x, i1_array, lambda v: i1(v))


class SpecialI1Backward0(_Special):
    """y = the modified Bessel function of the first kind, order 1"""
    fn = staticmethod(i1_array)

    def backward(self, F, gy, x):
        # I1' = I0 - I1 / x, which is 1/2 at 0
        i0_ = _array_or_op(F, x, i0_array, lambda v: i0(v))
        i1_ = _array_or_op(F, x, i1_array, lambda v: i1(v))
        r = _raw(x)
        zero = (r == 0).astype(r.dtype)
        return gy * ((i0_ - i1_ / (x + zero)) * (1 - zero) + zero * 0.5)


@export("i0", method=True, inplace=True)
def i0(input):
    return I0Backward0.apply(input)


def i1(input):
    return SpecialI1Backward0.apply(input)


OPS = [SpecialI0EBackward0, SpecialI1EBackward0, I0Backward0, SpecialI1Backward0]


method_as_function("i0_")
