"""More elementwise, reduction and shape functions: cumprod, logcumsumexp, hypot, logaddexp,
xlogy, fmod, remainder, nan_to_num, nansum, diagonal; and, as compositions of other ops, diff,
tile, clamp_min/clamp_max, tensor_split, fliplr/flipud/rot90, nanmean, unflatten, select, take."""
from __future__ import annotations

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from ._op import Op


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _rev_cumsum(F, a, axis):
    """The running sum from the other end along ``axis``."""
    return F.flip(F.cumsum(F.flip(a, axis), axis), axis)


def _cumprod(F, a, axis):
    return F.cumprod(a, axis=axis) if F.fast else cumprod(a, axis)


def _cumprod_grad_with_zeros(F, gy, x, axis):
    """d/dx_i of sum_j gy_j prod_{k<=j} x_k = sum_{j>=i} gy_j prod_{k<=j, k!=i} x_k, exact when x
    has zeros: row i of an n x n block is x with x_i replaced by 1, and its running product
    holds every prod_{k<=j, k!=i} x_k (O(n^2) memory, run only when x has a zero)."""
    xm, gm = F.swapaxes(x, axis, -1), F.swapaxes(gy, axis, -1)
    n, xr = xm.shape[-1], _raw(x)
    xp = xp_of(xr)
    eye = xp.eye(n, dtype=xr.dtype)
    rows = _cumprod(F, F.expand_dims(xm, -2) * (1 - eye) + eye, -1)
    later = xp.triu(xp.ones((n, n), dtype=xr.dtype))    # [i, j] = j >= i
    g = F.sum(F.expand_dims(gm, -2) * rows * later, axis=-1)
    return F.swapaxes(g, axis, -1)


class CumprodBackward0(Op):
    """y = running product of x along dim"""
    __slots__ = ("axis",)
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, dim=0):
        self.axis = dim
        return xp.cumprod(x, axis=dim)

    def backward(self, F, gy, x, y):
        if bool((_raw(x) != 0).all()):
            return _rev_cumsum(F, gy * y, self.axis) / x
        return _cumprod_grad_with_zeros(F, gy, x, self.axis)


def _logcumsumexp(xp, x, axis):
    if x.size == 0:
        return x.copy()
    try:   # exact over any range (numpy)
        return xp.logaddexp.accumulate(x, axis=axis)
    except (AttributeError, NotImplementedError, TypeError, ValueError):
        pass
    # NOTE: shifted by the largest value of each slice; an entry more than ~700 below it
    # (in float64) underflows to -inf, where PyTorch's running logaddexp keeps it finite
    m = x.max(axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    return xp.log(xp.cumsum(xp.exp(x - m), axis=axis)) + m


def _rev_logcumsumexp(F, a, axis):
    """logcumsumexp from the other end along ``axis``."""
    a = F.flip(a, axis)
    s = _logcumsumexp(xp_of(a), a, axis) if F.fast else logcumsumexp(a, axis)
    return F.flip(s, axis)


class LogcumsumexpBackward0(Op):
    """y = log of the running sum of exp(x) along dim"""
    __slots__ = ("axis",)
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, x, dim=0):
        self.axis = dim
        return _logcumsumexp(xp, x, dim)

    def backward(self, F, gy, x, y):
        # gx_i = sum_{j>=i} gy_j exp(x_i - y_j), summed in log space for the positive and the
        # negative gy apart (as PyTorch), so no exp overflows however wide the range of x
        gr = _raw(gy)
        xp = xp_of(gr)
        gx = None
        for sign in (1, -1):
            hit = (gr * sign > 0).astype(gr.dtype)
            floor = xp.where(hit > 0, 0, xp.finfo(gr.dtype).min).astype(gr.dtype)   # ~log 0
            log_g = F.log(F.abs(gy) * hit + (1 - hit)) + floor
            part = F.exp(_rev_logcumsumexp(F, log_g - y, self.axis) + x)
            gx = part if gx is None else gx - part
        return gx


