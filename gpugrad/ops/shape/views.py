"""Shape ops: views (reshape, transpose, squeeze ...), copies and cat/stack/split (indexing and
assignment: ``index.py``)."""
from __future__ import annotations

import math

import numpy as np

from .. import _backend
from ..autograd.grad_mode import state as grad_state
from ..tensor import Tensor
from ._op import Op, unbroadcast


def _as_view(out, x, view_fn):
    """Mark ``out`` as a view of ``x``: same storage version counter, replayable from the base.
    A view made while grad mode is off (or of such a view) is marked: PyTorch forbids modifying
    it in place with grad mode on."""
    m = x._meta
    base = m.get("base") if m else None
    if base is None:
        base, fn = x, view_fn
    else:
        prev = m["view_fn"]
        fn = lambda a: view_fn(prev(a))  # noqa: E731
    om = out._m()
    om["base"], om["view_fn"] = base, fn
    if not grad_state.enabled:
        om["no_grad_view"] = "view"
    elif m and "no_grad_view" in m:
        om["no_grad_view"] = "view of a view"
    out._vbox = x._version_box()
    om["vver"] = out._vbox.v
    return out


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


class ViewBackward0(Op):
    """y = reshape(x, shape)"""
    __slots__ = ("shape",)

    def forward(self, xp, x, shape=None):
        self.shape = x.shape
        return x.reshape(shape)

    def backward(self, F, gy):
        return F.reshape(gy, self.shape)

    def bad_input(self, e, arrays, kw):
        shape = list(kw["shape"])
        if shape.count(-1) > 1:
            return RuntimeError("only one dimension can be inferred")
        if -1 in shape and arrays[0].size == 0:
            return RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because "
                                f"the unspecified dimension size -1 can be any value and is "
                                f"ambiguous")
        return RuntimeError(f"shape '{list(kw['shape'])}' is invalid for input of size "
                            f"{arrays[0].size}")


class UnsafeViewBackward0(ViewBackward0):
    """y = reshape(x, shape) of a non-contiguous x (a copy)"""
    __slots__ = ()


class SqueezeBackward0(ViewBackward0):
    __slots__ = ()


class SqueezeBackward1(ViewBackward0):
    __slots__ = ()


class SqueezeBackward2(ViewBackward0):
    """y = squeeze(x, dims) with a tuple of dims"""
    __slots__ = ()


class AliasBackward0(ViewBackward0):
    """y = x[...]: a new view of all of x"""
    __slots__ = ()


class UnsqueezeBackward0(ViewBackward0):
    __slots__ = ()


class ExpandBackward0(Op):
    """y = broadcast_to(x, shape)"""
    __slots__ = ("shape",)

    def forward(self, xp, x, shape=None):
        self.shape = x.shape
        return xp.broadcast_to(x, shape)

    def backward(self, F, gy):
        return unbroadcast(F, gy, self.shape)

    def bad_input(self, e, arrays, kw):
        return expand_error(arrays[0], kw["shape"]) or RuntimeError(str(e))


def expand_error(x, sizes):
    """PyTorch's error for expanding array ``x`` to ``sizes`` (-1 keeps a size), or None."""
    shape = x.shape
    lead = len(sizes) - len(shape)
    if lead < 0:
        from ..tensor import describe
        return RuntimeError(
            f"expand({describe(x).split(' ')[0]}{{{list(shape)}}}, size={list(sizes)}): the "
            f"number of sizes provided ({len(sizes)}) must be greater or equal to the number of "
            f"dimensions in the tensor ({len(shape)})")
    for i, s in enumerate(sizes):
        if i < lead:
            if s == -1:
                return RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                    f"leading, non-existing dimension {i}")
            continue
        have = shape[i - lead]
        if s != -1 and have != 1 and s != have:
            return RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                f"{list(shape)}")
    return None


class PermuteBackward0(Op):
    """y = transpose(x, axes)"""
    __slots__ = ("axes",)

    def forward(self, xp, x, axes=None):
        self.axes = axes
        return x.transpose(axes)

    def backward(self, F, gy):
        inverse = [0] * len(self.axes)
        for i, a in enumerate(self.axes):
            inverse[a] = i
        return F.transpose(gy, tuple(inverse))


class TransposeBackward0(PermuteBackward0):
    __slots__ = ()


