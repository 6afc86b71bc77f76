"""Writing into positions named by an index: scatter, scatter_add, scatter_reduce, index_add,
index_fill, index_copy, index_reduce, select_scatter / slice_scatter / diagonal_scatter (and
take_along_dim, a gather after broadcasting).

Every op takes its index as an array (checked by the public function: dtype, shape, bounds on
every device, so a bad index is PyTorch's error, never a wrapped write) and keeps the positions
it wrote (``where``) for its backward, which reads or zeroes the gradient there.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..._arguments import tensor_data
from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
from .._op import Op, _device_error
from .gather import _along, _data
from .getitem import CopySlices

_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _head(a, shape):
    """The leading ``shape`` block of ``a`` (src may be larger than the index it is read by)."""
    if a.shape == tuple(shape):
        return a
    return a[tuple(slice(0, n) for n in shape)]


def _fit_src(F, g, shape):
    """The gradient of the leading block of src, as a gradient of all of src."""
    if g.shape == tuple(shape):
        return g
    return F.index_add(shape, tuple(slice(0, n) for n in g.shape), g)


def _mask(a, where):
    """ones like ``a`` with zeros at ``where``."""
    m = xp_of(a).ones(a.shape, dtype=a.dtype)
    m[where] = 0
    return m


def _zero_at(F, g, where):
    """``g`` with zeros at ``where`` (a new array, or a differentiable product)."""
    if F.fast:
        g = g.copy()
        g[where] = 0
        return g
    return g * _mask(g._data, where)


def reduce_at(xp, name, out, where, v):
    """``out[where] = name(out[where], v)`` in place, repeated positions reduced in turn
    (``np.<ufunc>.at``). Where the array module lacks the ufunc's ``at``, the writes go in
    rounds: round r writes, for each position, its r-th value, so no round repeats one."""
    if xp is np:
        getattr(np, name).at(out, where, v)
        return
    try:
        getattr(xp, name).at(out, where, v)
        return
    except (AttributeError, NotImplementedError, TypeError):
        pass
    reduce_in_rounds(xp, name, out, where, v)


def reduce_in_rounds(xp, name, out, where, v):
    """``reduce_at`` without ``ufunc.at``: as many fancy-index writes as the most repeated
    position has values."""
    flat = xp.arange(out.size).reshape(out.shape)[where].reshape(-1)
    v = xp.broadcast_to(v, flat.shape if v.ndim == 0 else v.shape).reshape(-1)
    order = xp.argsort(flat, kind="stable")
    flat, v = flat[order], v[order]
    rank = xp.arange(flat.size) - xp.searchsorted(flat, flat)   # r-th value at its position
    target = out.reshape(-1)
    ufunc = getattr(xp, name)
    for r in range(int(rank.max()) + 1 if flat.size else 0):
        sel = rank == r
        target[flat[sel]] = ufunc(target[flat[sel]], v[sel])


def _identity(reduce, dtype):
    """The value an excluded self starts from (include_self=False)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


def _scatter_reduce(xp, x, where, s, reduce, include_self):
    y = x.copy()
    if not include_self:
        y[where] = _identity(reduce, y.dtype)
    reduce_at(xp, _UFUNC[reduce], y, where, s)
    if reduce == "mean":
        n = _count(xp, y, where, include_self)
        y = y / n if y.dtype.kind in "fc" else y // n   # NOTE: integers round down, as PyTorch
    return y


def _count(xp, like, where, include_self):
    """How many values were reduced into each position (at least 1)."""
    n = xp.ones(like.shape, like.dtype) if include_self else xp.zeros(like.shape, like.dtype)
    reduce_at(xp, "add", n, where, xp.ones((), like.dtype))
    n[n == 0] = 1
    return n


class ScatterBackward0(Op):
    """y = x with src[i] written at index[i] along dim (repeated indices: one of them wins)"""
    __slots__ = ("where", "src_shape")
    temps = ("where",)

    def forward(self, xp, x, src, dim=0, index=None):
        self.where, self.src_shape = _along(xp, index, dim), src.shape
        y = x.copy()
        y[self.where] = _head(src, index.shape)
        return y

    def backward(self, F, gy):
        need = self.needs_input_grad
        return (_zero_at(F, gy, self.where) if need[0] else None,
                _fit_src(F, gy[self.where], self.src_shape) if need[1] else None)


