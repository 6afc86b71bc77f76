"""Views and reshapes: view, reshape, flatten / unflatten, ravel, squeeze, unsqueeze, expand /
expand_as / broadcast_to, broadcast_shapes, permute, transpose / swapaxes, t, movedim, narrow,
diagonal, as_strided, Tensor.unfold (sliding windows), and the copies clone / contiguous.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _backend
from ..._arguments import expect_ints, expect_tensor, expect_tensors
from ..._backend import xp_of
from ..._exports import export, tensor_method
from ...autograd.grad_mode import state as grad_state
from ...tensor import Size, Tensor, as_dim
from ...tensor_inplace import check
from .._op import Op, unbroadcast


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


def _shape_arg(shape, fn="reshape", arg="shape"):
    """A shape given as ``f(2, 3)`` or ``f((2, 3))`` as a tuple of ints, or PyTorch's
    TypeError for an entry that is no int (a float is not truncated)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    for s in shape:
        if s.__class__ is not int:
            return expect_ints(shape, fn, arg)
    return tuple(shape)


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
        from ...tensor import describe
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
        if dtype is not None and dtype.kind == "V" and x.dtype.kind == "f":
            x = x.astype(np.float32, copy=False)   # NOTE: to bfloat16 through float32 (double
                                                   # rounding from float64), as PyTorch casts
        y = x if dtype is None else x.astype(dtype)
        y = y if device is None else _backend.to_device(y, device)
        return x.copy() if y is x else y   # to(..., copy=True) of what needs no conversion

    def backward(self, F, gy):
        g = F.astype(gy, self.dtype) if gy.dtype != self.dtype else gy
        if F.fast:
            return _backend.to_device(g, self.device)
        return g.to(self.device)


def _zeros_t(ref, shape):
    return Tensor._make(_backend.xp_of(ref._data).zeros(shape, dtype=ref._data.dtype))


# -- public functions ---------------------------------------------------------------------------
@export("reshape", method=True)
def reshape(input, *shape):
    if input.__class__ is not Tensor:
        expect_tensor(input, "reshape")
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


@tensor_method("view")
def view(input, *shape):
    if isinstance(shape[0] if shape else None, np.dtype) or (
            shape and isinstance(shape[0], type)):
        raise RuntimeError("view(dtype) is not supported; use .to(dtype)")
    x = input._data
    if not x.flags.c_contiguous and not _reshapes_to_view(x, _shape_arg(shape, "view", "size")):
        # NOTE: numpy reshapes without a copy exactly when PyTorch's view can: the new shape
        # only splits or merges dims whose strides are contiguous with each other
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    return reshape(input, *shape)


