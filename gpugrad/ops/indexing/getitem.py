"""Indexing (``x[i]``, slices, integer and boolean arrays), assignment into a tensor
(``x[i] = v``) and the nodes that re-base a view and its base after an in-place change; and
select.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from ... import _backend
from ..._arguments import fits, overflow, type_name
from ..._backend import xp_of
from ..._exports import export, method_as_function, tensor_method
from ...autograd.grad_mode import state as grad_state
from ...autograd.graph import Node, new_node
from ...tensor import Tensor, _wrap_grad, describe
from ...tensor_inplace import inplace
from .._op import Op, unbroadcast
from ..shape.views import AliasBackward0, _as_view, _view_op


class SliceBackward0(Op):
    """y = x[index]"""
    __slots__ = ("shape", "index")

    def forward(self, xp, x, index=None):
        self.shape, self.index = x.shape, index
        return x[index]

    def backward(self, F, gy):
        return F.index_add(self.shape, self.index, gy)

    def bad_input(self, e, arrays, kw):
        msg = str(e).replace("axis", "dimension")
        if isinstance(e, IndexError):
            return IndexError(_index_message(msg, arrays[0].shape, kw["index"]))
        return RuntimeError(msg)


class SelectBackward0(SliceBackward0):
    __slots__ = ()


class IndexBackward0(SliceBackward0):
    __slots__ = ()


class IndexPutBackward0(Op):
    """y = zeros(shape) with g added at index   (the backward of indexing, made differentiable)"""
    __slots__ = ("index",)

    def forward(self, xp, g, shape=None, index=None):
        self.index = index
        from .._op import array_ns
        return array_ns(g).index_add(shape, index, g)

    def backward(self, F, gy):
        return gy[self.index]


class CopySlices(Op):
    """x[index] = value, recorded in place: y = x with the indexed region replaced by value"""
    __slots__ = ("index", "vshape")

    def forward(self, xp, x, value, index=None):
        self.index = index
        self.vshape = getattr(value, "shape", ())
        y = x.copy()
        y[index] = value
        return y

    def backward(self, F, gy):
        gv = None
        if self.next_functions[1][0] is not None:
            gv = unbroadcast(F, gy[self.index], self.vshape)
        if F.fast:
            gx = gy.copy()
            gx[self.index] = 0
        else:
            mask = _backend.xp_of(gy._data).ones(gy.shape, dtype=gy._data.dtype)
            mask[self.index] = 0
            gx = gy * mask
        return gx, gv

    def name(self):
        return "torch::autograd::CopySlices"  # as PyTorch names it

    def bad_input(self, e, arrays, kw):
        if isinstance(e, ValueError) and "broadcast" in str(e):
            region = arrays[0][kw["index"]].shape
            if str(e).startswith("shape mismatch: value array"):
                return RuntimeError(f"shape mismatch: value tensor of shape "
                                    f"{list(arrays[1].shape)} cannot be broadcast to indexing "
                                    f"result of shape {list(region)}")
            from ..shape.views import expand_error
            return expand_error(arrays[1], region) or RuntimeError(str(e))
        return SliceBackward0.bad_input(self, e, arrays, kw)


class AsStridedBackward0(Op):
    """view = view_fn(base): a view re-derived from its base after an in-place change"""
    __slots__ = ("view_fn", "shape")

    def forward(self, xp, base, view_fn=None):
        self.view_fn, self.shape = view_fn, base.shape
        return view_fn(base)

    def backward(self, F, gy):
        if not F.fast:
            return _scatter(gy, self.shape, self.view_fn)
        g = F.zeros(self.shape, dtype=gy.dtype)
        self.view_fn(g)[...] = gy
        return g


def _scatter(t, shape, view_fn):
    """zeros(shape) with ``t`` in the region ``view_fn`` selects, differentiably (its backward
    gathers the region back)."""
    z = _backend.xp_of(t._data).zeros(shape, dtype=t._data.dtype)
    view_fn(z)[...] = t._data
    return ViewCopySlices.apply(Tensor._make(z), t, view_fn=view_fn)


class ViewCopySlices(Op):
    """base with the region seen through ``view_fn`` replaced by a new value (in-place on a view)"""
    __slots__ = ("view_fn",)

    def forward(self, xp, base, value, view_fn=None):
        self.view_fn = view_fn
        return base  # the data was already written in place through the view

    def backward(self, F, gy):
        if not F.fast:  # differentiable: gather the view's region, mask it out of the base
            gv = AsStridedBackward0.apply(gy, view_fn=self.view_fn)
            mask = _backend.xp_of(gy._data).ones(gy.shape, dtype=gy._data.dtype)
            self.view_fn(mask)[...] = 0
            return gy * mask, gv
        gv = self.view_fn(gy).copy()
        gb = gy.copy()
        self.view_fn(gb)[...] = 0
        return gb, gv

    def name(self):
        return "torch::autograd::CopySlices"  # as PyTorch names it


class CopySlicesOver(Node):
    """The base after an in-place op on one of its views, wrapping that op's node ``fn`` as
    PyTorch's CopySlices does: the view's region of the gradient runs through ``fn`` (whose
    first input was the view), the rest of it flows to the base's previous value."""
    __slots__ = ("fn", "view_fn")
    temps = ("fn",)  # _release also frees the wrapped node's saved values

    @classmethod
    def make(cls, base, fn, view_fn):
        from .._op import edge
        n = new_node(cls)
        n.fn, n.view_fn = fn, view_fn
        n.next_functions = (edge(base),) + fn.next_functions[1:]
        return n

    def name(self):
        return "torch::autograd::CopySlices"

    def _run(self, grads, create_graph):
        if self._saved is None:
            self._check_saved()
        g = grads[0]
        if create_graph:  # differentiable: gather the region, scatter fn's gradient back
            g = _wrap_grad(g)
            res = self.fn._run([AsStridedBackward0.apply(g, view_fn=self.view_fn)], True)
            mask = _backend.xp_of(g._data).ones(g.shape, dtype=g._data.dtype)
            self.view_fn(mask)[...] = 0
            gb = g * mask
            if res[0] is not None:
                gb = gb + _scatter(res[0], g.shape, self.view_fn)
            return (gb,) + tuple(res[1:])
        res = self.fn._run([self.view_fn(g).copy()], False)
        gb = _backend.xp_of(g).array(g, copy=True)
        self.view_fn(gb)[...] = 0 if res[0] is None else res[0]
        return (gb,) + tuple(res[1:])

    def _release(self):
        self._saved = None
        self.fn._release()