class ScatterBackward1(Op):
    """y = x with value written at every position index names along dim"""
    __slots__ = ("where",)
    temps = ("where",)

    def forward(self, xp, x, dim=0, index=None, value=0):
        self.where = _along(xp, index, dim)
        y = x.copy()
        y[self.where] = xp.asarray(value).astype(x.dtype)
        return y

    def backward(self, F, gy):
        return _zero_at(F, gy, self.where)


class ScatterAddBackward0(Op):
    """y = x with src[i] added at index[i] along dim (repeated indices add up)"""
    __slots__ = ("where", "src_shape")
    temps = ("where",)

    def forward(self, xp, x, src, dim=0, index=None):
        self.where, self.src_shape = _along(xp, index, dim), src.shape
        y = x.copy()
        reduce_at(xp, "add", y, self.where, _head(src, index.shape))
        return y

    def backward(self, F, gy):
        need = self.needs_input_grad
        return gy, (_fit_src(F, gy[self.where], self.src_shape) if need[1] else None)


class ScatterReduceBackward0(Op):
    """y = x with src reduced into it at index along dim (sum, prod, mean, amax or amin; with
    include_self=False the reduced positions start from src alone)"""
    __slots__ = ("where", "src_shape", "dim", "index", "reduce", "include_self")
    saves = (0, 1)
    saves_output = True
    saved_names = ("self", "src", "result")

    def forward(self, xp, x, src, dim=0, index=None, reduce="sum", include_self=True):
        self.where, self.src_shape, self.dim, self.index = _along(xp, index, dim), src.shape, \
            dim, index
        self.reduce, self.include_self = reduce, include_self
        return _scatter_reduce(xp, x, self.where, _head(src, index.shape), reduce, include_self)

    def backward(self, F, gy, x, src, y):
        w, r = self.where, self.reduce
        xp = xp_of(_raw(y))
        if r == "sum":
            gx, gs = gy, gy[w]
        elif r == "mean":
            gx = gy / _count(xp, _raw(y), w, self.include_self)
            gs = gx[w]
        elif r in ("amax", "amin"):   # the gradient is shared evenly between tied extremes
            yr = _raw(y)
            # NOTE: self counts among the ties even when excluded (include_self=False), as in
            # PyTorch: its share is then dropped, not given to src
            hit_x = (_raw(x) == yr).astype(yr.dtype)
            hit_s = (_head(_raw(src), self.index.shape) == yr[w]).astype(yr.dtype)
            n = hit_x.copy()
            reduce_at(xp, "add", n, w, hit_s)
            gd = gy / n
            gx, gs = gd * hit_x, gd[w] * hit_s
        else:
            gx, gs = self._prod_grads(F, xp, gy, x, _head(src, self.index.shape), y)
        if not self.include_self:
            gx = _zero_at(F, gx, w)
        need = self.needs_input_grad
        return gx if need[0] else None, _fit_src(F, gs, self.src_shape) if need[1] else None

    def _prod_grads(self, F, xp, gy, x, s, y):
        """prod: each factor's gradient is the product of the others, zeros included exactly."""
        w, xr, sr = self.where, _raw(x), _raw(s)
        x_zero = (xr == 0).astype(xr.dtype)
        masked_x = x * (1 - x_zero) + x_zero           # zeros of x read as ones
        gx = gy * self._again(F, xp, masked_x, s) / masked_x
        s_zero = sr == 0
        zeros = xp.zeros(xr.shape, xr.dtype)
        reduce_at(xp, "add", zeros, w, s_zero.astype(xr.dtype))
        single = (s_zero & (zeros[w] == 1)).astype(xr.dtype)   # the only zero at its position
        if not F.fast and bool((zeros[w] > 1).any()):
            raise NotImplementedError("double backward through scatter_reduce(reduce='prod') "
                                      "with more than one zero of src at a position is not "
                                      "supported by gpugrad")
        s_nonzero = s * (1 - s_zero) + s_zero.astype(xr.dtype)
        masked_s = s * (1 - single) + single
        gs = ((gy * self._again(F, xp, x, masked_s))[w] * single
              + (gy * y)[w] / s_nonzero * (1 - single))
        return gx, gs

    def _again(self, F, xp, a, s):
        """scatter_reduce(a, ..., s, 'prod') on arrays, or recorded on tensors."""
        if F.fast:
            return _scatter_reduce(xp, a, self.where, s, "prod", self.include_self)
        return scatter_reduce(a, self.dim, Tensor._make(self.index), s, "prod",
                              include_self=self.include_self)


