"""Sorting and searching: sort, argsort, msort, topk, unique / unique_consecutive, searchsorted
and bucketize.
"""
from __future__ import annotations

import numpy as np

from ..._arguments import expect_tensor
from ..._backend import xp_of
from ..._exports import export
from ...tensor import Tensor
from ..indexing.gather import GatherBackward0
from .reduce import _axes, values_indices


class SortBackward0(GatherBackward0):
    """values of sort(x, dim) (indices computed by the caller)"""
    __slots__ = ()


class TopkBackward0(GatherBackward0):
    """values of topk(x, k, dim) (indices computed by the caller)"""
    __slots__ = ()


def _order(input, dim, descending):
    """Indices that sort ``input`` along ``dim``, stable (equal values keep their order) and nan
    counted as the largest value, as PyTorch's sort."""
    xp = xp_of(input._data)
    a = input._data
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable")   # nan last
    # descending, stably, without negating (bool, unsigned, the smallest int): sort the reversed
    # array ascending, reverse that order and map it back
    n = a.shape[dim]
    back = xp.flip(xp.argsort(xp.flip(a, dim), axis=dim, kind="stable"), dim)
    return n - 1 - back


def _scalar(input, dim):
    """A 0-d input's sort, topk, argsort: dim must be 0 or -1; its order is index 0."""
    _axes(dim, 0)
    return xp_of(input._data).zeros((), dtype=np.int64)


@export("sort", method=True)
def sort(input, dim=-1, descending=False, stable=False):
    if expect_tensor(input, "sort").ndim == 0:
        return values_indices(input.clone(), Tensor._make(_scalar(input, dim)), "sort")
    dim = input._dim(dim)
    idx = _order(input, dim, descending)
    return values_indices(SortBackward0.apply(input, dim=dim, index=idx), Tensor._make(idx),
                          "sort")


@export("argsort", method=True)
def argsort(input, dim=-1, descending=False, stable=False):
    if input.ndim == 0:
        return Tensor._make(_scalar(input, dim))
    return Tensor._make(_order(input, input._dim(dim), descending))


@export("topk", method=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    if input.ndim == 0:
        if not 0 <= k <= 1:
            raise RuntimeError("selected index k out of range")
        return values_indices(input.clone(), Tensor._make(_scalar(input, dim)), "topk")
    dim = input._dim(dim)
    if not 0 <= k <= input.shape[dim]:
        raise RuntimeError("selected index k out of range")
    idx = _order(input, dim, largest)
    idx = idx[(slice(None),) * dim + (slice(0, k),)]
    return values_indices(TopkBackward0.apply(input, dim=dim, index=idx), Tensor._make(idx),
                          "topk")


@export("unique", method=True)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    a = input._data
    xp = xp_of(a)
    res = xp.unique(a if dim is None else a, return_inverse=return_inverse,
                    return_counts=return_counts, axis=None if dim is None else input._dim(dim))
    if not (return_inverse or return_counts):
        return Tensor._make(res)
    res = list(res)
    if return_inverse:
        res[1] = res[1].reshape(a.shape if dim is None else (a.shape[input._dim(dim)],))
    return tuple(Tensor._make(v) for v in res)


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


# -- sorted search --------------------------------------------------------------------------------
@export("searchsorted")
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """For each value, the index in the sorted innermost dim where it would be inserted (before
    equal entries, or after them with ``right=True`` / ``side='right'``)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    xp = xp_of(seq)
    scalar = not isinstance(input, Tensor)
    v = xp.asarray(input) if scalar else input._data
    if sorter is not None:
        seq = xp.take_along_axis(seq, _raw(sorter), axis=-1)
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != v.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(seq.shape)} and "
                           f"input value tensor {list(v.shape)}")
    how = "right" if right else "left"
    if seq.ndim == 1:
        idx = xp.searchsorted(seq, v, side=how)
    else:
        rows, vals = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        idx = xp.stack([xp.searchsorted(r, w, side=how) for r, w in zip(rows, vals)])
        idx = idx.reshape(v.shape)
    return Tensor._make(xp.asarray(idx).astype(np.int32 if out_int32 else np.int64))


@export("bucketize")
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each entry: i with boundaries[i-1] < x <= boundaries[i] (``right=True``:
    boundaries[i-1] <= x < boundaries[i])."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


@export("msort", method=True)
def msort(input):
    """input sorted along dim 0."""
    return sort(input, 0).values


@export("unique_consecutive", method=True)
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


OPS = [SortBackward0, TopkBackward0]
