"""More Tensor methods PyTorch code expects: unfold (sliding windows, a view), kthvalue, mode,
aminmax, repeat_interleave (with gradients, through gather and indexing); bincount, unique,
floor_divide (not differentiable); sgn; and the in-place fills fill_diagonal_, bernoulli_,
exponential_, random_."""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor
from ._op import Op
from .reduce import values_indices


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


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


def unfold(input, dimension, size, step):
    from .shape import _as_view
    d = input._dim(dimension) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    y = UnfoldBackward0.apply(input, dim=d, size=size, step=step)
    return _as_view(y, input, lambda a: _unfold_view(a, d, size, step))


_AMINMAX = namedtuple("aminmax", ["min", "max"])
_AMINMAX.__module__ = "gpugrad.return_types"


def _pick(input, idx, dim, keepdim, name):
    """(input's entries at ``idx`` along dim, idx) as PyTorch's named pair, with gradient."""
    from .select import gather
    if input.ndim == 0:
        return values_indices(input.clone(), Tensor._make(idx.reshape(())), name)
    values = gather(input, dim, Tensor._make(idx))
    if not keepdim:
        values, idx = values.squeeze(dim), idx.squeeze(dim)
    return values_indices(values, Tensor._make(idx), name)


def kthvalue(input, k, dim=-1, keepdim=False):
    d = input._dim(dim) if input.ndim else 0
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    a = input._data.reshape(1) if input.ndim == 0 else input._data
    xp = xp_of(a)
    idx = xp.argsort(a, axis=d, kind="stable")
    idx = xp.take(idx, xp.asarray([k - 1]), axis=d)
    return _pick(input, idx, d, keepdim, "kthvalue")


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest on ties) and an index where it occurs
    (its last occurrence)."""
    d = input._dim(dim) if input.ndim else 0
    a = input._data.reshape(1) if input.ndim == 0 else input._data
    xp = xp_of(a)
    m = xp.moveaxis(a, d, -1)
    s = xp.sort(m, axis=-1)
    n = s.shape[-1]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    # count of each sorted entry's run: equal values are adjacent after sorting
    same = s[..., :, None] == s[..., None, :]
    counts = same.sum(axis=-1)
    best = xp.argmax(counts, axis=-1)   # first maximal run in sorted order: the smallest value
    value = xp.take_along_axis(s, best[..., None], axis=-1)
    hit = m == value
    last = n - 1 - xp.argmax(hit[..., ::-1], axis=-1)
    idx = xp.moveaxis(last[..., None], -1, d)
    return _pick(input, idx, d, keepdim, "mode")


def aminmax(input, *, dim=None, keepdim=False):
    from .reduce import amax, amin
    if input.numel() == 0 if dim is None else input.shape[input._dim(dim)] == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is None:
        lo, hi = amin(input), amax(input)
        if keepdim:
            lo, hi = lo.reshape((1,) * input.ndim), hi.reshape((1,) * input.ndim)
        return _AMINMAX(lo, hi)
    return _AMINMAX(amin(input, dim, keepdim), amax(input, dim, keepdim))


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    from .index import getitem
    if repeats is None:   # repeat_interleave(repeats): the positions, each repeated
        repeats, input = input, None
    r = _raw(repeats)
    if input is None:
        xp = xp_of(r)
        return Tensor._make(xp.repeat(xp.arange(r.shape[0]), r))
    xp = xp_of(input._data)
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = input._dim(dim)
    n = input.shape[d] if input.ndim else 1
    r = xp.asarray(r, dtype=np.int64)
    if bool((r < 0).any()):
        raise RuntimeError("Repeats must be non-negative")
    if r.ndim == 1 and r.shape[0] != 1 and r.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {r.shape[0]} and input.size(0) = {n}")
    where = xp.repeat(xp.arange(n), r.reshape(-1) if r.ndim else int(r))
    if input.ndim == 0:
        input = input.reshape(1)
    return getitem(input, (slice(None),) * d + (Tensor._make(where),))


def bincount(input, weights=None, minlength=0):
    a = input._data
    if a.ndim != 1 or a.dtype.kind not in "iu" or (a.size and bool((a < 0).any())):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    w = None if weights is None else _raw(weights)
    out = xp_of(a).bincount(a, weights=w, minlength=minlength)
    if w is not None and w.dtype == np.float32:
        out = out.astype(np.float32)
    return Tensor._make(out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    a = input._data
    xp = xp_of(a)
    res = xp.unique(a if dim is None else a, return_inverse=return_inverse,
                    return_counts=return_counts, axis=None if dim is None else input._dim(dim))
    if not (return_inverse or return_counts):
        return Tensor._make(res)
    res = list(res)
    if return_inverse:
        res[1] = res[1].reshape(a.shape if dim is None else (a.shape[input._dim(dim)],))
    return tuple(Tensor._make(v) for v in res)


def floor_divide(input, other):
    from ..autograd.grad_mode import no_grad
    from .pointwise import div
    with no_grad():
        if not isinstance(input, Tensor):
            input = Tensor._make(xp_of(_raw(other)).asarray(input))
        return div(input, other, rounding_mode="floor")


def sgn(input):
    from .pointwise import sign
    return sign(input)


# -- in-place fills ---------------------------------------------------------------------------
def fill_diagonal_(self, fill_value, wrap=False):
    from ..tensor_inplace import inplace
    shape = self.shape
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    n = min(shape)
    xp = xp_of(self._data)
    if self.ndim == 2 and wrap and shape[0] > shape[1] + 1:
        rows = xp.arange(0, shape[0])
        rows = rows[rows % (shape[1] + 1) != shape[1]]
        where = (rows, (rows - rows // (shape[1] + 1) * (shape[1] + 1)))
    else:
        i = xp.arange(n)
        where = (i,) * self.ndim
    mask = xp.zeros(shape, dtype=bool)
    mask[where] = True

    def compute(t):
        from .pointwise import where as _where
        return _where(Tensor._make(mask), fill_value, t)
    return inplace(self, compute, raw=lambda a: a.__setitem__(where, fill_value))


def _random_fill(self, sample, generator):
    """Write ``sample(shape, device, generator)`` (a float64 tensor) into self, no grad
    recorded."""
    from ..tensor_inplace import inplace
    z = sample(tuple(self.shape), self.device, generator)
    return inplace(self, lambda t: t * 0 + z.to(t.dtype), raw=lambda a: a.__setitem__(
        Ellipsis, z._data.astype(a.dtype)))


def _uniform(shape, device, generator):
    from .._creation import rand
    return rand(shape, dtype=np.float64, device=device, generator=generator)


def bernoulli_(self, p=0.5, *, generator=None):
    def sample(s, dev, g):
        q = p.to(dev).double() if isinstance(p, Tensor) else p
        return (_uniform(s, dev, g) < q).double()
    return _random_fill(self, sample, generator)


def exponential_(self, lambd=1.0, *, generator=None):
    from .pointwise import log
    return _random_fill(self, lambda s, d, g: -log(1 - _uniform(s, d, g)) / lambd, generator)


def random_(self, from_=0, to=None, *, generator=None):
    if to is None:
        if from_ == 0 or self.dtype.kind == "f":
            from_, to = 0, (2 ** {"float16": 11, "float32": 24}.get(self.dtype.name, 53)
                            if self.dtype.kind == "f" else np.iinfo(self.dtype).max)
        else:
            from_, to = 0, from_
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} "
                           f">= to={to}")
    return _random_fill(self, lambda s, d, g: (_uniform(s, d, g) * (to - from_)).floor() + from_,
                        generator)


OPS = [UnfoldBackward0]
