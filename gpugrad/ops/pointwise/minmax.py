"""Choosing between values elementwise: clamp / clip, clamp_min, clamp_max, maximum / minimum,
fmax / fmin (NaN-ignoring) and where.
"""
from __future__ import annotations

import numpy as np

from ... import _backend
from ..._arguments import expect_tensors, is_operand, not_tensor, overflow, type_name
from ..._backend import xp_of
from ..._exports import export, method_as_function, tensor_method
from ..._promotion import result_type
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
from .._op import Op, broadcast_error
from .arithmetic import _t, int_clamp_bounds


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
        # NOTE: as PyTorch: each side's gradient is cut only where it lost, so a NaN (which
        # neither wins nor loses) passes the gradient to both sides
        tie = 0.5 * (x == y)
        return gz * (1.0 - tie - 1.0 * (x < y)), gz * (1.0 - tie - 1.0 * (x > y))


class MinimumBackward0(Op):
    """z = min(x, y)   (NOTE: ties split the gradient evenly, as PyTorch)"""
    elementwise = True
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        return xp.minimum(x, y)

    def backward(self, F, gz, x, y):
        tie = 0.5 * (x == y)   # NOTE: a NaN passes the gradient to both sides (see maximum)
        return gz * (1.0 - tie - 1.0 * (x > y)), gz * (1.0 - tie - 1.0 * (x < y))


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


@export("clamp", "clip", method=True)
def clamp(input, min=None, max=None):
    for arg, v in (("min", min), ("max", max)):
        if v is not None and v.__class__ is not int and v.__class__ is not float \
                and not isinstance(v, Tensor) and not is_operand(v):
            raise TypeError(f"clamp(): argument '{arg}' must be Number or Tensor, not "
                            f"{type_name(v)}")
        if isinstance(v, complex):   # PyTorch reads the bounds as doubles
            raise overflow(v, np.float64)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is None or max is None:
            return ClampBackward0.apply(input, min if max is None else max,
                                        upper=max is not None)
        return ClampBackward0.apply(ClampBackward0.apply(input, min), max, upper=True)
    return ClampBackward1.apply(input, min=min, max=max)


clip = clamp


@export("maximum", method=True)
def maximum(input, other):
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        expect_tensors("maximum", ("input", "other"), input, other)
    return MaximumBackward0.apply(input, other)


@export("minimum", method=True)
def minimum(input, other):
    if input.__class__ is not Tensor or other.__class__ is not Tensor:
        expect_tensors("minimum", ("input", "other"), input, other)
    return MinimumBackward0.apply(input, other)


@export("where")
def where(condition, input=None, other=None):
    if input is None and other is None:
        return tuple(Tensor._make(i) for i in _t(condition)._data.nonzero())
    if isinstance(condition, Tensor):
        cond = condition._data
    elif _backend.is_array(condition):
        cond = condition
    else:
        raise not_tensor("where", "condition", condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {scalar_name(cond.dtype).capitalize()}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):   # two numbers
        d, xp = result_type([input, other]), _backend.xp_of(cond)
        input, other = xp.asarray(input, dtype=d), xp.asarray(other, dtype=d)
    return WhereBackward0.apply(input, other, cond=cond)


@export("clamp_min", method=True, inplace=True)
def clamp_min(input, min):
    return clamp(input, min=min)


@export("clamp_max", method=True, inplace=True)
def clamp_max(input, max):
    return clamp(input, max=max)


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


# -- nan-ignoring extremes ------------------------------------------------------------------------
def _fext(input, other, larger):
    a, b = _raw(input), _raw(other)
    xp = xp_of(a if isinstance(input, Tensor) else b)
    a, b = xp.asarray(a), xp.asarray(b)
    take_a = (a >= b) if larger else (a <= b)
    if b.dtype.kind == "f":
        take_a = take_a | xp.isnan(b)
    return where(Tensor._make(take_a), input, other)


@export("fmax", method=True)
def fmax(input, other, *, out=None):
    """max(a, b), or the one that is not nan (nan only when both are)."""
    expect_tensors("fmax", ("input", "other"), input, other)
    return _fext(input, other, True)


@export("fmin", method=True)
def fmin(input, other, *, out=None):
    """min(a, b), or the one that is not nan (nan only when both are)."""
    expect_tensors("fmin", ("input", "other"), input, other)
    return _fext(input, other, False)


OPS = [ClampBackward0, ClampBackward1, MaximumBackward0, MinimumBackward0, WhereBackward0]


# -- Tensor methods -------------------------------------------------------------------------------
tensor_method("where")(lambda s, cond, other: where(cond, s, other))
tensor_method("clamp_", "clip_")(lambda s, min=None, max=None: inplace(
    s, lambda t: clamp(t, min, max)))
method_as_function("clamp_", "clamp_max_", "clamp_min_", "clip_")
