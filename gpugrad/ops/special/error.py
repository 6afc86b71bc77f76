"""The error-function family of ``gpugrad.special``: erfc, erfinv, erfcx, ndtr, ndtri, log_ndtr."""
from __future__ import annotations

import math

import numpy as np

from ..._exports import export, method_as_function
from ...tensor import Tensor
from .._op import Op
from ..pointwise.arithmetic import _float
from ._numerics import (
    _SQRT_PI,
    _back,
    erfc_array,
    erfcx_array,
    erfinv_array,
    log_ndtr_array,
    ndtri_array,
)
from .gamma import _Special
from .incomplete_gamma import _out
from .polynomials import not_implemented


class ErfcBackward0(_Special):
    """y = 1 - erf(x)"""
    fn = staticmethod(erfc_array)

    def backward(self, F, gy, x):
        return gy * F.exp(-x * x) * (-2 / _SQRT_PI)


class ErfinvBackward0(Op):
    """y = the inverse of erf on (-1, 1)"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        x = _float(xp, x)
        return _back(erfinv_array(xp, x), x)

    def backward(self, F, gy, y):
        return gy * F.exp(y * y) * (_SQRT_PI / 2)


class SpecialNdtriBackward0(Op):
    """y = the inverse of the standard normal CDF"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        x = _float(xp, x)
        return _back(ndtri_array(xp, x), x)

    def backward(self, F, gy, y):
        return gy * F.exp(y * y * 0.5) * math.sqrt(2 * math.pi)


class SpecialLogNdtrBackward0(Op):
    """y = log of the standard normal CDF"""
    elementwise = True
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x):
        x = _float(xp, x)
        return _back(log_ndtr_array(xp, x), x)

    def backward(self, F, gy, x, y):
        return gy * F.exp(-(x * x) * 0.5 - y) * (1 / math.sqrt(2 * math.pi))


@export("erfc", method=True, inplace=True)
def erfc(input):
    return ErfcBackward0.apply(input)


@export("erfinv", method=True, inplace=True)
def erfinv(input):
    return ErfinvBackward0.apply(input)


def ndtr(input):
    return erfc(input * (-1 / math.sqrt(2))) * 0.5


def ndtri(input):
    return SpecialNdtriBackward0.apply(input)


def log_ndtr(input):
    return SpecialLogNdtrBackward0.apply(input)


# -- erfcx, i0e, i1e ------------------------------------------------------------------------------
class _Scaled(Op):
    """An elementwise function of one input computed in float64 (subclasses set fn, name)."""
    elementwise = True
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")
    half = True
    op_name = ""

    def forward(self, xp, x):
        if x.dtype.kind == "c" or (x.dtype == np.float16 and not self.half):
            raise not_implemented(self.op_name, x.dtype, x)
        x = _float(xp, x)
        return _back(xp.asarray(type(self).fn(xp, x)), x)


class SpecialErfcxBackward0(_Scaled):
    """y = exp(x^2) erfc(x); dy/dx = 2 x y - 2 / sqrt(pi)"""
    fn = staticmethod(erfcx_array)
    op_name = "erfcx"
    half = False

    def backward(self, F, gy, x, y):
        return gy * (x * y * 2 - 2 / _SQRT_PI)


def _tensor_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def erfcx(input, *, out=None):
    _tensor_input("erfcx", input)
    return _out(SpecialErfcxBackward0.apply(input), out)


OPS = [ErfcBackward0, ErfinvBackward0, SpecialNdtriBackward0, SpecialLogNdtrBackward0,
       SpecialErfcxBackward0]


method_as_function("erfc_")
