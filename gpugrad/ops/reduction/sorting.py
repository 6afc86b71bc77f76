"""Numerical functions PyTorch code reaches for. Differentiable ones are compositions of recorded
ops: cdist, cummax/cummin (values), fmax/fmin, float_power, quantile/nanquantile, nanmedian,
cov/corrcoef. Not differentiable, as in PyTorch: searchsorted, bucketize, histc, the bitwise
functions, logspace and poisson."""
from __future__ import annotations

import math

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor, scalar_name
from .reduce import _return_type

_CUMMAX, _CUMMIN = _return_type("cummax"), _return_type("cummin")
_NANMEDIAN = _return_type("nanmedian")


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _kind_name(dtype):
    return scalar_name(dtype).capitalize()


# -- distances ------------------------------------------------------------------------------------
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """d[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, from the differences (exact for every
    p; the gradient at a zero distance is 0, as PyTorch's)."""
    from .matrix import vector_norm
    if x1.ndim < 2 or x2.ndim < 2:
        bad, name = (x1, "X1") if x1.ndim < 2 else (x2, "X2")
        raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {bad.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype.kind != "f" or x2.dtype.kind != "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_kind_name(x1.dtype)}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff, p, -1)


# -- sorted search --------------------------------------------------------------------------------
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """For each value, the index in the sorted innermost dim where it would be inserted (before
    equal entries, or after them with ``right=True`` / ``side='right'``)."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    xp = xp_of(seq)
    scalar = not isinstance(input, Tensor)
    v = xp.asarray(input) if scalar else input._data
    if sorter is not None:
        seq = xp.take_along_axis(seq, _raw(sorter), axis=-1)
    if seq.ndim > 1 and (scalar or seq.shape[:-1] != v.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(seq.shape)} and "
                           f"input value tensor {list(v.shape)}")
    how = "right" if right else "left"
    if seq.ndim == 1:
        idx = xp.searchsorted(seq, v, side=how)
    else:
        rows, vals = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        idx = xp.stack([xp.searchsorted(r, w, side=how) for r, w in zip(rows, vals)])
        idx = idx.reshape(v.shape)
    return Tensor._make(xp.asarray(idx).astype(np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each entry: i with boundaries[i-1] < x <= boundaries[i] (``right=True``:
    boundaries[i-1] <= x < boundaries[i])."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Counts in ``bins`` equal-width bins over [min, max] (the data's range when both are 0);
    entries outside are ignored, the last bin includes max."""
    a = input._data
    xp = xp_of(a)
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{_kind_name(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    x = a.reshape(-1)
    x = x[(x >= lo) & (x <= hi)]
    t = a.dtype.type
    # NOTE: PyTorch's bin of x: trunc((x - min) * bins / (max - min)) in x's dtype, max -> last
    pos = ((x - t(lo)) * t(bins) / (t(hi) - t(lo))).astype(np.int64)
    pos = xp.minimum(pos, bins - 1)
    return Tensor._make(xp.bincount(pos, minlength=bins)[:bins].astype(a.dtype))


# -- running extremes -----------------------------------------------------------------------------
def _scan(xp, ufunc, a):
    """Running ``ufunc`` (maximum or minimum) along the last axis: numpy's accumulate, or a
    doubling scan (log2 n steps) where the array module has none."""
    if xp is np:
        return ufunc.accumulate(a, axis=-1)
    run, step, n = a, 1, a.shape[-1]
    while step < n:
        run = xp.concatenate([run[..., :step], ufunc(run[..., step:], run[..., :-step])], -1)
        step *= 2
    return run


def _cumext(input, dim, name):
    from .select import gather
    kind = _CUMMAX if name == "cummax" else _CUMMIN
    if input.ndim == 0:
        return kind(input.clone(), Tensor._make(xp_of(input._data).zeros((), dtype=np.int64)))
    d = input._dim(dim)
    a = input._data
    xp = xp_of(a)
    m = xp.moveaxis(a, d, -1)
    if m.shape[-1] == 0:
        return kind(input.clone(), Tensor._make(xp.zeros(a.shape, dtype=np.int64)))
    run = _scan(xp, xp.maximum if name == "cummax" else xp.minimum, m)
    # an entry equal to the running extreme (or nan) takes the index: ties go to the latest
    hit = (m == run) | (xp.isnan(m) if m.dtype.kind == "f" else False)
    pos = xp.where(hit, xp.arange(m.shape[-1]), 0)
    idx = xp.moveaxis(_scan(xp, xp.maximum, pos), -1, d).astype(np.int64)
    return kind(gather(input, d, Tensor._make(idx)), Tensor._make(idx))


def cummax(input, dim):
    return _cumext(input, dim, "cummax")


def cummin(input, dim):
    return _cumext(input, dim, "cummin")


# -- nan-ignoring extremes, float_power -----------------------------------------------------------
def _fext(input, other, larger):
    from .pointwise import where
    a, b = _raw(input), _raw(other)
    xp = xp_of(a if isinstance(input, Tensor) else b)
    a, b = xp.asarray(a), xp.asarray(b)
    take_a = (a >= b) if larger else (a <= b)
    if b.dtype.kind == "f":
        take_a = take_a | xp.isnan(b)
    return where(Tensor._make(take_a), input, other)


def fmax(input, other, *, out=None):
    """max(a, b), or the one that is not nan (nan only when both are)."""
    return _fext(input, other, True)


def fmin(input, other, *, out=None):
    """min(a, b), or the one that is not nan (nan only when both are)."""
    return _fext(input, other, False)


def _as_double(v):
    if isinstance(v, Tensor):
        return v.to(np.complex128 if v.dtype.kind == "c" else np.float64)
    return complex(v) if isinstance(v, complex) else float(v)


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in float64 (complex128 for complex inputs)."""
    from .pointwise import pow
    base = _as_double(input)
    if not isinstance(base, Tensor):
        ref = _as_double(exponent)
        base = Tensor._make(xp_of(ref._data).asarray(base, dtype=ref.dtype))
    return pow(base, _as_double(exponent))


# -- quantiles and medians ------------------------------------------------------------------------
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    from .extra import lerp
    from .select import gather, sort
    name = "nanquantile()" if ignore_nan else "quantile()"
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{name} input tensor must be either float or double dtype")
    if input.numel() == 0:
        raise RuntimeError(f"{name} input tensor must be non-empty")
    if interpolation not in _MODES:
        raise RuntimeError(f"{name} interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    xp = xp_of(input._data)
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name} q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name} q tensor must be same dtype as the input tensor")
        qs, scalar_q = q._data.reshape(-1), q.ndim == 0
    else:
        qs, scalar_q = xp.asarray([q], dtype=input.dtype), True
    if qs.size and not bool(((qs >= 0) & (qs <= 1)).all()):
        bad = q if scalar_q and not isinstance(q, Tensor) else None
        raise RuntimeError(f"{name} q must be in the range [0, 1] but got {bad}" if bad is not None
                           else f"{name} q values must be in the range [0, 1]")
    if dim is None:
        x, out_shape = input.reshape(-1), ((1,) * input.ndim if keepdim else ())
    else:
        d = input._dim(dim)
        x = input.movedim(d, -1) if input.ndim else input.reshape(1)
        out_shape = tuple(1 if i == d else n for i, n in enumerate(input.shape)) if keepdim \
            else tuple(n for i, n in enumerate(input.shape) if i != d)
    values = sort(x, -1).values                   # nan last
    n = values.shape[-1]
    nan = xp.isnan(values._data)
    last = n - 1
    if ignore_nan:
        count = (~nan).sum(axis=-1, keepdims=True)
        ranks = qs * (count - 1).astype(qs.dtype)
        ranks = xp.where(count == 0, last, ranks)      # all nan: read the (nan) last entry
    else:
        ranks = xp.where(nan.any(axis=-1, keepdims=True), last,
                         qs * qs.dtype.type(last) + xp.zeros(nan.shape[:-1] + (1,), qs.dtype))
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    below = xp.floor(ranks).astype(np.int64)
    above = xp.ceil(ranks).astype(np.int64)
    lo = gather(values, -1, Tensor._make(below))
    if interpolation in ("lower", "higher", "nearest"):
        y = lo
    else:
        hi = gather(values, -1, Tensor._make(above))
        w = xp.full(ranks.shape, 0.5, ranks.dtype) if interpolation == "midpoint" \
            else ranks - below
        y = lerp(lo, hi, Tensor._make(w.astype(input.dtype)))
    y = y.movedim(-1, 0)                          # (len(q), reduced dims...)
    y = y.reshape((-1,) + out_shape)
    return y[0] if scalar_q else y


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The q-th quantiles along dim (of all entries when dim is None); nan if a slice has nan."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile of the entries that are not nan (nan for a slice of nan only)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the entries that are not nan (with indices when dim is given); nan
    where all are."""
    from .extra import median_along
    if dim is None:
        return median_along(input, None, keepdim, True)
    return _NANMEDIAN(*median_along(input, dim, keepdim, True))


# -- covariance -----------------------------------------------------------------------------------
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of input (observations in the columns):
    C = sum_k w_k (x_k - m)(x_k - m)^T / (sum w - correction ...), with numpy's weighting."""
    import warnings

    from .linalg import mm
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if x.dtype.kind not in "fc":
        from .._creation import get_default_dtype
        x = x.to(get_default_dtype())
    n = x.shape[1]
    w = None
    for name, weights, kinds, kind_name in (("fweights", fweights, "iu", "integral"),
                                            ("aweights", aweights, "f", "floating point")):
        if weights is None:
            continue
        if weights.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {weights.ndim} dimensions")
        if weights.dtype.kind not in kinds:
            raise RuntimeError(f"cov(): expected {name} to have {kind_name} dtype but got "
                               f"{name} with {_kind_name(weights.dtype)} dtype")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {weights.numel()} != {n}")
        if bool((weights._data < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    if w is None:
        w_sum = n
        avg = x.mean(1)
    else:
        w = w.to(x.dtype)
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(_raw(norm) <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    xc = x - avg.unsqueeze(1)
    c = mm(xc, (xc if w is None else xc * w).t())
    return (c / norm).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients: cov(input) scaled by the standard deviations, clipped
    to [-1, 1]."""
    from .pointwise import clamp, sqrt
    c = cov(input)
    if c.ndim == 0:
        return c / c
    s = sqrt(c.diagonal())
    c = c / s.unsqueeze(1) / s.unsqueeze(0)
    return clamp(c, -1, 1)


# -- creation and sampling ------------------------------------------------------------------------
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False, out=None):
    """base ** linspace(start, end, steps), computed in float64."""
    from .. import _backend
    from .._creation import _finish, as_dtype, get_default_dtype
    d = as_dtype(dtype) or get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")

    def make(xp):
        return xp.power(float(base), xp.linspace(float(start), float(end), steps)).astype(d)
    return _finish(_backend.on_device(device, make), requires_grad)


def poisson(input, generator=None):
    """A Poisson draw with rate ``input`` per entry, in input's dtype."""
    from .._creation import default_generator
    a = input._data
    if a.size and not bool((a >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = (generator or default_generator)._rng(xp_of(a))
    return Tensor._make(rng.poisson(a.astype(np.float64)).astype(a.dtype))


# -- bitwise --------------------------------------------------------------------------------------
def _bitwise(name, ufunc):
    def fn(input, other=None, *, out=None):
        a = _raw(input)
        b = _raw(other)
        xp = xp_of(a if isinstance(input, Tensor) else b)
        for v in (a, b):
            if isinstance(v, (float, complex)) or getattr(v, "dtype", np.dtype(int)).kind in "fc":
                kind = _kind_name(v.dtype) if hasattr(v, "dtype") else "Float"
                raise NotImplementedError(f'"{name}_cpu" not implemented for \'{kind}\'')
        f = getattr(xp, ufunc)
        y = f(xp.asarray(a)) if other is None else f(xp.asarray(a), b)
        return Tensor._make(xp.asarray(y))
    fn.__name__ = ufunc
    return fn


bitwise_and = _bitwise("bitwise_and", "bitwise_and")
bitwise_or = _bitwise("bitwise_or", "bitwise_or")
bitwise_xor = _bitwise("bitwise_xor", "bitwise_xor")
bitwise_not = _bitwise("bitwise_not", "invert")
bitwise_left_shift = _bitwise("lshift", "left_shift")
bitwise_right_shift = _bitwise("rshift", "right_shift")
