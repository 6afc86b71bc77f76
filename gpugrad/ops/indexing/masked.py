"""Masked ops: masked_fill, masked_select, masked_scatter."""
from __future__ import annotations

import numpy as np

from ..._arguments import fits, is_operand, overflow, tensor_data, type_name
from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
from .._op import Op, broadcast_error, unbroadcast
from ..shape.triangular import _kind
from .getitem import CopySlices


class MaskedFillBackward0(Op):
    """y = value where mask else x   (value a number)"""
    __slots__ = ("keep",)
    temps = ("keep",)

    def forward(self, xp, x, mask=None, value=0):
        m = xp.broadcast_to(mask, x.shape)
        self.keep = (~m).astype(x.dtype)
        return xp.where(m, xp.asarray(value, dtype=x.dtype), x)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw["mask"], arrays[0]])

    def backward(self, F, gy):
        return gy * self.keep


class MaskedFillBackward1(Op):
    """y = value where mask else x   (value a 0-d tensor)"""
    __slots__ = ("keep",)
    temps = ("keep",)

    def forward(self, xp, x, value, mask=None):
        m = xp.broadcast_to(mask, x.shape)
        self.keep = (~m).astype(x.dtype)
        return xp.where(m, value.astype(x.dtype), x)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw["mask"], arrays[0]])

    def backward(self, F, gy):
        need = self.needs_input_grad
        gx = gy * self.keep if need[0] else None
        gv = F.sum(gy * (1 - self.keep)) if need[1] else None
        return gx, gv


@export("masked_fill", method=True)
def masked_fill(input, mask, value):
    m = tensor_data(mask, "masked_fill", "mask")
    if m.dtype.kind != "b":
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{scalar_name(m.dtype)}")
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        # the 0-d tensor stays a tensor input (PyTorch's MaskedFillBackward1 overload): no
        # host read of its value, and its gradient or tangent is there when one is asked for
        return MaskedFillBackward1.apply(input, value, mask=m)
    if not is_operand(value):
        raise TypeError(f"masked_fill(): argument 'value' must be Number or Tensor, not "
                        f"{type_name(value)}")
    if not fits(value, input._data.dtype):
        raise overflow(value, input._data.dtype)
    return MaskedFillBackward0.apply(input, mask=m, value=value)


class MaskedSelectBackward0(Op):
    """y = the entries of x (broadcast against mask) where mask is true, in row-major order"""
    __slots__ = ("shape", "full", "where")
    temps = ("where",)

    def forward(self, xp, x, mask=None):
        full = np.broadcast_shapes(x.shape, mask.shape)
        self.shape, self.full = x.shape, full
        self.where = xp.nonzero(xp.broadcast_to(mask, full))
        return xp.broadcast_to(x, full)[self.where]

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, [kw["mask"], arrays[0]])

    def backward(self, F, gy):
        return unbroadcast(F, F.index_add(self.full, self.where, gy), self.shape)


@export("masked_select", method=True)
def masked_select(input, mask):
    m = tensor_data(mask, "masked_select", "mask")
    if m.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    return MaskedSelectBackward0.apply(input, mask=m)


@export("masked_scatter", method=True)
def masked_scatter(input, mask, source):
    """input with the entries where mask is True replaced by source's first entries, in
    row-major order"""
    from ..shape.views import broadcast_shapes
    if mask.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_kind(mask.dtype)}")
    if input.dtype != source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_kind(input.dtype)} and {_kind(source.dtype)}")
    shape = tuple(broadcast_shapes(input.shape, mask.shape))
    xp = xp_of(mask._data)
    m = xp.broadcast_to(mask._data, shape)
    k = int(m.sum())
    if k > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    x = input if tuple(input.shape) == shape else input.expand(shape)
    return CopySlices.apply(x, source.reshape(-1)[:k], index=(m,))


OPS = [MaskedFillBackward0, MaskedFillBackward1, MaskedSelectBackward0]


# -- Tensor methods: in-place forms ---------------------------------------------------------------
tensor_method("masked_fill_")(lambda s, mask, value: inplace(
    s, lambda t: masked_fill(t, mask, value)))
tensor_method("masked_scatter_")(lambda s, mask, source: inplace(
    s, lambda t, v: masked_scatter(t, mask, v), source))
