"""More Tensor methods PyTorch code calls: dtype shorthands, in-place forms of the pointwise ops,
in-place shape changes, indexed writes (put_, index_put_), random fills, storage queries, and the
methods of the numerics (cummax, quantile, bitwise ...), diag_embed and the legacy linalg names."""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import _backend
from .ops.linalg import legacy
from .ops.pointwise import arithmetic as pw
from .ops.pointwise import binary, minmax
from .ops.pointwise import bitwise as nm
from .ops.pointwise import unary as un
from .ops.reduction import extrema, histogram, reduce, scan, sorting
from .ops.shape import diagonal, flip, views
from .tensor import Tensor
from .tensor_inplace import check, inplace

_IN_PLACE_UNARY = {
    "log_": un.log, "log2_": un.log2, "log10_": un.log10, "log1p_": un.log1p,
    "expm1_": un.expm1, "sin_": un.sin, "cos_": un.cos, "tan_": un.tan, "asin_": un.asin,
    "arcsin_": un.asin, "acos_": un.acos, "arccos_": un.acos, "atan_": un.atan,
    "arctan_": un.atan, "sinh_": un.sinh, "cosh_": un.cosh, "rsqrt_": un.rsqrt,
    "reciprocal_": pw.reciprocal, "square_": pw.square, "erf_": un.erf, "floor_": un.floor,
    "ceil_": un.ceil, "trunc_": un.trunc, "fix_": un.trunc, "frac_": un.frac,
    "sign_": un.sign, "exp2_": lambda t: pw.pow(2.0, t),
}


def _cmp_(name):
    """``t.eq_(v)``: t = (t == v) as t's dtype (a constant: its gradient is 0)."""
    def op(self, other):
        def compute(t, *v):
            return t * 0 + getattr(t, name)(*v).to(t.dtype)
        return inplace(self, compute, other)
    return op


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


def _put(self, index, source, accumulate=False):
    """self with source written (added, for accumulate) at flat positions index."""
    from .ops.indexing.getitem import CopySlices, IndexPutBackward0
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


def _index_put(self, indices, values, accumulate=False):
    """self with values written (added, for accumulate: repeated positions add up) at
    self[indices]."""
    from .ops.indexing.getitem import CopySlices, IndexPutBackward0
    idx = _index_arrays(self, tuple(indices))
    if not isinstance(values, Tensor):
        values = Tensor._make(_backend.xp_of(self._data).asarray(values, dtype=self.dtype))
    values = values.to(self.dtype)
    if not accumulate:
        return CopySlices.apply(self, values, index=idx)
    shape = self._data[idx].shape
    v = values.expand(*shape) if tuple(values.shape) != shape else values
    return self + IndexPutBackward0.apply(v, shape=tuple(self.shape), index=idx)


def _sum_to_size(self, *size):
    from .ops.reduction.reduce import sum as sum_
    target = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
    lead = self.ndim - len(target)
    if lead < 0 or any(t not in (1, s) for t, s in zip(target, self.shape[lead:])):
        raise RuntimeError(f"size {{{list(target)}}} is not expandable to size "
                           f"{{{list(self.shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, t in enumerate(target)
                                      if t == 1 and self.shape[lead + i] != 1)
    return sum_(self, dims, keepdim=True).reshape(target) if dims else self


