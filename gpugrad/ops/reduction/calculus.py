"""Finite differences and integration along a dimension: diff, gradient, trapezoid / trapz and
cumulative_trapezoid, all compositions of recorded ops.
"""
from __future__ import annotations

import numpy as np

from ..._backend import xp_of
from ..._exports import export
from ...tensor import Tensor


# -- integration --------------------------------------------------------------------------------
def _trapezoids(y, x, dx, dim):
    """The area of each trapezoid along dim: (y[i] + y[i+1]) / 2 * (x[i+1] - x[i])."""
    d = y._dim(dim)
    n = y.shape[d]
    if n == 0:
        return None, d
    left, right = y.narrow(d, 0, n - 1), y.narrow(d, 1, n - 1)
    if x is None:
        return (left + right) * (0.5 * (1 if dx is None else dx)), d
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        step = (x[1:] - x[:-1]).reshape((-1,) + (1,) * (y.ndim - d - 1))
    else:
        step = x.narrow(x._dim(dim), 1, n - 1) - x.narrow(x._dim(dim), 0, n - 1)
    return (left + right) * step * 0.5, d


@export("trapezoid")
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: sum_i (y[i] + y[i+1]) / 2 * (x[i+1] - x[i]) (spacing
    dx, 1 by default, when x is not given)."""
    if x is not None and not isinstance(x, Tensor):
        x, dx = None, x   # trapz(y, dx) with the spacing as a number
    parts, d = _trapezoids(y, x, dx, dim)
    if parts is None:
        return y.sum(d)   # no trapezoids: 0
    return parts.sum(d)


@export("trapz")
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@export("cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along dim (one entry fewer than y along dim)."""
    from .scan import cumsum
    if x is not None and not isinstance(x, Tensor):
        x, dx = None, x
    parts, d = _trapezoids(y, x, dx, dim)
    if parts is None:
        return y.clone()
    return cumsum(parts, d)


def _differences(f, d, h, edge_order):
    """np.gradient's second-order accurate differences of f along d: central inside, one-sided
    of ``edge_order`` at the two ends. ``h`` is the spacing (a number) or the n - 1 steps
    between the coordinates (a 1-D tensor)."""
    n = f.shape[d]

    def at(start, length=1):
        return f.narrow(d, start, length)

    if isinstance(h, Tensor):
        def step(start, length=1):   # steps start .. start + length - 1, shaped to broadcast
            return h.narrow(0, start, length).reshape((length,) + (1,) * (f.ndim - d - 1))
        hl, hr = step(0, n - 2), step(1, n - 2)
        inner = (hl * hl * at(2, n - 2) - hr * hr * at(0, n - 2)
                 + (hr * hr - hl * hl) * at(1, n - 2)) / (hl * hr * (hl + hr))
        a, y = step(0), step(n - 2)
        b, z = (step(1), step(n - 3)) if n > 2 else (None, None)
    else:
        inner = (at(2, n - 2) - at(0, n - 2)) / (2.0 * h)
        a = b = y = z = h
    if edge_order == 1:
        first, last = (at(1) - at(0)) / a, (at(n - 1) - at(n - 2)) / y
    else:   # the parabola through the three points at each end
        first = (-(2 * a + b) / (a * (a + b)) * at(0) + (a + b) / (a * b) * at(1)
                 - a / (b * (a + b)) * at(2))
        last = (y / (z * (z + y)) * at(n - 3) - (y + z) / (z * y) * at(n - 2)
                + (2 * y + z) / (y * (z + y)) * at(n - 1))
    from ..shape.joining import cat
    return cat([first, inner, last], d)


_SPACING_DIMS = ("torch.gradient expected each element of spacing to have one dimension, but got "
                 "an element with {} dimensions!")


@export("gradient")
def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of d input / d x_k along each dimension k (or those of ``dim``), as
    ``numpy.gradient`` computes them: ``spacing`` is one number for all dimensions, one per
    dimension, or each dimension's coordinates as a 1-D tensor."""
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = (list(range(input.ndim)) if dim is None else
            [input._dim(d) for d in ((dim,) if isinstance(dim, int) else dim)])
    if isinstance(spacing, Tensor):   # a 0-d tensor is a number, a 1-D one coordinates
        spacing = spacing.item() if spacing.ndim == 0 else [spacing]
    if isinstance(spacing, (list, tuple)):
        if dim is None and len(spacing) != input.ndim:
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                f"length equal to 'self.dim() = {input.ndim}', since dim argument was not "
                f"given, but got a list of length {len(spacing)}")
        if dim is not None and len(spacing) != len(dims):
            raise RuntimeError(
                "torch.gradient expected spacing to be unspecified, a scalar or it's spacing "
                "and dim arguments to have the same length, but got a spacing argument of "
                f"length {len(spacing)} and a dim argument of length {len(dims)}.")
    else:
        spacing = [spacing] * len(dims)
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")
    from ..._creation import get_default_dtype
    f = input if input.is_floating_point() else input.to(get_default_dtype())
    out = []
    for d, h in zip(dims, spacing):
        if isinstance(h, Tensor):
            if h.ndim != 1:
                raise RuntimeError(_SPACING_DIMS.format(h.ndim))
            if h.shape[0] != input.shape[d]:
                raise RuntimeError(
                    f"torch.gradient expected the coordinates along dimension {d} to have "
                    f"one entry per element ({input.shape[d]}), but got {h.shape[0]}")
            if not h.is_floating_point():
                h = h.to(f.dtype)
            h = h[1:] - h[:-1]
        out.append(_differences(f, d, h, edge_order))
    return tuple(out)


@export("diff", method=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    from ..indexing.getitem import getitem
    from ..shape.joining import cat
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = input._dim(dim)
    parts = []
    for extra in (prepend, append):
        if extra is not None and not isinstance(extra, Tensor):
            extra = Tensor._make(xp_of(input._data).asarray(extra, dtype=input._data.dtype))
        if extra is not None and extra.ndim == 0:
            extra = extra.expand(*(1 if k == d else s for k, s in enumerate(input.shape)))
        if extra is not None and extra.ndim != input.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.append(extra)
    x = cat([t for t in (parts[0], input, parts[1]) if t is not None], d) \
        if any(p is not None for p in parts) else input
    lead = (slice(None),) * d
    for _ in range(n):
        if x.shape[d] == 0:
            break
        hi, lo = getitem(x, lead + (slice(1, None),)), getitem(x, lead + (slice(None, -1),))
        x = hi ^ lo if x.dtype == np.bool_ else hi - lo
    return x


OPS: list = []