class TBackward0(PermuteBackward0):
    __slots__ = ()


class CloneBackward0(Op):
    """y = copy of x"""
    elementwise = True

    def forward(self, xp, x):
        return x.copy()

    def backward(self, F, gy):
        return gy


class ToCopyBackward0(Op):
    """y = x cast to another dtype (or device)"""
    __slots__ = ("dtype", "device")

    def forward(self, xp, x, dtype=None, device=None):
        self.dtype, self.device = x.dtype, _backend.device_of(x)
        y = x if dtype is None else x.astype(dtype)
        y = y if device is None else _backend.to_device(y, device)
        return x.copy() if y is x else y   # to(..., copy=True) of what needs no conversion

    def backward(self, F, gy):
        g = F.astype(gy, self.dtype) if gy.dtype != self.dtype else gy
        if F.fast:
            return _backend.to_device(g, self.device)
        return g.to(self.device)


class CatBackward0(Op):
    """y = concatenate(xs, dim)"""
    __slots__ = ("axis", "sizes", "dtypes")

    def forward(self, xp, *xs, axis=0, dtype=None):
        self.axis, self.dtypes = axis, None
        self.sizes = [x.shape[axis] for x in xs]
        if dtype is not None:   # mixed dtypes, promoted as PyTorch does (not as numpy would)
            self.dtypes = [x.dtype for x in xs]
            xs = [x.astype(dtype, copy=False) for x in xs]
        return xp.concatenate(xs, axis=axis)

    def backward(self, F, gy):
        out, start = [], 0
        lead = (slice(None),) * self.axis
        for n in self.sizes:
            out.append(gy[lead + (slice(start, start + n),)])
            start += n
        return _cast_back(F, out, self.dtypes)

    def bad_input(self, e, arrays, kw):
        return RuntimeError(str(e))


class StackBackward0(Op):
    """y = stack(xs, dim)"""
    __slots__ = ("axis", "n", "dtypes")

    def forward(self, xp, *xs, axis=0, dtype=None):
        self.axis, self.n, self.dtypes = axis, len(xs), None
        if dtype is not None:
            self.dtypes = [x.dtype for x in xs]
            xs = [x.astype(dtype, copy=False) for x in xs]
        return xp.stack(xs, axis=axis)

    def backward(self, F, gy):
        lead = (slice(None),) * self.axis
        return _cast_back(F, [gy[lead + (i,)] for i in range(self.n)], self.dtypes)

    def bad_input(self, e, arrays, kw):
        first = arrays[0].shape
        i = next((i for i, a in enumerate(arrays) if a.shape != first), None)
        if i is None:
            return RuntimeError(str(e))
        return RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} "
                            f"at entry 0 and {list(arrays[i].shape)} at entry {i}")


def _cast_back(F, gxs, dtypes):
    """Each input's gradient in that input's dtype (after a promoting cat or stack)."""
    if dtypes is None:
        return tuple(gxs)
    return tuple(g if g.dtype == d else F.astype(g, d) for g, d in zip(gxs, dtypes))


def _mixed_dtype(tensors):
    """The dtype PyTorch promotes differing inputs to (a float32 and an int64 give float32),
    or None when they all agree."""
    d = tensors[0]._data.dtype
    for t in tensors:
        if t._data.dtype is not d and t._data.dtype != d:
            from ._op import _widest
            return _widest([t._data.dtype for t in tensors])
    return None


def _tensor_list(name, tensors):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not Tensor")
    return list(tensors)


def _check_cat(tensors, dim):
    """PyTorch's errors for tensors that cannot be concatenated along ``dim``. A 1-D empty
    tensor joins anything (PyTorch's legacy rule); the first other tensor is the reference."""
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    full = [(i, t._data.shape) for i, t in enumerate(tensors)
            if not (t.ndim == 1 and t._data.shape[0] == 0)]
    if not full:
        return
    ref = full[0][1]
    axis = tensors[full[0][0]]._dim(dim)
    for i, shape in full[1:]:
        if len(shape) != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} "
                               f"and {len(shape)}")
        for d, (a, b) in enumerate(zip(ref, shape)):
            if d != axis and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. "
                                   f"Expected size {a} but got size {b} for tensor number {i} "
                                   f"in the list.")