class HypotBackward0(Op):
    """y = sqrt(a^2 + b^2)"""
    elementwise = True
    saves = (0, 1)
    saves_output = True
    reads_for = ((0,), (1,))
    saved_names = ("self", "other", "result")
    broadcasts = True

    def forward(self, xp, a, b):
        return xp.hypot(a, b)

    def backward(self, F, gy, a, b, y):
        need, g = self.needs_input_grad, gy / y
        return (g * a if need[0] else None), (g * b if need[1] else None)


class LogaddexpBackward0(Op):
    """y = log(exp(a) + exp(b))"""
    elementwise = True
    saves = (0, 1)
    saves_output = True
    reads_for = ((0,), (1,))
    saved_names = ("self", "other", "result")
    broadcasts = True

    def forward(self, xp, a, b):
        return xp.logaddexp(a, b)

    def backward(self, F, gy, a, b, y):
        need = self.needs_input_grad
        return (gy * F.exp(a - y) if need[0] else None), (gy * F.exp(b - y) if need[1] else None)


class XlogyBackward0(Op):
    """y = x log(other), 0 where x == 0 (unless other is nan)"""
    saves = (0, 1)
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, other):
        x, other = xp.asarray(x), xp.asarray(other)   # either may be a number
        return xp.where((x == 0) & ~xp.isnan(other), 0, x * xp.log(other))

    def backward(self, F, gy, x, other):
        need = self.needs_input_grad
        gx = None
        if need[0]:
            # log(other), but 0 where x == 0 and other <= 0 (PyTorch's convention)
            xp = xp_of(_raw(gy))
            keep = ~((xp.asarray(_raw(x)) == 0) & (xp.asarray(_raw(other)) <= 0))
            gx = gy * F.log(other * keep + (1 - keep))
        return gx, (gy * x / other if need[1] else None)


class XlogyBackward1(XlogyBackward0):
    """y = x log(other), x a number"""


class XlogyBackward2(XlogyBackward0):
    """y = x log(other), other a number"""


class FmodBackward0(Op):
    """y = a - trunc(a / b) b, b a number"""
    elementwise = True
    broadcasts = True

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "fmod")
        return xp.fmod(a, b)

    def backward(self, F, gy):
        return gy, None


class FmodBackward1(Op):
    """y = a - trunc(a / b) b"""
    saves = (0, 1)
    reads_for = ((1,), (1,))
    saved_names = ("self", "other")
    broadcasts = True
    rounding = "trunc"

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "fmod")
        return xp.fmod(a, b)

    def backward(self, F, gy, a, b):
        gb = None
        if self.needs_input_grad[1]:   # the quotient is piecewise constant
            a, b = _raw(a), _raw(b)
            gb = -gy * getattr(xp_of(a), self.rounding)(a / b)
        return gy, gb


class RemainderBackward0(FmodBackward0):
    """y = a - floor(a / b) b, b a number"""
    elementwise = True

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "remainder")
        return xp.remainder(a, b)


class RemainderBackward1(FmodBackward1):
    """y = a - floor(a / b) b"""
    rounding = "floor"

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "remainder")
        return xp.remainder(a, b)


class NanToNumBackward0(Op):
    """y = x with nan, +inf and -inf replaced by numbers"""
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, nan=0.0, posinf=None, neginf=None):
        return xp.nan_to_num(x, nan=nan, posinf=posinf, neginf=neginf)

    def backward(self, F, gy, x):
        return gy * xp_of(_raw(x)).isfinite(_raw(x))


class NansumBackward0(Op):
    """y = sum of the entries of x that are not nan"""
    __slots__ = ("axes", "keepdims")
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, axes=None, keepdims=False):
        self.axes, self.keepdims = axes, keepdims
        return xp.asarray(xp.nansum(x, axis=axes, keepdims=keepdims))

    def backward(self, F, gy, x):
        from .reduce import _expand
        g = _expand(F, gy, x.shape, self.axes, self.keepdims)
        return g * ~xp_of(_raw(x)).isnan(_raw(x))


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


# -- public functions ---------------------------------------------------------------------------
def _floating(fn, x):
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}(): expected input to have floating point or complex dtype but "
                           f"got {scalar_name(x.dtype).capitalize()}")