class IndexAddBackward0(Op):
    """y = x with alpha * source[i] added at position index[i] along dim"""
    __slots__ = ("where", "alpha")

    def forward(self, xp, x, source, dim=0, index=None, alpha=1):
        self.where, self.alpha = (slice(None),) * dim + (index,), alpha
        y = x.copy()
        reduce_at(xp, "add", y, self.where, source if alpha == 1 else source * alpha)
        return y

    def backward(self, F, gy):
        gs = None
        if self.needs_input_grad[1]:
            gs = gy[self.where] if self.alpha == 1 else gy[self.where] * self.alpha
        return gy, gs


class IndexFillBackward0(Op):
    """y = x with value (a number) at the positions index names along dim"""
    __slots__ = ("where",)

    def forward(self, xp, x, dim=0, index=None, value=0):
        self.where = (slice(None),) * dim + (index,)
        y = x.copy()
        y[self.where] = xp.asarray(value).astype(x.dtype)
        return y

    def backward(self, F, gy):
        return _zero_at(F, gy, self.where)


class IndexFillBackward1(Op):
    """y = x with value (a 0-d tensor) at the positions index names along dim"""
    __slots__ = ("where",)

    def forward(self, xp, x, value, dim=0, index=None):
        self.where = (slice(None),) * dim + (index,)
        y = x.copy()
        y[self.where] = value.astype(x.dtype)
        return y

    def backward(self, F, gy):
        gx = _zero_at(F, gy, self.where)
        return gx, (F.sum(gy - gx) if self.needs_input_grad[1] else None)   # each filled once


class IndexCopyBackward0(Op):
    """y = x with source[i] copied to position index[i] along dim"""
    __slots__ = ("where",)

    def forward(self, xp, x, source, dim=0, index=None):
        self.where = (slice(None),) * dim + (index,)
        y = x.copy()
        y[self.where] = source
        return y

    def backward(self, F, gy):
        need = self.needs_input_grad
        return (_zero_at(F, gy, self.where) if need[0] else None,
                gy[self.where] if need[1] else None)


# -- checks -------------------------------------------------------------------------------------
def _same_device(input, other):
    if isinstance(other, Tensor) and type(other._data) is not type(input._data):
        raise _device_error("scatter", input, other)


def _out_of_bounds(a, size, dim, kind=RuntimeError, prefix=""):
    bad = (a < 0) | (a >= size)
    if a.size and bool(bad.any()):
        raise kind(f"{prefix}index {int(a[bad].ravel()[0])} is out of bounds for dimension {dim} "
                   f"with size {size}")


def _scatter_index(input, dim, index, src):
    """The checked index array of scatter/scatter_add/scatter_reduce (PyTorch's checks and
    messages, in PyTorch's order)."""
    _same_device(input, index)
    a = tensor_data(index, "scatter")
    if a.dtype.kind not in "iu":
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if isinstance(src, Tensor):
        _same_device(input, src)
        if src.dtype != input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if a.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor) and a.ndim != src.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    self_shape, src_shape = tuple(input.shape), tuple(getattr(src, "shape", ()))
    for d, n in enumerate(a.shape):
        if (d != dim and n > self_shape[d]) or (isinstance(src, Tensor) and n > src_shape[d]):
            tail = (f" and to be no larger size than src {list(src_shape)}"
                    if isinstance(src, Tensor) else "")
            raise RuntimeError(f"Expected index {list(a.shape)} to be no larger than self "
                               f"{list(self_shape)} apart from dimension {dim}{tail}")
    _out_of_bounds(a, input.shape[dim] if input.ndim else 1, dim)
    return a


def _vector_index(fn, input, dim, index):
    _same_device(input, index)
    a = tensor_data(index, fn.rstrip("_"))
    if a.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector, but got dim: {a.ndim} with "
                         f"type: {_kind(a)} and size: {list(a.shape)}")
    return a.reshape(-1)