class SplitBackward0(Op):
    """ys = split(x, sizes, dim)   (one output per piece)"""
    __slots__ = ("axis", "sizes", "shape")

    @property
    def n_outputs(self):
        return len(self.sizes)

    def forward(self, xp, x, sizes=None, axis=0):
        self.axis, self.sizes, self.shape = axis, sizes, x.shape
        lead = (slice(None),) * axis
        out, start = [], 0
        for n in sizes:
            out.append(x[lead + (slice(start, start + n),)])
            start += n
        return tuple(out)

    def backward(self, F, grads):
        parts = []
        for g, n in zip(grads, self.sizes):
            if g is None:
                shape = list(self.shape)
                shape[self.axis] = n
                ref = next(x for x in grads if x is not None)
                g = F.zeros_like(ref, shape=tuple(shape)) if F.fast else _zeros_t(ref, shape)
            parts.append(g)
        return F.concatenate(parts, axis=self.axis)


class SplitWithSizesBackward0(SplitBackward0):
    __slots__ = ()


class UnbindBackward0(SplitBackward0):
    """ys = x[0], x[1], ... along dim (the pieces drop that dim)"""
    __slots__ = ()

    def forward(self, xp, x, sizes=None, axis=0):
        ys = SplitBackward0.forward(self, xp, x, sizes=[1] * x.shape[axis], axis=axis)
        return tuple(y.squeeze(axis) for y in ys)

    def backward(self, F, grads):
        return SplitBackward0.backward(
            self, F, [None if g is None else F.expand_dims(g, (self.axis,)) for g in grads])


def _zeros_t(ref, shape):
    return Tensor._make(_backend.xp_of(ref._data).zeros(shape, dtype=ref._data.dtype))


# -- public functions ---------------------------------------------------------------------------
def reshape(input, *shape):
    shape = _shape_arg(shape)
    for i, n in enumerate(shape):
        if n < -1:   # numpy would infer it as it does -1
            raise RuntimeError(f"invalid shape dimension {n} at index {i} of shape {list(shape)}")
    x = input._data
    if not x.flags.c_contiguous and not _reshapes_to_view(x, shape):
        # a copy: recorded as PyTorch does, clone then _unsafe_view of the contiguous clone
        return UnsafeViewBackward0.apply(CloneBackward0.apply(input), shape=shape)
    y = ViewBackward0.apply(input, shape=shape)
    if y._data.base is not None and (y._data.base is x or y._data.base is x.base):
        _as_view(y, input, lambda a: a.reshape(shape))
    return y


def _reshapes_to_view(x, shape) -> bool:
    try:
        v = x.reshape(shape)
    except ValueError:
        return True  # let ViewBackward0 raise PyTorch's error
    return v.base is not None and (v.base is x or v.base is x.base)


def view(input, *shape):
    if isinstance(shape[0] if shape else None, np.dtype) or (
            shape and isinstance(shape[0], type)):
        raise RuntimeError("view(dtype) is not supported; use .to(dtype)")
    x = input._data
    if not x.flags.c_contiguous and not _reshapes_to_view(x, _shape_arg(shape)):
        # NOTE: numpy reshapes without a copy exactly when PyTorch's view can: the new shape
        # only splits or merges dims whose strides are contiguous with each other
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return reshape(input, *shape)


