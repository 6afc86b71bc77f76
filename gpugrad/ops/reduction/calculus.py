"""More shape and indexing functions, all compositions of recorded ops (gradients, double
backward and the GPU path come from those): hsplit/vsplit/dsplit, split_with_sizes, diagflat,
inner, dist, msort, the scatters (select_scatter, slice_scatter, diagonal_scatter,
masked_scatter, index_reduce), as_strided, addbmm, addr, vander, trapezoid,
cumulative_trapezoid and gradient (numpy.gradient's differences). Not differentiable, as in
PyTorch: tril_indices/triu_indices, unravel_index, argwhere and histogram."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import _backend
from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from .extra import nonzero
from .index import CopySlices, IndexBackward0
from .select import outer

argwhere = nonzero
ger = outer


def _kind(dtype):
    return scalar_name(dtype).capitalize()


# -- index builders -------------------------------------------------------------------------------
def _tri_indices(lower, row, col, offset, dtype, device, requires_grad):
    from .._creation import _finish, as_dtype
    d = as_dtype(dtype) or np.dtype(np.int64)
    name = "tril_indices" if lower else "triu_indices"
    if d.kind not in "iu":
        raise NotImplementedError(f'"{name}" not implemented for \'{_kind(d)}\'')
    for what, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{what} must be non-negative, got{n}")

    def make(xp):
        f = xp.tril_indices if lower else xp.triu_indices
        r, c = f(row, offset, col)
        return xp.stack([r, c]).astype(d)
    return _finish(_backend.on_device(device, make), requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The (row, column) indices of the lower triangle of a row x col matrix, as a 2 x N
    tensor in row-major order (offset: which diagonal bounds it)."""
    return _tri_indices(True, row, col, offset, dtype, device, requires_grad)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The (row, column) indices of the upper triangle of a row x col matrix (2 x N)."""
    return _tri_indices(False, row, col, offset, dtype, device, requires_grad)


def unravel_index(indices, shape):
    """Flat indices into a tensor of ``shape`` as a tuple of coordinate tensors. As PyTorch,
    indices are taken modulo the number of elements (so -1 is the last one)."""
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if isinstance(indices, Tensor):
        a = indices._data
    else:
        a = np.asarray(indices)
    if a.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got gpugrad.{a.dtype.name}")
    xp = xp_of(a)
    n = math.prod(shape)
    flat = a.astype(np.int64) % n if n else a.astype(np.int64)
    return tuple(Tensor._make(xp.asarray(c).astype(np.int64))
                 for c in xp.unravel_index(flat, shape))


# -- splits -------------------------------------------------------------------------------------
def _split_along(input, sections, name, least, dim):
    from .misc import tensor_split
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for a 1-D tensor)."""
    return _split_along(input, indices_or_sections, "hsplit", 1, 1 if input.ndim > 1 else 0)


def vsplit(input, indices_or_sections):
    """Split along dim 0 (at least 2-D)."""
    return _split_along(input, indices_or_sections, "vsplit", 2, 0)


def dsplit(input, indices_or_sections):
    """Split along dim 2 (at least 3-D)."""
    return _split_along(input, indices_or_sections, "dsplit", 3, 2)


def split_with_sizes(input, split_sizes, dim=0):
    from .shape import split
    d = input._dim(dim)
    sizes = [int(s) for s in split_sizes]
    if sum(sizes) != input.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={sizes}")
    return split(input, sizes, d)


# -- products and distances -----------------------------------------------------------------------
def diagflat(input, offset=0):
    """The flattened input on the offset-th diagonal of a square matrix."""
    from .extra import diag
    return diag(input.reshape(-1), offset)


def inner(input, other):
    """sum over the last dims: out[i..., j...] = sum_k a[i..., k] b[j..., k]"""
    from .stacking import tensordot
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, dims=([-1], [-1]))


def dist(input, other, p=2):
    """||input - other||_p over all entries"""
    from .matrix import vector_norm
    return vector_norm(input - other, p)


def msort(input):
    """input sorted along dim 0."""
    from .select import sort
    return sort(input, 0).values


def _scatter_into(input, src, index, slice_shape):
    if tuple(src.shape) != tuple(slice_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(slice_shape)}")
    return CopySlices.apply(input, src, index=index)


