"""Joining and splitting: cat / concat, stack, split, split_with_sizes, tensor_split, hsplit /
vsplit / dsplit, chunk, unbind.
"""
from __future__ import annotations

import numpy as np

from ..._arguments import expect_int, expect_tensor, type_name
from ..._exports import export
from ...tensor import Tensor, as_dim, scalar_name
from .._op import Op
from .views import _as_view, _zeros_t


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
            from ..._promotion import _widest
            return _widest([t._data.dtype for t in tensors])
    return None


def _tensor_list(name, tensors):
    """The tensors of cat / stack: a list or tuple of tensors, or PyTorch's TypeError."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type_name(tensors)}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(t)}")
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


@export("cat", "concat", "concatenate")
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


@export("stack")
def stack(tensors, dim=0):
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    if dim.__class__ is not int:
        dim = as_dim(dim)
    n = tensors[0].ndim + 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    dtype = _mixed_dtype(tensors)
    if dtype is not None:
        return StackBackward0.apply(*tensors, axis=dim % n, dtype=dtype)
    return StackBackward0.apply(*tensors, axis=dim % n)


@export("split", method=True)
def split(tensor, split_size_or_sections, dim=0):
    if expect_tensor(tensor, "split").ndim == 0:
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


@export("chunk", method=True)
def chunk(input, chunks, dim=0):
    if input.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if expect_int(chunks, "chunk", "chunks") <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.shape[input._dim(dim)]
    if n == 0:   # as many empty pieces as asked for
        return split(input, [0] * chunks, dim)
    return split(input, max(-(-n // chunks), 1), dim)


@export("unbind", method=True)
def unbind(input, dim=0):
    axis = input._dim(dim)
    return UnbindBackward0.apply(input, axis=axis)


@export("tensor_split", method=True)
def tensor_split(input, indices_or_sections, dim=0):
    from ..indexing.getitem import getitem
    if input.ndim == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a "
                           f"tensor with {input.ndim} dims")
    d = input._dim(dim)
    n = input.shape[d]
    split = indices_or_sections
    if isinstance(split, Tensor):
        if split.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {scalar_name(split.dtype).capitalize()}")
        split = split.item() if split.ndim == 0 else split.tolist()
    if isinstance(split, (int, np.integer)):
        if split <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {split}")
        size, extra = divmod(n, int(split))
        bounds = [k * size + min(k, extra) for k in range(int(split) + 1)]
    else:
        bounds = [0] + [min(max(int(i) + (n if i < 0 else 0), 0), n) for i in split] + [n]
    lead = (slice(None),) * d
    return tuple(getitem(input, lead + (slice(a, max(a, b)),))
                 for a, b in zip(bounds[:-1], bounds[1:]))


# -- splits -------------------------------------------------------------------------------------
def _split_along(input, sections, name, least, dim):
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, "
                           f"but got a tensor with {input.ndim} dimensions!")
    if isinstance(sections, int) and (sections == 0 or input.shape[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, dim)


@export("hsplit", method=True)
def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for a 1-D tensor)."""
    return _split_along(input, indices_or_sections, "hsplit", 1, 1 if input.ndim > 1 else 0)


@export("vsplit", method=True)
def vsplit(input, indices_or_sections):
    """Split along dim 0 (at least 2-D)."""
    return _split_along(input, indices_or_sections, "vsplit", 2, 0)


@export("dsplit", method=True)
def dsplit(input, indices_or_sections):
    """Split along dim 2 (at least 3-D)."""
    return _split_along(input, indices_or_sections, "dsplit", 3, 2)


@export("split_with_sizes", method=True)
def split_with_sizes(input, split_sizes, dim=0):
    d = input._dim(dim)
    sizes = [int(s) for s in split_sizes]
    if sum(sizes) != input.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{input.shape[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={sizes}")
    return split(input, sizes, d)


OPS = [CatBackward0, StackBackward0, SplitBackward0, SplitWithSizesBackward0, UnbindBackward0]
