"""The regularised incomplete gamma functions of ``gpugrad.special``: igamma / gammainc and
igammac / gammaincc (numerics: _numerics.py).
"""
from __future__ import annotations

import numpy as np

from ..._exports import export
from ..._promotion import result_type
from ...tensor import Tensor
from .._op import Op
from ._numerics import igamma_array, igammac_array, lgamma_array
from .gamma import _array_or_op, lgamma
from .polynomials import not_implemented


def _derivative_missing(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


def _float_result(name, arrays, half=True):
    """The result dtype of a floating-point function of ``arrays`` (ints and bools give the
    default dtype); complex, and half precision unless ``half``, are not implemented."""
    from ...tensor import DEFAULT
    dtype = result_type(arrays)
    if dtype.kind in "biu":
        dtype = DEFAULT.float
    if dtype.kind == "c" or (dtype == np.float16 and not half):
        first = next(a for a in arrays if hasattr(a, "dtype"))
        raise not_implemented(name, dtype, first)
    return dtype


# -- incomplete gamma -----------------------------------------------------------------------------
class IgammaBackward0(Op):
    """y = P(a, x) = gamma(a, x) / Gamma(a), the regularised lower incomplete gamma function"""
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True
    array_fn = staticmethod(igamma_array)
    op_name = "igamma"
    grad_sign = 1.0

    def forward(self, xp, a, x):
        dtype = result_type([a, x])
        if dtype.kind != "f":
            raise not_implemented(self.op_name, dtype, a)
        return xp.asarray(type(self).array_fn(xp, a, x)).astype(dtype, copy=False)

    def backward(self, F, gy, a, x):
        if self.needs_input_grad[0]:
            raise _derivative_missing(f"{self.op_name}: input")
        # dP/dx = x^(a-1) e^-x / Gamma(a)
        lg = _array_or_op(F, a, lgamma_array, lambda v: lgamma(v))
        return None, gy * F.exp((a - 1) * F.log(x) - x - lg) * self.grad_sign


class IgammacBackward0(IgammaBackward0):
    """y = Q(a, x) = 1 - P(a, x), the regularised upper incomplete gamma function"""
    array_fn = staticmethod(igammac_array)
    op_name = "igammac"
    grad_sign = -1.0


def _both_tensors(name, input, other):
    for pos, arg, v in ((1, "input", input), (2, "other", other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(v).__name__}")


@export("igamma", method=True)
def igamma(input, other, *, out=None):
    """P(input, other); the gradient in ``input`` is not implemented (as in PyTorch)."""
    _both_tensors("igamma", input, other)
    return _out(IgammaBackward0.apply(input, other), out)


@export("igammac", method=True)
def igammac(input, other, *, out=None):
    """Q(input, other) = 1 - P(input, other)."""
    _both_tensors("igammac", input, other)
    return _out(IgammacBackward0.apply(input, other), out)


def gammainc(input, other, *, out=None):
    _both_tensors("special_gammainc", input, other)
    return _out(IgammaBackward0.apply(input, other), out)


def gammaincc(input, other, *, out=None):
    _both_tensors("special_gammaincc", input, other)
    return _out(IgammacBackward0.apply(input, other), out)


def _out(y, out):
    if out is None:
        return y
    out.copy_(y)
    return out


OPS = [IgammaBackward0, IgammacBackward0]