def _normalize_index(index, xp, ndim):
    """PyTorch index -> array index; also says which node name it records under: PyTorch's
    top node is that of the last non-trivial component (``x[1:, 0]`` selects, ``x[0, 1:]``
    slices), and any advanced index makes it IndexBackward0. Ints or bools next to index
    arrays give a ``_Split`` (PyTorch applies them first, as views)."""
    tup = index if isinstance(index, tuple) else (index,)
    out, kind, advanced, ellipses, scalar = [], "slice", False, 0, False
    for i in tup:
        if isinstance(i, Tensor):
            i = i._data
            if i.ndim == 0 and i.dtype.kind in "iu":
                i = int(i)
        elif isinstance(i, range):   # x[range(n), target], as in PyTorch's tutorials
            i = list(i)
        if isinstance(i, (list, np.ndarray)) or (xp is not np and isinstance(i, xp.ndarray)):
            if (tup is not index and i.__class__ is list
                    and not _PLAIN.issuperset(map(type, i)) and _sequence_as_tuple(i)):
                return _normalize_index(tuple(i), xp, ndim)
            raw, i = i, xp.asarray(i)
            if i.dtype not in _INDEX_DTYPES:
                i = _unusual_index_array(i, raw)
            advanced = True
        elif isinstance(i, bool):
            advanced = scalar = True
        elif isinstance(i, slice):
            if i != _FULL:
                for v in (i.start, i.stop, i.step):
                    if v is not None and v.__class__ is not int and not hasattr(v, "__index__"):
                        raise TypeError("slice indices must be integers or None or have an "
                                        "__index__ method")
                if i.step is not None and i.step <= 0:
                    raise ValueError("step must be greater than zero" if i.step
                                     else "slice step cannot be zero")
                kind = "slice"
        elif i is None:
            pass
        elif i is Ellipsis:
            ellipses += 1
        elif isinstance(i, (int, np.integer)):
            i = int(i)
            kind, scalar = "select", True
        else:   # (a string is a TypeError in PyTorch, a float an IndexError)
            raise (TypeError if isinstance(i, str) else IndexError)(
                f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                f"Variables are valid indices (got {type(i).__name__})")
        out.append(i)
    if ellipses > 1:
        out = _one_ellipsis(out, ndim)
    if advanced:
        return (_split(out, xp) if scalar else tuple(out)), "index"
    return tuple(out), kind


