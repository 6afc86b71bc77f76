"""Shape-building functions, all compositions of recorded ops (so gradients, double backward
and the GPU path come from those ops): atleast_1d/2d/3d, hstack/vstack/dstack/ column_stack/
row_stack, block_diag, cartesian_prod, combinations, meshgrid, broadcast_tensors, vander.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np

from ..._backend import xp_of
from ..._exports import export
from ..._promotion import result_type
from ...tensor import Tensor
from .._op import broadcast_error


def _tensors(args):
    """``f(a, b)`` and ``f([a, b])`` both as a list of tensors."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0]), True
    return list(args), len(args) != 1


# -- at least n dims, and the stacks built on them ------------------------------------------------
def _atleast(shape_of, args):
    ts, many = _tensors(args)
    out = tuple(t.reshape(shape_of(tuple(t.shape))) if t.ndim < 3 and shape_of(tuple(t.shape))
                != tuple(t.shape) else t for t in ts)
    return out if many else out[0]


@export("atleast_1d")
def atleast_1d(*tensors):
    return _atleast(lambda s: s or (1,), tensors)


@export("atleast_2d")
def atleast_2d(*tensors):
    return _atleast(lambda s: (1, 1) if not s else (1,) + s if len(s) == 1 else s, tensors)


@export("atleast_3d")
def atleast_3d(*tensors):
    return _atleast(lambda s: (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1
                    else s + (1,) if len(s) == 2 else s, tensors)


def _nonempty(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@export("hstack")
def hstack(tensors):
    from .joining import cat
    ts = atleast_1d(_nonempty(tensors, "hstack"))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


@export("row_stack", "vstack")
def vstack(tensors):
    from .joining import cat
    return cat(atleast_2d(_nonempty(tensors, "vstack")), 0)


row_stack = vstack


@export("dstack")
def dstack(tensors):
    from .joining import cat
    return cat(atleast_3d(_nonempty(tensors, "dstack")), 2)


@export("column_stack")
def column_stack(tensors):
    from .joining import cat
    ts = _nonempty(tensors, "column_stack")
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


# -- block matrices and index products ------------------------------------------------------------
@export("block_diag")
def block_diag(*tensors):
    """The tensors (0-D as 1x1, 1-D as a row) on the diagonal of a zero matrix."""
    from ..._creation import zeros
    from .joining import cat
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    dtype = result_type([t._data for t in tensors])
    mats = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    width = sum(m.shape[1] for m in mats)
    rows, left = [], 0
    dev = tensors[0].device
    for m in mats:
        r, c = m.shape
        rows.append(cat([zeros(r, left, dtype=dtype, device=dev), m.to(dtype),
                         zeros(r, width - left - c, dtype=dtype, device=dev)], 1))
        left += c
    return cat(rows, 0)


def _vectors(tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")


@export("cartesian_prod")
def cartesian_prod(*tensors):
    """Every tuple (a_i, b_j, ...) as the rows of a matrix, the last tensor varying fastest."""
    from .joining import stack
    _vectors(tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


@export("combinations")
def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of the entries of a vector, as rows, in lexicographic order of
    their positions."""
    from ..indexing.getitem import getitem
    _vectors([input])
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    xp = xp_of(input._data)
    idx = xp.asarray(np.asarray(rows, dtype=np.int64).reshape(len(rows), r))
    return getitem(input, Tensor._make(idx))


@export("meshgrid")
def meshgrid(*tensors, indexing=None):
    """Coordinate grids: output i holds tensor i expanded along the others' dimensions."""
    from .views import expand, reshape
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("gpugrad.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    sizes = [t.numel() for t in tensors]
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, t in enumerate(tensors):
        axis = {0: 1, 1: 0}.get(i, i) if swap else i
        shape = [1] * len(tensors)
        shape[axis] = -1
        out.append(expand(reshape(t, *shape), *sizes))
    return tuple(out)


@export("broadcast_tensors")
def broadcast_tensors(*tensors):
    from .views import expand
    try:
        full = np.broadcast_shapes(*(tuple(t.shape) for t in tensors))
    except ValueError as e:
        raise broadcast_error(e, [t._data for t in tensors]) from None
    return tuple(t if tuple(t.shape) == full else expand(t, *full) for t in tensors)


@export("vander")
def vander(x, N=None, increasing=False):
    """columns x ** (N-1), ..., x ** 0 (increasing: x ** 0 first)"""
    from ..pointwise.arithmetic import pow
    from .joining import stack
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x.dtype.kind in "iub":
        x = x.to(np.int64)
    if n == 0:
        return Tensor._make(xp_of(x._data).zeros((x.shape[0], 0), dtype=x.dtype))
    powers = range(n) if increasing else range(n - 1, -1, -1)
    return stack([pow(x, k) for k in powers], 1)


OPS: list = []