@export("flatten", method=True)
def flatten(input, start_dim=0, end_dim=-1):
    s, e = input._dim(start_dim), input._dim(end_dim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if input.ndim == 0:
        return reshape(input, 1)
    shape = input._data.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


@export("squeeze", method=True)
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


@export("unsqueeze", method=True)
def unsqueeze(input, dim):
    if dim.__class__ is not int:
        dim = as_dim(dim)
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


@tensor_method("expand")
def expand(input, *sizes):
    sizes = _shape_arg(sizes, "expand", "size")
    shape = input._data.shape
    lead = len(sizes) - len(shape)
    error = expand_error(input._data, sizes)
    if error is not None:
        raise error
    full = tuple(shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
    return ExpandBackward0.apply(input, shape=full)


@tensor_method("expand_as")
def expand_as(input, other):
    expect_tensors("expand_as", ("input", "other"), input, other)
    return expand(input, other._data.shape)


@export("broadcast_to", method=True)
def broadcast_to(input, shape):
    return expand(input, tuple(shape))


@export("permute", method=True)
def permute(input, *dims):
    dims = _shape_arg(dims, "permute", "dims")
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


@export("transpose", "swapaxes", "swapdims", method=True)
def transpose(input, dim0, dim1):
    axes = list(range(input.ndim))
    d0, d1 = input._dim(dim0), input._dim(dim1)   # a 0-d tensor takes dims -1 and 0
    if input.ndim:
        axes[d0], axes[d1] = axes[d1], axes[d0]
    axes = tuple(axes)
    y = TransposeBackward0.apply(input, axes=axes)
    return _as_view(y, input, lambda a: a.transpose(axes))


swapaxes = swapdims = transpose


@export("t", method=True)
def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    axes = tuple(range(input.ndim))[::-1]
    y = TBackward0.apply(input, axes=axes)
    return _as_view(y, input, lambda a: a.transpose(axes))


@export("clone", method=True)
def clone(input, *, memory_format=None):
    return CloneBackward0.apply(input)


@tensor_method("contiguous")
def contiguous(input, memory_format=None):
    """``input`` dense in row-major order, or in the order ``memory_format`` names
    (``channels_last``: N, H, W, C fastest last, the shape unchanged)."""
    from ..._memory_format import channels_last_axes
    axes = None if memory_format is None else channels_last_axes(memory_format, input.ndim)
    if axes is None:
        return input if input._data.flags.c_contiguous else CloneBackward0.apply(input)
    if input.is_contiguous(memory_format=memory_format):
        return input
    inverse = tuple(sorted(range(len(axes)), key=axes.__getitem__))
    return permute(contiguous(permute(input, axes)), inverse)


@export("ravel", method=True)
def ravel(input):
    return reshape(input, -1)


@export("movedim", "moveaxis", method=True)
def movedim(input, source, destination):
    if isinstance(source, (tuple, list)) != isinstance(destination, (tuple, list)):
        raise TypeError(f"movedim(): argument 'destination' must be "
                        f"{'tuple of ints' if isinstance(source, (tuple, list)) else 'int'}, "
                        f"not {type(destination).__name__}")
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src, dst = [input._dim(d) for d in src], [input._dim(d) for d in dst]
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute(input, *order)


moveaxis = movedim


def _diagonal_index(xp, shape, offset, dim1, dim2):
    """Index arrays, one per dimension, reading diagonal ``offset`` of dims (dim1, dim2): the
    other dims first, in order, then the diagonal (numpy's and PyTorch's layout)."""
    others = [d for d in range(len(shape)) if d not in (dim1, dim2)]
    k = len(others)
    n = max(0, min(shape[dim1] - max(-offset, 0), shape[dim2] - max(offset, 0)))
    i = xp.arange(n).reshape((1,) * k + (-1,))
    index = [None] * len(shape)
    for j, d in enumerate(others):
        index[d] = xp.arange(shape[d]).reshape((1,) * j + (-1,) + (1,) * (k - j))
    index[dim1], index[dim2] = i + max(-offset, 0), i + max(offset, 0)
    return tuple(index)


def _diagonal_view(a, offset, dim1, dim2):
    """A writable view (numpy gives a read-only one; PyTorch's diagonal is writable)."""
    d = xp_of(a).diagonal(a, offset, dim1, dim2)
    if isinstance(d, np.ndarray) and not d.flags.writeable and a.flags.writeable:
        d.flags.writeable = True
    return d


class DiagonalBackward0(Op):
    """y = diagonal offset of x over dims (dim1, dim2), as the last dimension (a view)"""
    __slots__ = ("shape", "where")

    def forward(self, xp, x, offset=0, dim1=0, dim2=1):
        self.shape = x.shape
        self.where = _diagonal_index(xp, x.shape, offset, dim1, dim2)
        return _diagonal_view(x, offset, dim1, dim2)

    def backward(self, F, gy):
        return F.index_add(self.shape, self.where, gy)


@export("diagonal", method=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    d1, d2 = input._dim(dim1), input._dim(dim2)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    y = DiagonalBackward0.apply(input, offset=offset, dim1=d1, dim2=d2)
    return _as_view(y, input, lambda a: _diagonal_view(a, offset, d1, d2))


@export("unflatten", method=True)
def unflatten(input, dim, sizes):
    d = input._dim(dim)
    sizes = list(sizes)
    n = input.shape[d]
    known = int(np.prod([s for s in sizes if s != -1]))
    if sizes.count(-1) > 1 or (-1 not in sizes and known != n) or (
            -1 in sizes and (known == 0 or n % known)):
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({n}) in the input tensor")
    sizes = [n // known if s == -1 else s for s in sizes]
    return reshape(input, *input.shape[:d], *sizes, *input.shape[d + 1:])


def _strided(xp):
    return xp.lib.stride_tricks.as_strided


class UnfoldBackward0(Op):
    """y = every window of ``size`` entries along dim, ``step`` apart, as a new last dim (a view)"""
    __slots__ = ("shape", "where")

    def forward(self, xp, x, dim=0, size=1, step=1):
        self.shape = x.shape
        y = _unfold_view(x, dim, size, step)
        self.where = _window_index(xp, x.shape, dim, size, step)
        return y

    def backward(self, F, gy):
        return F.index_add(self.shape, self.where, gy)


def _unfold_view(a, dim, size, step):
    if a.ndim == 0:
        return a.reshape(1)
    n = (a.shape[dim] - size) // step + 1
    shape = a.shape[:dim] + (n,) + a.shape[dim + 1:] + (size,)
    st = a.strides
    strides = st[:dim] + (st[dim] * step,) + st[dim + 1:] + (st[dim],)
    y = _strided(xp_of(a))(a, shape, strides)
    if isinstance(y, np.ndarray) and not y.flags.writeable and a.flags.writeable:
        y.flags.writeable = True
    return y


def _window_index(xp, shape, dim, size, step):
    """Index arrays (one per input dim) reading the windows, broadcast to the output shape."""
    if len(shape) == 0:
        return ()
    k = len(shape) + 1
    n = (shape[dim] - size) // step + 1
    index = []
    for d, m in enumerate(shape):
        lead = (1,) * d + (-1,) + (1,) * (k - d - 1)
        if d == dim:
            index.append(xp.arange(n).reshape(lead) * step
                         + xp.arange(size).reshape((1,) * (k - 1) + (-1,)))
        else:
            index.append(xp.arange(m).reshape(lead))
    return tuple(index)


@tensor_method("unfold")
def unfold(input, dimension, size, step):
    d = input._dim(dimension) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    y = UnfoldBackward0.apply(input, dim=d, size=size, step=step)
    return _as_view(y, input, lambda a: _unfold_view(a, d, size, step))


@export("narrow", method=True)
def narrow(input, dim, start, length):
    from ..indexing.getitem import getitem
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = input._dim(dim)
    size = input.shape[dim]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but "
                         f"got {start})")
    start += size if start < 0 else 0
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return getitem(input, (slice(None),) * dim + (slice(start, start + length),))


# -- not differentiable ---------------------------------------------------------------------------
@export("broadcast_shapes")
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


OPS = [ViewBackward0, UnsafeViewBackward0, SqueezeBackward0, SqueezeBackward1, SqueezeBackward2,
       AliasBackward0, UnsqueezeBackward0, ExpandBackward0, PermuteBackward0, TransposeBackward0,
       TBackward0, CloneBackward0, ToCopyBackward0, DiagonalBackward0, UnfoldBackward0]


# -- Tensor methods: transposes as properties, shapes of another tensor, in-place shape changes ---
tensor_method("T")(property(lambda s: permute(s, *range(s.ndim)[::-1])))


@tensor_method("mT")
@property
def _mT(self):  # noqa: N802  (PyTorch's name)
    if self.ndim == 1:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           "1-D tensor.")
    return self if self.ndim == 0 else transpose(self, -2, -1)


tensor_method("view_as")(lambda s, o: view(s, expect_tensor(o, "view_as", "other")._data.shape))
tensor_method("reshape_as")(lambda s, o: reshape(s, expect_tensor(o, "reshape_as",
                                                                  "other")._data.shape))
tensor_method("narrow_copy")(lambda s, dim, start, length: narrow(s, dim, start, length).clone())


@export("narrow_copy")
def narrow_copy(input, dim, start, length):
    return input.narrow_copy(dim, start, length)


@tensor_method("sum_to_size")
def _sum_to_size(self, *size):
    from ..reduction.reduce import sum as sum_
    target = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    lead = self.ndim - len(target)
    if lead < 0 or any(t not in (1, s) for t, s in zip(target, self.shape[lead:])):
        raise RuntimeError(f"size {{{list(target)}}} is not expandable to size "
                           f"{{{list(self.shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, t in enumerate(target)
                                      if t == 1 and self.shape[lead + i] != 1)
    return sum_(self, dims, keepdim=True).reshape(target) if dims else self


def _reshape_(fn):
    """In-place shape change (``squeeze_``, ``unsqueeze_``, ``t_``): the tensor takes the view's
    shape and, when recording, its node."""
    def op(self, *args):
        check(self)
        y = fn(self, *args)
        self._data = y._data
        if y.grad_fn is not None:
            self.grad_fn, self._out_nr = y.grad_fn, y._out_nr
        return self
    return op


tensor_method("squeeze_")(_reshape_(lambda s, *dim: s.squeeze(*dim)))
tensor_method("unsqueeze_")(_reshape_(lambda s, dim: s.unsqueeze(dim)))
tensor_method("t_")(_reshape_(lambda s: s.t()))
tensor_method("transpose_")(_reshape_(lambda s, d0, d1: s.transpose(d0, d1)))


@tensor_method("swapaxes_", "swapdims_")
def _swap_(self, dim0, dim1):
    """In place: the tensor takes the transposed view's shape and node."""
    check(self)
    y = transpose(self, dim0, dim1)
    self._data = y._data
    if y.grad_fn is not None:
        self.grad_fn, self._out_nr = y.grad_fn, y._out_nr
    return self