_FULL = slice(None)
_PLAIN = frozenset((int, bool))
_INDEX_DTYPES = frozenset(np.dtype(d) for d in (np.int64, np.int32, np.bool_))
SEQUENCE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error "
    "or a different result")
UINT8_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                 "torch.bool instead.")


def _sequence_as_tuple(seq):
    """PyTorch reads a short list holding a sequence, tensor, slice, None or ``...`` as a tuple
    of indices (``x[[[0, 1], [1, 2]]]`` is ``x[[0, 1], [1, 2]]``), with a warning."""
    if len(seq) >= 32 or not any(v is None or v is Ellipsis or isinstance(
            v, (Tensor, list, tuple, range, slice, np.ndarray)) for v in seq):
        return False
    warnings.warn(SEQUENCE_WARNING, UserWarning, stacklevel=4)
    return True


def _unusual_index_array(i, raw):
    """An index array neither int64, int32 nor bool: uint8 is a mask (deprecated), an empty
    list selects nothing; anything else is an error."""
    if i.dtype == np.uint8:
        warnings.warn(UINT8_WARNING, UserWarning, stacklevel=4)
        return i.astype(np.bool_)
    if i.size == 0 and raw.__class__ is list:
        return i.astype(np.int64)
    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")


def _consumes(i):
    """How many dims of the indexed tensor an index component uses up."""
    if i is None or i is Ellipsis or i.__class__ is bool:
        return 0
    return i.ndim if getattr(i, "dtype", None) is not None and i.dtype.kind == "b" else 1


def _one_ellipsis(out, ndim):
    """``x[..., 1, ...]``: each ``...`` stands for the dims nothing else names (as PyTorch
    reads it); full slices that then run past the last dim are dropped."""
    fill = max(ndim - sum(_consumes(i) for i in out if i is not Ellipsis), 0)
    full = []
    for i in out:
        full.extend((_FULL,) * fill if i is Ellipsis else (i,))
    n = sum(_consumes(i) for i in full)
    while n > ndim and full and isinstance(full[-1], slice) and full[-1] == _FULL:
        full.pop()
        n -= 1
    return full


class _Split:
    """An index mixing ints or bools with index arrays, in PyTorch's two steps: ``basic``
    (the ints select, a bool adds a dim) as a view, then ``adv`` (the arrays) on that view:
    ``x[1, :, [0, 2]]`` is ``x[1][:, [0, 2]]``, shape (4, 2) for x of shape (3, 4, 5), where
    numpy's rule would give (2, 4)."""
    __slots__ = ("basic", "adv")


def _split(out, xp):
    sp = _Split()
    basic, adv = [], []
    for i in out:
        if i.__class__ is int:
            basic.append(i)
        elif i.__class__ is bool:   # a new dim of size 1, indexed by [0] (True) or [] (False)
            basic.append(None)
            adv.append(xp.zeros(int(i), dtype=np.int64))
        elif i is None or i is Ellipsis or isinstance(i, slice):
            basic.append(i)
            adv.append(i if i is Ellipsis else _FULL)
        else:
            basic.extend((_FULL,) * _consumes(i))
            adv.append(i)
    sp.basic, sp.adv = tuple(basic), tuple(adv)
    return sp


def _index_message(msg, shape, index):
    """PyTorch's wording of numpy's indexing errors."""
    if msg.startswith("too many indices"):
        return f"too many indices for tensor of dimension {len(shape)}"
    arrays = [i for i in (index if isinstance(index, tuple) else (index,))
              if getattr(i, "dtype", None) is not None]
    if "could not be broadcast" in msg:
        return ("shape mismatch: indexing tensors could not be broadcast together with shapes "
                + ", ".join(str(list(a.shape)) for a in arrays))
    if msg.startswith("boolean index did not match"):
        d = 0
        for i in index:
            if getattr(i, "dtype", None) is not None and i.dtype.kind == "b":
                for j, n in enumerate(i.shape):
                    if shape[d + j] != n:
                        return (f"The shape of the mask {list(i.shape)} at index {j} does not "
                                f"match the shape of the indexed tensor {list(shape)} at index "
                                f"{d + j}")
            d += len(shape) - sum(_consumes(k) for k in index) if i is Ellipsis else _consumes(i)
    return msg


