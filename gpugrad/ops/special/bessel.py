"""Special functions of ``gpugrad.special`` beyond those in special.py. Every name in
``__all__`` is attached to ``gpugrad.special``.

Differentiable, as in PyTorch: the regularised incomplete gamma functions (gradient in x only),
Hurwitz's zeta (gradient in q only), erfcx, i0e and i1e; their gradients call these ops again,
so double backward works. Gradient-free, as in PyTorch (results never require grad): the Bessel
functions J, Y, I, K (and K scaled), the spherical j0, Airy's Ai and the orthogonal polynomials
(orthopoly.py). The numerics live in special_numerics.py and bessel.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from . import bessel, orthopoly
from ._op import Op, result_type
from .orthopoly import (  # noqa: F401  (public through __all__)
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    evaluate,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    not_implemented,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)
from .pointwise import _float
from .special import _array_or_op, _back, _raw, lgamma, lgamma_array
from .special_numerics import erfcx_array, igamma_array, igammac_array, zeta_array

_SQRT_PI = math.sqrt(math.pi)


def _derivative_missing(what):
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


def _float_result(name, arrays, half=True):
    """The result dtype of a floating-point function of ``arrays`` (ints and bools give the
    default dtype); complex, and half precision unless ``half``, are not implemented."""
    from ..tensor import DEFAULT
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


def igamma(input, other, *, out=None):
    """P(input, other); the gradient in ``input`` is not implemented (as in PyTorch)."""
    _both_tensors("igamma", input, other)
    return _out(IgammaBackward0.apply(input, other), out)


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


# -- Hurwitz zeta ---------------------------------------------------------------------------------
class SpecialZetaBackward0(Op):
    """y = zeta(s, q) = sum_k (q + k)^-s; dy/dq = -s zeta(s + 1, q), dy/ds not implemented"""
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, s, q):
        dtype = _float_result("zeta", [s, q], half=False)
        return xp.asarray(zeta_array(xp, s, q)).astype(dtype, copy=False)

    def backward(self, F, gy, s, q):
        need = self.needs_input_grad
        if need[0]:
            raise _derivative_missing("zeta")
        if F.fast:
            r = _raw(gy)
            z = _back(zeta_array(F.xp, s + 1, q), r)
        else:
            z = zeta(s + 1, q)
        return None, gy * -s * z


class SpecialZetaBackward1(SpecialZetaBackward0):
    """y = zeta(s, q), s a number"""


class SpecialZetaBackward2(SpecialZetaBackward0):
    """y = zeta(s, q), q a number (no derivative at all)"""


def zeta(input, other, *, out=None):
    """Hurwitz's zeta function sum_k (other + k)^-input."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        got = ", ".join(type(v).__name__ for v in (input, other))
        raise TypeError(
            f"special_zeta() received an invalid combination of arguments - got ({got}), but "
            f"expected one of:\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
            f" * (Number self, Tensor other, *, Tensor out = None)\n"
            f" * (Tensor input, Number other, *, Tensor out = None)\n")
    if not isinstance(input, Tensor):
        return _out(SpecialZetaBackward1.apply(input, other), out)
    if not isinstance(other, Tensor):
        return _out(SpecialZetaBackward2.apply(input, other), out)
    return _out(SpecialZetaBackward0.apply(input, other), out)


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


def _tensor_input(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def erfcx(input, *, out=None):
    _tensor_input("erfcx", input)
    return _out(SpecialErfcxBackward0.apply(input), out)


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


OPS = [IgammaBackward0, IgammacBackward0, SpecialZetaBackward0, SpecialZetaBackward1,
       SpecialZetaBackward2, SpecialErfcxBackward0, SpecialI0EBackward0, SpecialI1EBackward0]

__all__: list = ["gammainc", "gammaincc", "zeta", "erfcx", "i0e", "i1e", "bessel_j0",
                 "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                 "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                 "spherical_bessel_j0", "airy_ai", *orthopoly.POLYNOMIALS]