def cumprod(input, dim, *, dtype=None):
    if dtype is None and input.dtype.kind in "biu":
        dtype = np.int64   # PyTorch accumulates integers and bools in int64
    if dtype is not None:
        input = input.to(dtype)
    return CumprodBackward0.apply(input, dim=input._dim(dim))


def logcumsumexp(input, dim):
    if input.dtype.kind not in "fc":
        raise NotImplementedError(f"\"logcumsumexp\" not implemented for "
                                  f"'{scalar_name(input.dtype).capitalize()}'")
    return LogcumsumexpBackward0.apply(input, dim=input._dim(dim))


def hypot(input, other):
    return HypotBackward0.apply(input, other)


def logaddexp(input, other):
    return LogaddexpBackward0.apply(input, other)


def xlogy(input, other):
    if not isinstance(input, Tensor):
        return XlogyBackward1.apply(input, other)
    if not isinstance(other, Tensor):
        return XlogyBackward2.apply(input, other)
    return XlogyBackward0.apply(input, other)


def fmod(input, other):
    if isinstance(other, Tensor):
        return FmodBackward1.apply(input, other)
    return FmodBackward0.apply(input, other)


def remainder(input, other):
    if not isinstance(input, Tensor):   # number % tensor: not differentiable (as in PyTorch)
        a = _raw(other)
        check_divisor(xp_of(a), input, a, "remainder")
        return Tensor._make(xp_of(a).asarray(xp_of(a).remainder(input, a)))
    if isinstance(other, Tensor):
        return RemainderBackward1.apply(input, other)
    return RemainderBackward0.apply(input, other)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    return NanToNumBackward0.apply(input, nan=nan, posinf=posinf, neginf=neginf)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    from .reduce import _axes
    if dtype is not None:
        input = input.to(dtype)
    return NansumBackward0.apply(input, axes=_axes(dim, input.ndim), keepdims=keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    _floating("nanmean", input)
    a = input._data
    xp = xp_of(a)
    from .reduce import _axes
    axes = _axes(dim, input.ndim)
    count = xp.asarray((~xp.isnan(a)).sum(axis=axes, keepdims=keepdim), dtype=a.dtype)
    return nansum(input, dim, keepdim) / count


def diagonal(input, offset=0, dim1=0, dim2=1):
    from .shape import _as_view
    d1, d2 = input._dim(dim1), input._dim(dim2)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    y = DiagonalBackward0.apply(input, offset=offset, dim1=d1, dim2=d2)
    return _as_view(y, input, lambda a: _diagonal_view(a, offset, d1, d2))


def select(input, dim, index):
    from .index import getitem
    d = input._dim(dim)
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {dim}")
    return getitem(input, (slice(None),) * d + (int(index),))


def take(input, index):
    """input read as a flat vector at ``index`` (negative positions count from the end)."""
    from .index import getitem
    from .shape import reshape
    a = _raw(index)
    if a.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{scalar_name(a.dtype).capitalize()}")
    n = input.numel()
    bad = (a < -n) | (a >= n)
    if a.size and bool(bad.any()):
        raise IndexError(f"out of range: tried to access index {int(a[bad].ravel()[0])} on a "
                         f"tensor of {n} elements.")
    return getitem(reshape(input, -1), Tensor._make(a % max(n, 1)))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    from .index import getitem
    from .shape import cat
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


def tile(input, dims):
    from .select import repeat
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def clamp_min(input, min):
    from .pointwise import clamp
    return clamp(input, min=min)


def clamp_max(input, max):
    from .pointwise import clamp
    return clamp(input, max=max)


def tensor_split(input, indices_or_sections, dim=0):
    from .index import getitem
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


def fliplr(input):
    from .select import flip
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    from .select import flip
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def rot90(input, k=1, dims=(0, 1)):
    from .select import flip
    from .shape import clone, transpose
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = input._dim(dims[0]), input._dim(dims[1])
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(transpose(input, d0, d1), (d1,))
    return clone(input)


def unflatten(input, dim, sizes):
    from .shape import reshape
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


# -- integer arithmetic as PyTorch does it --------------------------------------------------------
def integral(v) -> bool:
    return v.dtype.kind in "iub" if hasattr(v, "dtype") else isinstance(v, int)


def check_divisor(xp, a, b, name):
    """Integer division by zero raises on the CPU, as in PyTorch (on CUDA it is undefined, and
    checking would cost a device sync); bool by bool is not implemented."""
    if integral(a) and integral(b):
        if _is_bool(a) and _is_bool(b):
            raise NotImplementedError(f"\"{name}_{'cpu' if xp is np else 'cuda'}\" not "
                                      f"implemented for 'Bool'")
        if xp is np and not np.all(b):
            raise RuntimeError("ZeroDivisionError")


def _is_bool(v):
    return v.dtype.kind == "b" if hasattr(v, "dtype") else isinstance(v, bool)


def rounded_div(input, other, rounding_mode):
    """div(..., rounding_mode='floor' | 'trunc'): integers stay integers (and exact); floats
    divide then round, with zero gradient almost everywhere."""
    from .pointwise import DivBackward0
    a, b = _raw(input), _raw(other)
    if integral(a) and integral(b):
        xp = xp_of(a if hasattr(a, "dtype") else b)
        check_divisor(xp, a, b, "div_" + rounding_mode)
        if rounding_mode == "floor":
            return Tensor._make(xp.asarray(xp.floor_divide(a, b)))
        q = xp.floor_divide(xp.abs(a), xp.abs(b))
        return Tensor._make(xp.asarray(xp.where((xp.asarray(a) < 0) != (xp.asarray(b) < 0),
                                                -q, q)))
    from ..autograd.grad_mode import no_grad
    with no_grad():
        q = DivBackward0.apply(input, other)
        f = np.floor if rounding_mode == "floor" else np.trunc
        return Tensor._make(f(q._data).astype(q._data.dtype))


def wrap_int(a, v):
    """A Python int out of range for the integer array ``a``, wrapped into ``a``'s dtype as
    PyTorch casts it (two's complement: an int32 tensor + 2**40 adds 0)."""
    if not (isinstance(v, int) and a.dtype.kind in "iu" and -2 ** 63 <= v < 2 ** 64):
        raise OverflowError("int too big to convert")
    bits = 8 * a.dtype.itemsize
    v %= 1 << bits
    return v - (1 << bits) if a.dtype.kind == "i" and v >> (bits - 1) else v


def int_power(xp, x, y):
    """x ** y, both integer or bool (arrays, or one a number): PyTorch's result type and
    integer arithmetic. A negative power of an integer truncates to 0, except for the bases 1
    and -1; a negative number exponent is an error, as in PyTorch."""
    from ._op import result_type
    rt = result_type([x, y])
    if not hasattr(y, "dtype"):
        if rt.kind == "b":
            return x if y else xp.ones_like(x)
        if y < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return x.astype(rt, copy=False) ** y
    if rt.kind == "b":
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    x, y = xp.asarray(x, dtype=rt), y.astype(rt, copy=False)
    neg = y < 0
    out = x ** xp.where(neg, -y, y)
    return xp.where(neg & (x != 1) & (x != -1), xp.zeros((), dtype=rt), out)


def int_clamp_bounds(x, lo, hi):
    """clamp of an integer or bool array: x in the type PyTorch promotes to (a float bound
    makes it float), integer bounds wrapped into that type."""
    from ._op import result_type
    rt = result_type([x, lo, hi])
    if rt != x.dtype:
        x = x.astype(rt)
    if rt.kind in "iu":
        lo, hi = (wrap_int(x, v) if isinstance(v, int) and not isinstance(v, bool) else v
                  for v in (lo, hi))
    return x, lo, hi


OPS = [CumprodBackward0, LogcumsumexpBackward0, HypotBackward0, LogaddexpBackward0,
       XlogyBackward0, XlogyBackward1, XlogyBackward2, FmodBackward0, FmodBackward1,
       RemainderBackward0, RemainderBackward1, NanToNumBackward0, NansumBackward0,
       DiagonalBackward0]