_INDEX_NODES = {"select": SelectBackward0, "slice": SliceBackward0, "index": IndexBackward0}


def _basic_steps(idx, ndim):
    """A basic index as PyTorch applies it while recording: one view op per component, left to
    right ('select', dim, i), ('slice', dim, s) or ('unsqueeze', dim); full slices add none."""
    consuming = sum(1 for i in idx if i is not None and i is not Ellipsis)
    steps, d = [], 0
    for i in idx:
        if i is Ellipsis:
            d += ndim - consuming
        elif i is None:
            steps.append(("unsqueeze", d))
            d += 1
        elif isinstance(i, slice):
            if i != _FULL:
                steps.append(("slice", d, i))
            d += 1
        else:
            steps.append(("select", d, i))
    return steps


def _check_zero_dim(index):
    """PyTorch's errors for a Python int or a slice indexing a 0-d tensor (numpy says 'too many
    indices', as PyTorch does for the other kinds of index)."""
    i = index[0] if isinstance(index, tuple) and len(index) == 1 else index
    if isinstance(i, slice):
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if isinstance(i, int) and not isinstance(i, bool):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number"
                         if i == 0 else f"index {i} is out of bounds for dimension 0 with size 0")


@tensor_method("__getitem__")
def getitem(x, index):
    if not x._data.ndim:
        _check_zero_dim(index)
    xp = _backend.xp_of(x._data)
    idx, kind = _normalize_index(index, xp, x._data.ndim)
    if kind != "index" and x._rg and grad_state.enabled and idx == (Ellipsis,):
        return _view_op(AliasBackward0, x, x.shape)   # x[...]: PyTorch's alias
    if kind != "index" and x._rg and grad_state.enabled and (len(idx) > 1 or idx[0] is None):
        steps = _basic_steps(idx, x.ndim)
        if not steps:   # x[:, :], x[:, ...]: all of x, PyTorch's alias
            return _view_op(AliasBackward0, x, x.shape)
        if (len(steps) > 1 or steps[0][0] == "unsqueeze") and idx.count(Ellipsis) <= 1:
            # x[0, 1:] records SliceBackward0 over SelectBackward0, as PyTorch does
            try:
                y = x
                for step in steps:
                    y = (y.unsqueeze(step[1]) if step[0] == "unsqueeze"
                         else getitem(y, (_FULL,) * step[1] + (step[2],)))
                return y
            except IndexError:
                pass   # the one-op path raises PyTorch's message, naming x's own dimension
    if kind != "index":
        y = _INDEX_NODES[kind].apply(x, index=idx)
        return _as_view(y, x, lambda a: a[idx])
    if idx.__class__ is _Split:
        return IndexBackward0.apply(getitem(x, idx.basic), index=idx.adv)
    return IndexBackward0.apply(x, index=idx)


@tensor_method("__setitem__")
def setitem(x, index, value):
    if not x._data.ndim:
        _check_zero_dim(index)
    xp = _backend.xp_of(x._data)
    idx, kind = _normalize_index(index, xp, x._data.ndim)
    from ...tensor_inplace import HINT, VIEW_OF_LEAF, inplace
    value = _check_value(x, index, value)
    if kind != "index":
        if x._rg and x.grad_fn is None and grad_state.enabled:
            raise RuntimeError(VIEW_OF_LEAF + HINT)  # x[i] = v writes through a view of x
    elif idx.__class__ is _Split:   # PyTorch: the ints select a view, the arrays write into it
        return setitem(getitem(x, idx.basic), idx.adv, value)
    inplace(x, lambda t, v: CopySlices.apply(t, v, index=idx), value,
            raw=lambda a, v: a.__setitem__(idx, v))


def _check_value(x, index, value):
    """The value ``x[index] = value`` writes, or PyTorch's errors for what it cannot write: a
    value of another type
    than a number, a tensor or a sequence of numbers; a number the dtype cannot hold; a uint8
    mask (deprecated for reading, refused for writing)."""
    if value.__class__ is float or value.__class__ is int or isinstance(value, (
            numbers.Number, np.generic)):
        if not fits(value, x._data.dtype):
            raise overflow(value, x._data.dtype)
        if x._data.dtype.kind == "u" and value < 0:   # -1 into uint8 is 255, as in PyTorch
            value = int(value) % (np.iinfo(x._data.dtype).max + 1)
    elif not isinstance(value, (Tensor, list, tuple)) and not _backend.is_array(value):
        raise TypeError(f"can't assign a {type_name(value)} to a "
                        f"{describe(x._data).split(' ')[0]}")
    for i in index if isinstance(index, tuple) else (index,):
        if isinstance(i, Tensor) and i._data.dtype == np.uint8:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
    return value


