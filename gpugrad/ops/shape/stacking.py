"""Shape-building functions, all compositions of recorded ops (so gradients, double backward and
the GPU path come from those ops): tensordot, atleast_1d/2d/3d, hstack/vstack/dstack/
column_stack/row_stack, block_diag, cartesian_prod, combinations, diag_embed; and the
non-differentiable broadcast_shapes and unique_consecutive."""
from __future__ import annotations

import itertools

import numpy as np

from .._backend import xp_of
from ..tensor import Size, Tensor
from ._op import result_type


def _tensors(args):
    """``f(a, b)`` and ``f([a, b])`` both as a list of tensors."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0]), True
    return list(args), len(args) != 1


# -- tensordot ----------------------------------------------------------------------------------
def tensordot(a, b, dims=2, out=None):
    """sum over the paired dims of a and b: a's other dims, then b's other dims."""
    from .linalg import mm
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da, db = [a._dim(d) for d in da], [b._dim(d) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    left = a.permute(*(fa + da)).reshape(-1, k)
    right = b.permute(*(db + fb)).reshape(k, -1)
    return mm(left, right).reshape([a.shape[d] for d in fa] + [b.shape[d] for d in fb])


# -- at least n dims, and the stacks built on them ------------------------------------------------
def _atleast(shape_of, args):
    ts, many = _tensors(args)
    out = tuple(t.reshape(shape_of(tuple(t.shape))) if t.ndim < 3 and shape_of(tuple(t.shape))
                != tuple(t.shape) else t for t in ts)
    return out if many else out[0]


def atleast_1d(*tensors):
    return _atleast(lambda s: s or (1,), tensors)


def atleast_2d(*tensors):
    return _atleast(lambda s: (1, 1) if not s else (1,) + s if len(s) == 1 else s, tensors)


def atleast_3d(*tensors):
    return _atleast(lambda s: (1, 1, 1) if not s else (1,) + s + (1,) if len(s) == 1
                    else s + (1,) if len(s) == 2 else s, tensors)


def _nonempty(tensors, name):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    from .shape import cat
    ts = atleast_1d(_nonempty(tensors, "hstack"))
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    from .shape import cat
    return cat(atleast_2d(_nonempty(tensors, "vstack")), 0)


row_stack = vstack


def dstack(tensors):
    from .shape import cat
    return cat(atleast_3d(_nonempty(tensors, "dstack")), 2)


def column_stack(tensors):
    from .shape import cat
    ts = _nonempty(tensors, "column_stack")
    return cat([t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in ts], 1)


# -- block matrices and index products ------------------------------------------------------------
def block_diag(*tensors):
    """The tensors (0-D as 1x1, 1-D as a row) on the diagonal of a zero matrix."""
    from .._creation import zeros
    from .shape import cat
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


def cartesian_prod(*tensors):
    """Every tuple (a_i, b_j, ...) as the rows of a matrix, the last tensor varying fastest."""
    from .extra import meshgrid
    from .shape import stack
    _vectors(tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    """The length-r combinations of the entries of a vector, as rows, in lexicographic order of
    their positions."""
    from .index import getitem
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


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """y with y[..., i, i + offset] = x[..., i]: the last dim of x on a diagonal of the
    (dim1, dim2) matrices, zeros elsewhere."""
    from .._creation import zeros
    from .extra import movedim
    n = input.shape[-1] if input.ndim else 1
    m = n + abs(offset)
    ndim = input.ndim + 1
    d1, d2 = (d + ndim if d < 0 else d for d in (dim1, dim2))
    if not (0 <= d1 < ndim and 0 <= d2 < ndim):
        bad = dim1 if not 0 <= d1 < ndim else dim2
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {bad})")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    y = zeros(*input.shape[:-1], m, m, dtype=input.dtype, device=input.device)
    xp = xp_of(input._data)
    i = xp.arange(n)
    rows, cols = i + max(-offset, 0), i + max(offset, 0)
    y[..., rows, cols] = input
    return movedim(y, (-2, -1), (d1, d2))


# -- not differentiable ---------------------------------------------------------------------------
def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to, without making any tensor."""
    result: list = []
    for k, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        if len(s) > len(result):
            result = [1] * (len(s) - len(result)) + result
        for j in range(1, len(s) + 1):
            if s[-j] < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {s[-j]}: "
                                   f"{list(s)}")
            if s[-j] != 1 and result[-j] not in (1, s[-j]):
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[-j]} at "
                                   f"{-j}! Mismatching argument at index {k} had {s}; but "
                                   f"expected shape should be broadcastable to {result}")
            if result[-j] == 1:
                result[-j] = s[-j]
    return Size(result)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive entries (or slices along ``dim``) to one."""
    a = input._data
    xp = xp_of(a)
    if dim is None:
        rows, shape = a.reshape(-1, 1), a.shape
    else:
        d = input._dim(dim)
        moved = xp.moveaxis(a, d, 0)
        rows, shape = moved.reshape(moved.shape[0], -1), (a.shape[d],)
    n = rows.shape[0]
    new = xp.ones(n, dtype=bool)
    if n > 1:
        new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    starts = xp.flatnonzero(new)
    if dim is None:
        values = a.reshape(-1)[starts]
    else:
        values = xp.take(a, starts, axis=d)
    out = [Tensor._make(values)]
    if return_inverse:
        out.append(Tensor._make((xp.cumsum(new) - 1).reshape(shape).astype(np.int64)))
    if return_counts:
        ends = xp.concatenate([starts[1:], xp.asarray([n], dtype=starts.dtype)])
        out.append(Tensor._make((ends - starts).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)
