"""Counting values into bins: histc, histogram, bincount (no gradients)."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..._backend import xp_of
from ..._exports import export
from ...tensor import Tensor
from ..linalg.norms import _kind_name
from ..shape.triangular import _kind

# -- histogram ----------------------------------------------------------------------------------
_HISTOGRAM = namedtuple("histogram", ["hist", "bin_edges"])
_HISTOGRAM.__module__ = "gpugrad.return_types"


@export("histogram", method=True)
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges): counts (or summed weights) of input's entries in the bins, the last
    bin closed; ``bins`` a number of equal bins over ``range`` (the data's range by default) or
    a 1-D tensor of increasing edges. ``density`` divides by the total times the bin width."""
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"histogramdd" not implemented for \'{_kind(a.dtype)}\'')
    xp = xp_of(a)
    flat = a.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins._data.astype(a.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                               f"dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
            if lo > hi:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                                   f"{lo:g} max {hi:g} for dimension 0")
        elif flat.size:
            lo, hi = float(flat.min()), float(flat.max())
        else:
            lo, hi = 0.0, 1.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = xp.linspace(lo, hi, int(bins) + 1).astype(a.dtype)
    w = None if weight is None else weight._data.reshape(-1)
    hist, _ = xp.histogram(flat, bins=edges, weights=w)
    hist = hist.astype(a.dtype)
    if density:
        hist = hist / (hist.sum() * xp.diff(edges))
    return _HISTOGRAM(Tensor._make(hist.astype(a.dtype)), Tensor._make(edges))


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


@export("bincount", method=True)
def bincount(input, weights=None, minlength=0):
    a = input._data
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and bool((a < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None if weights is None else _raw(weights)
    out = xp_of(a).bincount(a, weights=w, minlength=minlength)
    if w is not None and w.dtype == np.float32:
        out = out.astype(np.float32)
    return Tensor._make(out)


@export("histc", method=True)
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Counts in ``bins`` equal-width bins over [min, max] (the data's range when both are 0);
    entries outside are ignored, the last bin includes max."""
    a = input._data
    xp = xp_of(a)
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{_kind_name(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    x = a.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    t = a.dtype.type
    # NOTE: PyTorch's bin of x: trunc((x - min) * bins / (max - min)) in x's dtype, max -> last
    pos = ((x - t(lo)) * t(bins) / (t(hi) - t(lo))).astype(np.int64)
    pos = xp.minimum(pos, bins - 1)
    return Tensor._make(xp.bincount(pos, minlength=bins)[:bins].astype(a.dtype))


OPS: list = []