@export("select", method=True)
def select(input, dim, index):
    d = input._dim(dim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return getitem(input, (slice(None),) * d + (int(index),))


@export("as_strided", method=True)
def as_strided(input, size, stride, storage_offset=None):
    """The entries at storage_offset + sum_i k_i * stride[i] of the input's elements (taken in
    row-major order), as a tensor of ``size``. Differentiable (overlapping entries add their
    gradients); for a contiguous input the result is a view sharing its memory."""
    from ..shape.views import _as_view
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


OPS = [SliceBackward0, SelectBackward0, IndexBackward0, IndexPutBackward0, CopySlices,
       AsStridedBackward0, ViewCopySlices]


# -- Tensor methods: writes at flat positions and at index arrays ---------------------------------
@tensor_method("put")
def _put(self, index, source, accumulate=False):
    """self with source written (added, for accumulate) at flat positions index."""
    n = self.numel()
    a = index._data.reshape(-1)
    src = source.reshape(-1).to(self.dtype)
    if src.numel() != a.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {src.numel()}, index.numel() = "
                         f"{a.size}")
    bad = (a < -n) | (a >= n)
    if bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(a[bad][0])} on a tensor of "
                         f"{n} elements.")
    xp = _backend.xp_of(a)
    a = xp.where(a < 0, a + n, a)
    flat = self.reshape(-1)
    if accumulate:
        y = flat + IndexPutBackward0.apply(src, shape=(n,), index=(a,))
    else:
        y = CopySlices.apply(flat, src, index=(a,))
    return y.reshape(self.shape)


def _index_arrays(self, indices):
    """``indices`` (tensors, None for a full dim) as an array index, bool masks expanded to
    their positions, bounds checked with PyTorch's message."""
    xp = _backend.xp_of(self._data)
    out, d = [], 0
    for i in indices:
        if i is None:
            out.append(slice(None))
            d += 1
            continue
        a = xp.asarray(i._data if isinstance(i, Tensor) else i)
        if a.dtype.kind == "b":
            out.extend(a.nonzero())
            d += a.ndim
            continue
        if a.dtype.kind not in "iu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        size = self.shape[d]
        bad = (a < -size) | (a >= size)
        if bool(bad.any()):
            raise IndexError(f"index {int(a[bad].ravel()[0])} is out of bounds for dimension {d} "
                             f"with size {size}")
        out.append(xp.where(a < 0, a + size, a))
        d += 1
    return tuple(out)


@tensor_method("index_put")
def _index_put(self, indices, values, accumulate=False):
    """self with values written (added, for accumulate: repeated positions add up) at
    self[indices]."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"index_put(): argument 'indices' must be tuple of Tensors, not "
                        f"{type_name(indices)}")
    for k, i in enumerate(indices):
        if i is not None and not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 0, but got "
                            f"{type_name(i)}")
    idx = _index_arrays(self, tuple(indices))
    if not isinstance(values, Tensor):
        values = Tensor._make(_backend.xp_of(self._data).asarray(values, dtype=self.dtype))
    values = values.to(self.dtype)
    if not accumulate:
        return CopySlices.apply(self, values, index=idx)
    shape = self._data[idx].shape
    v = values.expand(*shape) if tuple(values.shape) != shape else values
    return self + IndexPutBackward0.apply(v, shape=tuple(self.shape), index=idx)


tensor_method("put_")(lambda s, index, source, accumulate=False: inplace(
    s, lambda t, v: _put(t, index, v, accumulate), source))
tensor_method("index_put_")(lambda s, indices, values, accumulate=False: inplace(
    s, lambda t, v: _index_put(t, indices, v, accumulate), values))
method_as_function("index_put_")


@export("put")
def put(input, index, source, accumulate=False):
    return input.put(index, source, accumulate)


@export("index_put")
def index_put(input, indices, values, accumulate=False):
    return input.index_put(indices, values, accumulate)
