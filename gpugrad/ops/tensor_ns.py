"""The backward namespace ``F`` under ``create_graph=True``: numpy-style signatures over
differentiable gpugrad ops, so one backward formula serves arrays and tensors alike."""
from __future__ import annotations

from ..tensor import Tensor
from . import activation, index, linalg, pointwise, reduce, shape

fast = False  # fused kernels are not differentiable: use the formulas

exp, log, sqrt, sign, abs = pointwise.exp, pointwise.log, pointwise.sqrt, pointwise.sign, \
    pointwise.abs
sin, cos, tanh, sigmoid = pointwise.sin, pointwise.cos, pointwise.tanh, activation.sigmoid
maximum, minimum, matmul = pointwise.maximum, pointwise.minimum, linalg.matmul


def erf(x):
    return pointwise.erf(x)


def where(cond, x, y):
    return pointwise.where(cond, x, y)


def sum(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return reduce.sum(x)
    return reduce.sum(x, tuple(range(x.ndim)) if axis is None else axis, keepdims)


def mean(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return reduce.mean(x)
    return reduce.mean(x, tuple(range(x.ndim)) if axis is None else axis, keepdims)


def reshape(x, shape_):
    return shape.reshape(x, tuple(shape_))


def broadcast_to(x, shape_):
    if not isinstance(x, Tensor):
        x = Tensor._make(x)
    return x if tuple(x.shape) == tuple(shape_) else shape.expand(x, tuple(shape_))


def expand_dims(x, axes):
    axes = (axes,) if isinstance(axes, int) else axes
    n = x.ndim + len(axes)
    for a in sorted(d % n for d in axes):
        x = shape.unsqueeze(x, a)
    return x


def swapaxes(x, a, b):
    return shape.transpose(x, a, b)


def transpose(x, axes):
    return shape.permute(x, *axes)


def concatenate(xs, axis=0):
    return shape.cat(list(xs), axis)


def zeros_like(x, shape=None):
    from .._creation import zeros
    return zeros(x.shape if shape is None else shape, dtype=x.dtype, device=x.device)


def ones_like(x):
    from .._creation import ones_like as _ones_like
    return _ones_like(x)


def astype(x, dtype):
    return x.to(dtype)


def flip(x, axis):
    from . import select
    return select.flip(x, axis)


def roll(x, shifts, axis):
    from . import select
    return select.roll(x, shifts, axis)


def cumsum(x, axis):
    from . import select
    return select.cumsum(x, axis)


def tril(x, k):
    from . import select
    return select.tril(x, k)


def triu(x, k):
    from . import select
    return select.triu(x, k)


def index_add(shape_, where, g):
    return index.IndexPutBackward0.apply(g, shape=tuple(shape_), index=where)
