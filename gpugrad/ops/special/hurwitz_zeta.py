"""The Hurwitz zeta function ``zeta`` of ``gpugrad.special`` (numerics: _numerics.py)."""
from __future__ import annotations

from ...tensor import Tensor
from .._op import Op
from ._numerics import _back, _raw, zeta_array
from .incomplete_gamma import _derivative_missing, _float_result, _out


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


OPS = [SpecialZetaBackward0, SpecialZetaBackward1, SpecialZetaBackward2]