def _slices(input, dim, a, source):
    """The shape source must have: input's, with ``len(index)`` along dim."""
    _same_device(input, source)
    return tuple(input.shape[:dim]) + (a.size,) + tuple(input.shape[dim + 1:])


def _kind(t):
    return scalar_name(t.dtype).capitalize()


# -- public functions ---------------------------------------------------------------------------
@export("scatter", method=True)
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    dim = input._dim(dim)
    if reduce is not None:
        warnings.warn("The reduce argument of gpugrad.scatter with Tensor src is deprecated and "
                      "will be removed in a future release. Use gpugrad.scatter_reduce instead "
                      "for more reduction options.", UserWarning, stacklevel=2)
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if not isinstance(src, Tensor):
            xp = xp_of(input._data)
            src = Tensor._make(xp.full(_data(index).shape, src, dtype=input._data.dtype))
        return scatter_reduce(input, dim, index, src, "sum" if reduce == "add" else "prod")
    a = _scatter_index(input, dim, index, src)
    if isinstance(src, Tensor):
        return ScatterBackward0.apply(input, src, dim=dim, index=a)
    return ScatterBackward1.apply(input, dim=dim, index=a, value=src)


@export("scatter_add", method=True)
def scatter_add(input, dim, index, src):
    dim = input._dim(dim)
    a = _scatter_index(input, dim, index, src)
    return ScatterAddBackward0.apply(input, src, dim=dim, index=a)


@export("scatter_reduce", method=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in _UFUNC:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    dim = input._dim(dim)
    a = _scatter_index(input, dim, index, src)
    return ScatterReduceBackward0.apply(input, src, dim=dim, index=a, reduce=reduce,
                                        include_self=include_self)


@export("index_add", method=True)
def index_add(input, dim, index, source, *, alpha=1):
    dim = input._dim(dim)
    a = tensor_data(index, "index_add")
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_kind(a)}")
    a = _vector_index("index_add_", input, dim, index)
    s = _data(source)
    n = s.shape[dim] if s.ndim > dim else 1
    if s.ndim and a.size != n:
        raise RuntimeError(f"index_add_(): Number of indices ({a.size}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {dim}")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_add_(): self ({_kind(input)}) and source ({_kind(source)}) "
                           f"must have the same scalar type")
    if tuple(s.shape) != _slices(input, dim, a, source):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(s.shape)}")
    _out_of_bounds(a, input.shape[dim], dim)
    return IndexAddBackward0.apply(input, source, dim=dim, index=a, alpha=alpha)


@export("index_fill", method=True)
def index_fill(input, dim, index, value):
    dim = input._dim(dim)
    a = _data(index)
    if a.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if a.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    _same_device(input, index)
    a = a.reshape(-1)
    _out_of_bounds(a, input.shape[dim], dim, IndexError)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                               f"tensor with {value.ndim} dimension(s).")
        return IndexFillBackward1.apply(input, value, dim=dim, index=a)   # as masked_fill's
    return IndexFillBackward0.apply(input, dim=dim, index=a, value=value)


@export("index_copy", method=True)
def index_copy(input, dim, index, source):
    dim = input._dim(dim)
    a = _data(index)
    if a.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_kind(a)}")
    if a.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {a.ndim})")
    _same_device(input, index)
    a = a.reshape(-1)
    s = _data(source)
    if s.ndim and a.size != s.shape[min(dim, s.ndim - 1)]:
        raise IndexError(f"index_copy_(): Number of indices ({a.size}) should be equal to "
                         f"source.size(dim) ({s.shape[min(dim, s.ndim - 1)]})")
    if source.dtype != input.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_kind(input)} and (source) {_kind(source)}")
    if s.ndim and input.ndim and s.ndim != input.ndim:
        raise RuntimeError(f"index_copy_(): When source and destination are not scalars, their "
                           f"dimensionality must match. Source dimensionality ({s.ndim}), "
                           f"destination dimensionality ({input.ndim})")
    if tuple(s.shape) != _slices(input, dim, a, source):
        rest = [n for k, n in enumerate(input.shape) if k != dim]
        srest = [n for k, n in enumerate(s.shape) if k != dim]
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, rest))} at "
                           f"dimension {dim} and source slice shape: "
                           f"{' '.join(map(str, srest))} at dimension 0.")
    _out_of_bounds(a, input.shape[dim], dim, IndexError, "index_copy_(): ")
    return IndexCopyBackward0.apply(input, source, dim=dim, index=a)


