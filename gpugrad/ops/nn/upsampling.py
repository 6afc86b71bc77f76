"""Resampling: ``interpolate`` (nearest, nearest-exact, linear, bilinear, trilinear, bicubic,
antialiased bilinear / bicubic; area through adaptive average pooling). Upsampling is separable:
along each spatial axis an output reads one input position (nearest), two with weights
(linear), four (cubic) or those under a stretched filter (antialias); the backward is the same
kind of weighted gather with the taps transposed (computed once on the host), written against
``F``, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np

from ...tensor import Tensor
from .._op import Op


# -- interpolate ----------------------------------------------------------------------------------
class _Upsample(Op):
    """y = x resampled along each spatial axis: y[..., j, ...] = sum_t x[..., i_t[j], ...] w_t[j]
    (the backward is the same gather with the transposed taps)"""
    __slots__ = ("back",)

    def forward(self, xp, x, taps=(), back=()):
        self.back = [(axis, _on_device(xp, pairs, x, axis)) for axis, pairs in back]
        for axis, pairs in taps:
            x = _resample(x, axis, _on_device(xp, pairs, x, axis), xp)
        return x

    def backward(self, F, gy):
        for axis, pairs in reversed(self.back):
            gy = (_resample(gy, axis, pairs, F.xp) if F.fast else _resample(
                gy, axis, [(i, w if w is None else Tensor._make(w)) for i, w in pairs]))
        return gy


def _on_device(xp, pairs, x, axis):
    """Taps as arrays of ``x``'s kind, weights shaped to broadcast along their axis."""
    shape = (-1,) + (1,) * (x.ndim - 1 - axis)
    return [(xp.asarray(i), None if w is None else xp.asarray(w, dtype=x.dtype).reshape(shape))
            for i, w in pairs]


def _resample(x, axis, pairs, xp=None):
    """sum over taps of x gathered along ``axis`` (arrays with their module ``xp``, or
    tensors)"""
    lead = (slice(None),) * axis
    y = None
    for i, w in pairs:
        part = x[lead + (i,)] if xp is None else xp.take(x, i, axis=axis)
        part = part if w is None else part * w
        y = part if y is None else y + part
    return y


def _transposed(pairs, n_in, n_out):
    """The taps of the adjoint: input k gathers every (output j, weight) that reads it, padded
    to the longest such list with weight 0."""
    js = np.concatenate([np.arange(n_out)] * len(pairs))
    ks = np.concatenate([i for i, _ in pairs])
    ws = np.concatenate([np.ones(n_out) if w is None else w for _, w in pairs])
    order = np.argsort(ks, kind="stable")
    ks, js, ws = ks[order], js[order], ws[order]
    counts = np.bincount(ks, minlength=n_in)
    starts = np.cumsum(counts) - counts
    unit = all(w is None for _, w in pairs)
    out = []
    for t in range(int(counts.max())):
        has = t < counts
        pos = np.minimum(starts + t, len(ks) - 1)
        w = np.where(has, ws[pos], 0).astype(ws.dtype)
        out.append((np.where(has, js[pos], 0), None if unit and has.all() else w))
    return out


class UpsampleNearest1DBackward0(_Upsample):
    __slots__ = ()


class UpsampleNearest2DBackward0(_Upsample):
    __slots__ = ()


class UpsampleNearestExact1DBackward0(_Upsample):
    __slots__ = ()


class UpsampleNearestExact2DBackward0(_Upsample):
    __slots__ = ()


class UpsampleLinear1DBackward0(_Upsample):
    __slots__ = ()


class UpsampleBilinear2DBackward0(_Upsample):
    __slots__ = ()


class UpsampleNearest3DBackward0(_Upsample):
    __slots__ = ()


class UpsampleNearestExact3DBackward0(_Upsample):
    __slots__ = ()


class UpsampleTrilinear3DBackward0(_Upsample):
    __slots__ = ()


class UpsampleBicubic2DBackward0(_Upsample):
    __slots__ = ()


class UpsampleBilinear2DAaBackward0(_Upsample):
    __slots__ = ()


