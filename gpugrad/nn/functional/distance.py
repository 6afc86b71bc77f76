"""Distances: cosine similarity, pairwise distance and ``pdist``."""
from __future__ import annotations

import numpy as np

from ... import _creation
from ...autograd.grad_mode import no_grad
from ...ops._op import broadcast_error
from ...ops.reduction import reduce as reduction_reduce
from ...ops.shape.stacking import broadcast_tensors

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]


def _broadcast(x1, x2):
    try:
        return broadcast_tensors(x1, x2)
    except ValueError as e:
        raise broadcast_error(e, (x1._data, x2._data)) from None


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` (broadcast first)."""
    x1, x2 = _broadcast(x1, x2)

    def unit(x):
        n = reduction_reduce.norm(x, 2, dim, keepdim=True)
        # NOTE: PyTorch clamps the norm in place under no_grad, so the clamp has no gradient
        with no_grad():
            lift = n.clamp(min=eps) - n
        return x / (n + lift)
    return (unit(x1) * unit(x2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    last = max(x1.dim(), x2.dim()) - 1
    return reduction_reduce.norm(x1 - x2 + eps, p, last, keepdim)


def pdist(input, p=2):
    """||x_i - x_j||_p for every pair of rows i < j, in row-major order of (i, j)."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if input.dtype.kind != "f":
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(input.shape[0], 1)   # from the shape alone: no device read
    idx = lambda a: _creation.tensor(a, dtype=_creation.long, device=input.device)  # noqa
    diff = input.index_select(0, idx(rows)) - input.index_select(0, idx(cols))
    return reduction_reduce.norm(diff, p, 1)