@export("take_along_dim", method=True)
def take_along_dim(input, indices, dim=None):
    from ..shape.views import expand, reshape
    from .gather import gather
    a = _data(indices)
    if a.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_kind(a)}")
    if dim is None:
        return gather(reshape(input, -1), 0, reshape(_t(indices), -1))
    if input.ndim != a.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {a.ndim} dimensions for indices")
    dim = input._dim(dim)
    sizes = list(input.shape)
    sizes[dim] = a.shape[dim]
    full = list(np.broadcast_shapes(tuple(sizes), a.shape))
    at_index, at_input = full.copy(), full.copy()
    at_input[dim] = input.shape[dim]
    at_index[dim] = a.shape[dim]
    x = input if list(input.shape) == at_input else expand(input, *at_input)
    i = a if list(a.shape) == at_index else xp_of(a).broadcast_to(a, tuple(at_index))
    return gather(x, dim, Tensor._make(i))


def _t(i):
    return i if isinstance(i, Tensor) else Tensor._make(i)


def _scatter_into(input, src, index, slice_shape):
    if tuple(src.shape) != tuple(slice_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(slice_shape)}")
    return CopySlices.apply(input, src, index=index)


@export("select_scatter", method=True)
def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src"""
    d = input._dim(dim)
    part = input.select(d, index)
    return _scatter_into(input, src, (slice(None),) * d + (index,), part.shape)


@export("slice_scatter", method=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src"""
    d = input._dim(dim)
    idx = (slice(None),) * d + (slice(start, end, step),)
    return _scatter_into(input, src, idx, input._data[idx].shape)


@export("diagonal_scatter", method=True)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with input.diagonal(offset, dim1, dim2) replaced by src"""
    part = input.diagonal(offset, dim1, dim2)
    d1, d2 = input._dim(dim1), input._dim(dim2)
    xp = xp_of(input._data)
    # the flat positions of the diagonal's entries, in the order diagonal() lists them
    pos = xp.diagonal(xp.arange(input.numel()).reshape(input.shape), offset, d1, d2)
    return _scatter_into(input.reshape(-1), src, (pos,), part.shape).reshape(input.shape)


_INDEX_REDUCE = ("prod", "mean", "amax", "amin")


@export("index_reduce", method=True)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices reduced (prod, mean, amax or amin) into the slices of input
    that index names along dim; include_self=False leaves input's own values out of the slices
    written to."""
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


OPS = [ScatterBackward0, ScatterBackward1, ScatterAddBackward0, ScatterReduceBackward0,
       IndexAddBackward0, IndexFillBackward0, IndexFillBackward1, IndexCopyBackward0]


# -- Tensor methods: the in-place forms (the op out of place, then written) -----------------------
@tensor_method("scatter_")
def scatter_(s, dim, index, src=None, value=None, *, reduce=None):
    return inplace(s, lambda t, v: scatter(t, dim, index, v, reduce=reduce),
                   value if src is None else src)


@tensor_method("index_fill_")
def index_fill_(s, dim, index, value):
    return inplace(s, lambda t, v: index_fill(t, dim, index, v), value)


tensor_method("scatter_add_")(lambda s, dim, index, src: inplace(
    s, lambda t, v: scatter_add(t, dim, index, v), src))
tensor_method("scatter_reduce_")(lambda s, dim, index, src, reduce, *, include_self=True: inplace(
    s, lambda t, v: scatter_reduce(t, dim, index, v, reduce, include_self=include_self),
    src))
tensor_method("index_add_")(lambda s, dim, index, source, *, alpha=1: inplace(
    s, lambda t, v: index_add(t, dim, index, v, alpha=alpha), source))
tensor_method("index_copy_")(lambda s, dim, index, source: inplace(
    s, lambda t, v: index_copy(t, dim, index, v), source))
tensor_method("index_reduce_")(
    lambda s, dim, index, source, reduce, *, include_self=True: inplace(
        s, lambda t, v: index_reduce(t, dim, index, v, reduce, include_self=include_self),
        source))