class UpsampleBicubic2DAaBackward0(_Upsample):
    __slots__ = ()


def _ratio(n_in, n_out, scale, align_corners, t):
    """PyTorch's source-per-output-step (area_pixel_compute_scale), in the op-math type ``t``."""
    if align_corners:
        return t(n_in - 1) / t(n_out - 1) if n_out > 1 else t(0)
    return t(1.0 / scale) if scale is not None and scale > 0 else t(n_in) / t(n_out)


def _nearest_taps(n_in, n_out, scale, exact, t, two_d):
    # NOTE: PyTorch's 2-D CPU kernel computes in float32 and maps n -> n and n -> 2 n exactly,
    # whatever the scale factor; the 1-D one does neither
    if two_d and not exact:
        if n_out == n_in:
            return [(np.arange(n_out), None)]
        if n_out == 2 * n_in:
            return [(np.arange(n_out) // 2, None)]
    t = np.float32 if two_d else t
    ratio = _ratio(n_in, n_out, scale, False, t)
    dst = np.arange(n_out, dtype=t) + (t(0.5) if exact else t(0))
    return [(np.minimum(np.floor(dst * ratio).astype(np.int64), n_in - 1), None)]


def _linear_taps(n_in, n_out, scale, align_corners, t):
    if n_in == n_out:
        return [(np.arange(n_out), None)]
    ratio = _ratio(n_in, n_out, scale, align_corners, t)
    dst = np.arange(n_out, dtype=t)
    src = ratio * dst if align_corners else np.maximum(ratio * (dst + t(0.5)) - t(0.5), t(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    l1 = np.clip(src - i0.astype(t), t(0), t(1))
    return [(i0, t(1) - l1), (i0 + (i0 < n_in - 1), l1)]


def _cubic(x, a):
    """The four weights of taps floor(s) - 1 .. floor(s) + 2 at offset x = s - floor(s) of the
    cubic convolution kernel with parameter a (Keys)."""
    def near(d):    # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d):     # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return far(x + 1), near(x), near(1 - x), far(2 - x)


def _cubic_taps(n_in, n_out, scale, align_corners, t):
    # NOTE: PyTorch's A = -0.75; taps outside the input read its border
    ratio = _ratio(n_in, n_out, scale, align_corners, t)
    dst = np.arange(n_out, dtype=t)
    src = ratio * dst if align_corners else ratio * (dst + t(0.5)) - t(0.5)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    x = np.clip(src - i0.astype(t), t(0), t(1))
    return [(np.clip(i0 - 1 + k, 0, n_in - 1), w.astype(t))
            for k, w in enumerate(_cubic(x, t(-0.75)))]


def _aa_filter(x, cubic):
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0)
    near, far = _cubic(x, -0.5)[1], _cubic(x - 1, -0.5)[0]   # PIL's a = -0.5
    return np.where(x < 1, near, np.where(x < 2, far, 0))


def _aa_taps(n_in, n_out, scale, align_corners, t, cubic):
    """Antialiased taps: each output averages the inputs under the filter stretched by the
    downsampling ratio, the weights normalised to sum to 1 (PyTorch's / PIL's)."""
    ratio = _ratio(n_in, n_out, scale, align_corners, t)
    half = t(2.0 if cubic else 1.0)
    support = half * ratio if ratio >= 1 else half
    inv = t(1) / ratio if ratio >= 1 else t(1)
    center = (ratio * (np.arange(n_out) + 0.5)).astype(t)
    lo = np.maximum(np.trunc(center - support + t(0.5)).astype(np.int64), 0)
    size = np.minimum(np.trunc(center + support + t(0.5)).astype(np.int64), n_in) - lo
    j = np.arange(max(int(size.max()), 1))
    w = _aa_filter((j + lo[:, None] - center[:, None] + t(0.5)) * inv, cubic).astype(t)
    w = np.where(j < size[:, None], w, t(0))
    total = w.sum(axis=1, keepdims=True)
    w = np.where(total != 0, w / np.where(total != 0, total, 1), w).astype(t)
    return [(np.minimum(lo + k, n_in - 1), w[:, k]) for k in range(j.size)]


_UPSAMPLE = {("nearest", 3): UpsampleNearest1DBackward0, ("nearest", 4): UpsampleNearest2DBackward0,
             ("nearest", 5): UpsampleNearest3DBackward0,
             ("nearest-exact", 3): UpsampleNearestExact1DBackward0,
             ("nearest-exact", 4): UpsampleNearestExact2DBackward0,
             ("nearest-exact", 5): UpsampleNearestExact3DBackward0,
             ("linear", 3): UpsampleLinear1DBackward0, ("bilinear", 4): UpsampleBilinear2DBackward0,
             ("trilinear", 5): UpsampleTrilinear3DBackward0,
             ("bicubic", 4): UpsampleBicubic2DBackward0}
_ANTIALIAS = {"bilinear": UpsampleBilinear2DAaBackward0, "bicubic": UpsampleBicubic2DAaBackward0}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}
_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize the spatial dimensions of (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to
    ``size`` or by ``scale_factor``, as PyTorch's ``F.interpolate``."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    spatial = list(input.shape[2:])
    scales = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {spatial} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and output "
                    "size in (o1, o2, ...,oK) format.")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {spatial} and scale_factor of "
                    f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    "format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
        out = [math.floor(float(n) * s) for n, s in zip(spatial, scales)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if recompute_scale_factor or mode == "area":
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode in _NEEDS and input.ndim in (3, 4, 5) and input.ndim != _NEEDS[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_NEEDS[mode]}D input")
    op = _ANTIALIAS[mode] if antialias else _UPSAMPLE.get((mode, input.ndim))
    if op is None and not (mode == "area" and input.ndim in (3, 4, 5)):
        if input.ndim in (3, 4, 5) and mode in _MODES.split(" | "):
            raise NotImplementedError(f"interpolate: mode={mode!r} on {input.ndim}D input is not "
                                      "supported by gpugrad")
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                                  f"{input.ndim}D) for the modes: {_MODES} (got {mode})")
    if any(o <= 0 for o in out) or any(n <= 0 for n in spatial):
        names = ("D", "H", "W")[3 - dim:]
        ins = ", ".join(f"{a}: {n}" for a, n in zip(names, spatial))
        outs = ", ".join(f"{a}: {n}" for a, n in zip(names, out))
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({ins}) output ({outs})")
    if mode == "area":
        from .pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
        from .pooling3d import adaptive_avg_pool3d
        pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
        return pool(input, out if dim > 1 else out[0])
    if input.dtype.kind != "f":
        if mode != "nearest":
            raise NotImplementedError(f"interpolate: mode={mode!r} needs a floating point input, "
                                      f"got {input.dtype}")
    t = np.float32 if input.dtype.itemsize <= 4 else np.float64
    taps, back = [], []
    for axis, (n_in, n_out) in enumerate(zip(spatial, out), start=2):
        s = None if scales is None else scales[axis - 2]
        if mode.startswith("nearest"):
            pairs = _nearest_taps(n_in, n_out, s, mode == "nearest-exact", t, dim == 2)
        elif antialias:
            pairs = _aa_taps(n_in, n_out, s, align_corners, t, mode == "bicubic")
        elif mode == "bicubic":
            pairs = _cubic_taps(n_in, n_out, s, align_corners, t)
        else:
            pairs = _linear_taps(n_in, n_out, s, align_corners, t)
        taps.append((axis, pairs))
        back.append((axis, _transposed(pairs, n_in, n_out)))
    return op.apply(input, taps=tuple(taps), back=tuple(back))


OPS = [UpsampleNearest1DBackward0, UpsampleNearest2DBackward0, UpsampleNearestExact1DBackward0,
       UpsampleNearestExact2DBackward0, UpsampleLinear1DBackward0, UpsampleBilinear2DBackward0,
       UpsampleNearest3DBackward0, UpsampleNearestExact3DBackward0, UpsampleTrilinear3DBackward0,
       UpsampleBicubic2DBackward0, UpsampleBilinear2DAaBackward0, UpsampleBicubic2DAaBackward0]
