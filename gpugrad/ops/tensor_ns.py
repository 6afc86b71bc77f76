"""The backward namespace ``F`` under ``create_graph=True``: numpy-style signatures over
differentiable gpugrad ops, so one backward formula serves arrays and tensors alike."""
from __future__ import annotations

from ..tensor import Tensor
from .indexing import getitem as index
from .linalg import products as linalg
from .nn import activation as nn_activation
from .pointwise import minmax, unary
from .reduction import reduce as reduction_reduce
from .reduction import scan
from .shape import flip as shape_flip
from .shape import joining, triangular, views

fast = False  # fused kernels are not differentiable: use the formulas

exp, log, sqrt, sign, abs = unary.exp, unary.log, unary.sqrt, unary.sign, \
    unary.abs
sin, cos, tanh, sigmoid = unary.sin, unary.cos, unary.tanh, nn_activation.sigmoid
matmul = linalg.matmul


def maximum(x, y):   # a number too (torch.maximum takes tensors only)
    return minmax.MaximumBackward0.apply(x, y)


def minimum(x, y):
    return minmax.MinimumBackward0.apply(x, y)


def erf(x):
    return unary.erf(x)


def where(cond, x, y):
    return minmax.where(cond, x, y)


def sum(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return reduction_reduce.sum(x)
    return reduction_reduce.sum(x, tuple(range(x.ndim)) if axis is None else axis, keepdims)


def mean(x, axis=None, keepdims=False):
    if axis is None and not keepdims:
        return reduction_reduce.mean(x)
    return reduction_reduce.mean(x, tuple(range(x.ndim)) if axis is None else axis, keepdims)


def reshape(x, shape_):
    return views.reshape(x, tuple(shape_))


def broadcast_to(x, shape_):
    if not isinstance(x, Tensor):
        x = Tensor._make(x)
    return x if tuple(x.shape) == tuple(shape_) else views.expand(x, tuple(shape_))


def expand_dims(x, axes):
    axes = (axes,) if isinstance(axes, int) else axes
    n = x.ndim + len(axes)
    for a in sorted(d % n for d in axes):
        x = views.unsqueeze(x, a)
    return x


def swapaxes(x, a, b):
    return views.transpose(x, a, b)


def transpose(x, axes):
    return views.permute(x, *axes)


def concatenate(xs, axis=0):
    return joining.cat(list(xs), axis)


def zeros_like(x, shape=None):
    from .._creation import zeros
    return zeros(x.shape if shape is None else shape, dtype=x.dtype, device=x.device)


def ones_like(x):
    from .._creation import ones_like as _ones_like
    return _ones_like(x)


def astype(x, dtype):
    return x.to(dtype)


def flip(x, axis):
    return shape_flip.flip(x, axis)


def roll(x, shifts, axis):
    return shape_flip.roll(x, shifts, axis)


def cumsum(x, axis):
    return scan.cumsum(x, axis)


def tril(x, k):
    return triangular.tril(x, k)


def triu(x, k):
    return triangular.triu(x, k)


def index_add(shape_, where, g):
    return index.IndexPutBackward0.apply(g, shape=tuple(shape_), index=where)