def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src"""
    d = input._dim(dim)
    part = input.select(d, index)
    return _scatter_into(input, src, (slice(None),) * d + (index,), part.shape)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src"""
    d = input._dim(dim)
    idx = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, idx, input._data[idx].shape)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with input.diagonal(offset, dim1, dim2) replaced by src"""
    part = input.diagonal(offset, dim1, dim2)
    d1, d2 = input._dim(dim1), input._dim(dim2)
    xp = xp_of(input._data)
    # the flat positions of the diagonal's entries, in the order diagonal() lists them
    pos = xp.diagonal(xp.arange(input.numel()).reshape(input.shape), offset, d1, d2)
    return _scatter_into(input.reshape(-1), src, (pos,), part.shape).reshape(input.shape)


def masked_scatter(input, mask, source):
    """input with the entries where mask is True replaced by source's first entries, in
    row-major order"""
    from .stacking import broadcast_shapes
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


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices reduced (prod, mean, amax or amin) into the slices of input
    that index names along dim; include_self=False leaves input's own values out of the slices
    written to."""
    from .scatter import scatter_reduce
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    d = input._dim(dim)
    a = index._data.reshape(-1)
    n = input.shape[d] if input.ndim else 1
    if a.size and bool(((a < -n) | (a >= n)).any()):
        raise IndexError("index out of range in self")
    xp = xp_of(a)
    a = xp.where(a < 0, a + n, a).astype(np.int64)
    view = [1] * source.ndim
    if source.ndim:
        view[d] = a.size
    full = xp.broadcast_to(a.reshape(view), source.shape)
    return scatter_reduce(input, d, Tensor._make(xp.ascontiguousarray(full)), source, reduce,
                          include_self=include_self)


def as_strided(input, size, stride, storage_offset=None):
    """The entries at storage_offset + sum_i k_i * stride[i] of the input's elements (taken in
    row-major order), as a tensor of ``size``. Differentiable (overlapping entries add their
    gradients); for a contiguous input the result is a view sharing its memory."""
    from .shape import _as_view
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    offset = 0 if storage_offset is None else int(storage_offset)
    a = input._data
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > a.size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {a.itemsize} requiring a storage size "
                           f"of {need * a.itemsize} are out of bounds for storage of size "
                           f"{a.size * a.itemsize}")
    xp = xp_of(a)
    pos = xp.full(size, offset, dtype=np.int64)
    for i, (n, s) in enumerate(zip(size, stride)):
        pos = pos + (xp.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(size) - i - 1))
    y = IndexBackward0.apply(input.reshape(-1), index=(pos,))
    if a.flags.c_contiguous:
        def view_fn(b):
            flat = b.reshape(-1)[offset:]
            return xp.lib.stride_tricks.as_strided(flat, size, [s * b.itemsize for s in stride])
        y._data = view_fn(a)
        _as_view(y, input, view_fn)
    return y


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b]   (beta = 0 ignores input, nan and
    all)"""
    from .linalg import bmm
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.ndim != 3
                           else "batch2 must be a 3D tensor")
    return _add_scaled(input, bmm(batch1, batch2).sum(0), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)"""
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    return _add_scaled(input, outer(vec1, vec2), beta, alpha)


def _add_scaled(input, y, beta, alpha):
    y = y if alpha == 1 else y * alpha
    if beta == 0:
        from .stacking import broadcast_shapes
        return y.expand(*broadcast_shapes(input.shape, y.shape)).contiguous()
    return (input if beta == 1 else input * beta) + y


def vander(x, N=None, increasing=False):
    """columns x ** (N-1), ..., x ** 0 (increasing: x ** 0 first)"""
    from .pointwise import pow
    from .shape import stack
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


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along dim: sum_i (y[i] + y[i+1]) / 2 * (x[i+1] - x[i]) (spacing
    dx, 1 by default, when x is not given)."""
    if x is not None and not isinstance(x, Tensor):
        x, dx = None, x   # trapz(y, dx) with the spacing as a number
    parts, d = _trapezoids(y, x, dx, dim)
    if parts is None:
        return y.sum(d)   # no trapezoids: 0
    return parts.sum(d)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal rule along dim (one entry fewer than y along dim)."""
    from .select import cumsum
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
    from .shape import cat
    return cat([first, inner, last], d)


_SPACING_DIMS = ("torch.gradient expected each element of spacing to have one dimension, but got "
                 "an element with {} dimensions!")


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
    from .._creation import get_default_dtype
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


# -- histogram ----------------------------------------------------------------------------------
_HISTOGRAM = namedtuple("histogram", ["hist", "bin_edges"])
_HISTOGRAM.__module__ = "gpugrad.return_types"


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