def flatten(input, start_dim=0, end_dim=-1):
    s, e = input._dim(start_dim), input._dim(end_dim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 0:
        return reshape(input, 1)
    shape = input._data.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def squeeze(input, dim=None):
    shape = input._data.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
        return _view_op(SqueezeBackward0, input, new)
    one = isinstance(dim, int)
    dims = [input._dim(d) for d in ((dim,) if one else dim)]
    if len(set(dims)) < len(dims):
        raise RuntimeError(f"dim {next(d for d in dims if dims.count(d) > 1)} appears multiple "
                           f"times in the list of dims")
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return _view_op(SqueezeBackward1 if one else SqueezeBackward2, input, new)


def unsqueeze(input, dim):
    n = input.ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    shape = list(input._data.shape)
    shape.insert(dim % n, 1)
    return _view_op(UnsqueezeBackward0, input, tuple(shape))


def _view_op(cls, input, shape):
    y = cls.apply(input, shape=shape)
    return _as_view(y, input, lambda a: a.reshape(shape))


def expand(input, *sizes):
    sizes = _shape_arg(sizes)
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    error = expand_error(input._data, sizes)
    if error is not None:
        raise error
    full = tuple(shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return ExpandBackward0.apply(input, shape=full)


def expand_as(input, other):
    return expand(input, other._data.shape)


def broadcast_to(input, shape):
    return expand(input, tuple(shape))


def permute(input, *dims):
    dims = _shape_arg(dims)
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    axes = tuple(input._dim(d) for d in dims)
    if len(set(axes)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    y = PermuteBackward0.apply(input, axes=axes)
    return _as_view(y, input, lambda a: a.transpose(axes))


def transpose(input, dim0, dim1):
    axes = list(range(input.ndim))
    d0, d1 = input._dim(dim0), input._dim(dim1)   # a 0-d tensor takes dims -1 and 0
    if input.ndim:
        axes[d0], axes[d1] = axes[d1], axes[d0]
    axes = tuple(axes)
    y = TransposeBackward0.apply(input, axes=axes)
    return _as_view(y, input, lambda a: a.transpose(axes))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    axes = tuple(range(input.ndim))[::-1]
    y = TBackward0.apply(input, axes=axes)
    return _as_view(y, input, lambda a: a.transpose(axes))


def clone(input, *, memory_format=None):
    return CloneBackward0.apply(input)


def contiguous(input, memory_format=None):
    """``input`` dense in row-major order, or in the order ``memory_format`` names
    (``channels_last``: N, H, W, C fastest last, the shape unchanged)."""
    from .._compat import channels_last_axes
    axes = None if memory_format is None else channels_last_axes(memory_format, input.ndim)
    if axes is None:
        return input if input._data.flags.c_contiguous else CloneBackward0.apply(input)
    if input.is_contiguous(memory_format=memory_format):
        return input
    inverse = tuple(sorted(range(len(axes)), key=axes.__getitem__))
    return permute(contiguous(permute(input, axes)), inverse)


def cat(tensors, dim=0):
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    _check_cat(tensors, dim)
    ref, dtype = tensors[0], _mixed_dtype(tensors)
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or [ref]
    if dtype is not None:
        return CatBackward0.apply(*tensors, axis=tensors[0]._dim(dim), dtype=dtype)
    return CatBackward0.apply(*tensors, axis=tensors[0]._dim(dim))


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    n = tensors[0].ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    dtype = _mixed_dtype(tensors)
    if dtype is not None:
        return StackBackward0.apply(*tensors, axis=dim % n, dtype=dtype)
    return StackBackward0.apply(*tensors, axis=dim % n)


def split(tensor, split_size_or_sections, dim=0):
    if tensor.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    axis = tensor._dim(dim)
    n = tensor._data.shape[axis]
    if isinstance(split_size_or_sections, int):
        k = split_size_or_sections
        if k < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={k}")
        if k == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        sizes = [k] * (n // k) + ([n % k] if n % k else []) if k > 0 else [n]
        cls = SplitBackward0
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
        cls = SplitWithSizesBackward0
    outs = cls.apply(tensor, sizes=sizes, axis=axis)
    return tuple(_as_view(o, tensor, _piece(axis, s, k))
                 for o, s, k in zip(outs, np.cumsum([0] + sizes[:-1]), sizes))


def _piece(axis, start, n):
    sl = (slice(None),) * axis + (slice(int(start), int(start + n)),)
    return lambda a: a[sl]


def chunk(input, chunks, dim=0):
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[input._dim(dim)]
    if n == 0:   # as many empty pieces as asked for
        return split(input, [0] * chunks, dim)
    return split(input, max(-(-n // chunks), 1), dim)


def unbind(input, dim=0):
    axis = input._dim(dim)
    return UnbindBackward0.apply(input, axis=axis)


OPS = [ViewBackward0, UnsafeViewBackward0, SqueezeBackward0, SqueezeBackward1, SqueezeBackward2,
       AliasBackward0, UnsqueezeBackward0, ExpandBackward0, PermuteBackward0, TransposeBackward0,
       TBackward0, CloneBackward0, ToCopyBackward0, CatBackward0, StackBackward0, SplitBackward0,
       SplitWithSizesBackward0, UnbindBackward0]