def _renorm(self, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm, scaled to norm maxnorm."""
    from .ops.linalg.norms import vector_norm
    if self.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} "
                           f"dimensions")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    d = self._dim(dim)
    norms = vector_norm(self, p, [i for i in range(self.ndim) if i != d], keepdim=True)
    factor = minmax.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return self * factor


def _float_power_(self, exponent):
    if self.dtype != np.float64:
        from .tensor import scalar_name
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_name(self.dtype).capitalize()} but the operation's result "
                           f"requires dtype Double")
    return inplace(self, lambda t, *v: pw.float_power(t, *v), exponent)


# -- random fills ---------------------------------------------------------------------------------
def _geometric_(self, p, *, generator=None):
    from .ops.random import _random_fill, _uniform
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    # the number of Bernoulli(p) trials up to the first success: ceil(log(u) / log(1 - p))
    return _random_fill(self, lambda s, d, g: (un.log(1 - _uniform(s, d, g)) / math.log1p(-p))
                        .ceil().clamp(min=1), generator)


def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    from .ops.random import _random_fill, _uniform
    return _random_fill(self, lambda s, d, g: median + sigma * un.tan(
        math.pi * (_uniform(s, d, g) - 0.5)), generator)


def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    from ._creation import randn
    from .ops.random import _random_fill
    return _random_fill(self, lambda s, d, g: un.exp(
        randn(s, dtype=np.float64, device=d, generator=g) * std + mean), generator)


def _cpu_only(self, name):
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


def _apply_(self, callable):
    """Each entry replaced by callable(entry), one Python call per entry (slow; CPU only)."""
    _cpu_only(self, "apply_")
    a = self._data
    new = np.array([callable(v) for v in a.reshape(-1).tolist()], dtype=a.dtype).reshape(a.shape)
    return inplace(self, lambda t: t * 0 + Tensor._make(new),
                   raw=lambda x: x.__setitem__(Ellipsis, new))


def _map_(self, tensor, callable):
    """Each entry replaced by callable(entry, other's entry), other broadcast to self (CPU)."""
    _cpu_only(self, "map_")
    a = self._data
    b = np.broadcast_to(tensor._data, a.shape)
    new = np.array([callable(u, v) for u, v in zip(a.reshape(-1).tolist(),
                                                  b.reshape(-1).tolist())],
                   dtype=a.dtype).reshape(a.shape)
    return inplace(self, lambda t: t * 0 + Tensor._make(new),
                   raw=lambda x: x.__setitem__(Ellipsis, new))


# -- storage --------------------------------------------------------------------------------------
def _data_ptr(self):
    a = self._data
    return int(a.ctypes.data) if isinstance(a, np.ndarray) else int(a.data.ptr)


def _storage_offset(self):
    """Elements between the start of the memory the array views and its first entry."""
    a = self._data
    if not isinstance(a, np.ndarray):
        return (a.data.ptr - a.data.mem.ptr) // a.itemsize
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    return (a.ctypes.data - root.ctypes.data) // a.itemsize


def _pin_memory(self, device=None):
    """A copy in page-locked host memory (faster, asynchronous copies to the GPU). As in
    PyTorch, this needs a CUDA device."""
    from . import cuda
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if _is_pinned(self):
        return self
    y = self.clone()
    pinned = _backend.cupy_submodule("cupyx").empty_pinned(self._data.shape, self._data.dtype)
    pinned[...] = self._data
    y._data = pinned
    y._m()["pinned"] = True
    return y


def _is_pinned(self, device=None):
    return bool(self._meta and self._meta.get("pinned"))


def _share_memory_(self):
    """Marks the tensor shared (numpy memory is not moved to shared memory: worker processes
    that need it receive a copy)."""
    self._m()["shared"] = True
    return self


def _get_device(self):
    dev = self.device
    return -1 if dev.type == "cpu" else (dev.index or 0)


def _bitwise_op(fn):
    """Operators ``& | ^ ~`` are bitwise, as in PyTorch: logical on two bools, an integer
    result for a bool with an integer, refused for floating-point tensors."""
    def op(self, *other):
        if not other and self._data.dtype.kind not in "iub":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                            "tensors")
        return fn(self, *other)
    return op


def _flip(self, *dims, **kw):
    """``t.flip(0, 1)``, ``t.flip((0, 1))`` or ``t.flip(dims=(0, 1))``."""
    if "dims" in kw:
        dims = (kw.pop("dims"),)
    if not dims or kw:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip.flip(self, dims[0] if len(dims) == 1 else dims)


def _contains(self, element):
    """``v in t``: whether any entry equals v (a number or a tensor, broadcast against t)."""
    if not isinstance(element, (Tensor, numbers.Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed "
                           f"in a {type(element)}.")
    return bool((self == element).any())


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``t.type()``: the type's name; ``t.type(T)``: t as type T: a dtype, a tensor type
    (``gpugrad.FloatTensor``) or such a type's name (``'torch.cuda.LongTensor'``, which also
    names the device)."""
    from ._creation import TENSOR_TYPES, TensorType
    from .tensor import describe
    if dtype is None:
        return describe(self._data).split(" ")[0]
    device = None
    if isinstance(dtype, str):
        name = dtype.removeprefix("torch.").removeprefix("gpugrad.")
        cls = TENSOR_TYPES.get(name.removeprefix("cuda."))
        if cls is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype, device = cls, "cuda" if name.startswith("cuda.") else "cpu"
    if isinstance(dtype, TensorType):
        dtype, device = dtype.dtype, device or "cpu"
    return self.to(dtype) if device is None else self.to(device, dtype)


def _install():
    T = Tensor
    T.flip, T.__contains__, T.type = _flip, _contains, _type
    T.__rmod__ = lambda s, o: pw.remainder(o, s)
    T.byte = lambda s: s.to(np.uint8)
    T.char = lambda s: s.to(np.int8)
    T.short = lambda s: s.to(np.int16)
    for name, fn in _IN_PLACE_UNARY.items():
        setattr(T, name, lambda s, _fn=fn: inplace(s, _fn))
    T.round_ = lambda s, *, decimals=0: inplace(s, lambda t: un.round(t, decimals=decimals))
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        setattr(T, name + "_", _cmp_(name))
    T.squeeze_ = _reshape_(lambda s, *dim: s.squeeze(*dim))
    T.unsqueeze_ = _reshape_(lambda s, dim: s.unsqueeze(dim))
    T.t_ = _reshape_(lambda s: s.t())
    T.transpose_ = _reshape_(lambda s, d0, d1: s.transpose(d0, d1))
    T.lerp_ = lambda s, end, weight: inplace(s, lambda t, e: pw.lerp(t, e, weight), end)
    T.addcmul_ = lambda s, tensor1, tensor2, *, value=1: inplace(
        s, lambda t, a, b: pw.addcmul(t, a, b, value=value), tensor1, tensor2)
    T.addcdiv_ = lambda s, tensor1, tensor2, *, value=1: inplace(
        s, lambda t, a, b: pw.addcdiv(t, a, b, value=value), tensor1, tensor2)
    T.cumsum_ = lambda s, dim, *, dtype=None: inplace(s, lambda t: scan.cumsum(t, dim))
    T.atan2_ = T.arctan2_ = lambda s, other: inplace(s, binary.atan2, other)
    T.true_divide_ = T.divide_ = lambda s, other: inplace(s, pw.div, other)
    T.renorm = _renorm
    T.renorm_ = lambda s, p, dim, maxnorm: inplace(s, lambda t: _renorm(t, p, dim, maxnorm))
    T.narrow_copy = lambda s, dim, start, length: views.narrow(s, dim, start, length).clone()
    T.sum_to_size = _sum_to_size
    T.put = _put
    T.put_ = lambda s, index, source, accumulate=False: inplace(
        s, lambda t, v: _put(t, index, v, accumulate), source)
    T.index_put = _index_put
    T.index_put_ = lambda s, indices, values, accumulate=False: inplace(
        s, lambda t, v: _index_put(t, indices, v, accumulate), values)
    T.geometric_, T.cauchy_, T.log_normal_ = _geometric_, _cauchy_, _log_normal_
    T.apply_, T.map_ = _apply_, _map_
    T.get_device = _get_device
    T.is_cpu = property(lambda s: s.device.type == "cpu")
    T.pin_memory, T.is_pinned = _pin_memory, _is_pinned
    T.share_memory_ = _share_memory_
    T.is_shared = lambda s: bool(s._meta and s._meta.get("shared"))
    T.data_ptr, T.storage_offset = _data_ptr, _storage_offset
    T.is_complex = lambda s: s._data.dtype.kind == "c"
    # methods of the new functions
    for name, fn in {"cummax": scan.cummax, "cummin": scan.cummin, "fmax": minmax.fmax,
                     "fmin": minmax.fmin, "float_power": pw.float_power,
                     "quantile": extrema.quantile, "nanquantile": extrema.nanquantile,
                     "nanmedian": extrema.nanmedian, "cov": reduce.cov,
                     "corrcoef": reduce.corrcoef, "histc": histogram.histc,
                     "bitwise_and": nm.bitwise_and, "bitwise_or": nm.bitwise_or,
                     "bitwise_xor": nm.bitwise_xor, "bitwise_not": nm.bitwise_not,
                     "bitwise_left_shift": nm.bitwise_left_shift,
                     "bitwise_right_shift": nm.bitwise_right_shift}.items():
        setattr(T, name, fn)
    for name, fn in {"bitwise_and": nm.bitwise_and, "bitwise_or": nm.bitwise_or,
                     "bitwise_xor": nm.bitwise_xor,
                     "bitwise_left_shift": nm.bitwise_left_shift,
                     "bitwise_right_shift": nm.bitwise_right_shift}.items():
        setattr(T, name + "_", lambda s, other, _fn=fn: inplace(s, _fn, other))
    T.bitwise_not_ = lambda s: inplace(s, nm.bitwise_not)
    T.float_power_ = _float_power_
    T.diag_embed, T.unique_consecutive = diagonal.diag_embed, sorting.unique_consecutive
    T.cholesky, T.matrix_exp = legacy.cholesky, legacy.matrix_exp
    T.__and__ = T.__rand__ = _bitwise_op(nm.bitwise_and)
    T.__or__ = T.__ror__ = _bitwise_op(nm.bitwise_or)
    T.__xor__ = T.__rxor__ = _bitwise_op(nm.bitwise_xor)
    T.__invert__ = _bitwise_op(nm.bitwise_not)
    T.__lshift__ = nm.bitwise_left_shift
    T.__rshift__ = nm.bitwise_right_shift
    T.__rlshift__ = lambda s, o: nm.bitwise_left_shift(o, s)
    T.__rrshift__ = lambda s, o: nm.bitwise_right_shift(o, s)


_install()
