"""Resampling: ``interpolate`` (nearest, nearest-exact, linear, bilinear, trilinear, bicubic,
antialiased bilinear / bicubic; area through adaptive average pooling), ``pixel_shuffle`` /
``pixel_unshuffle``, and ``unfold`` / ``fold`` (im2col / col2im). Upsampling is separable:
along each spatial axis an output reads one input position (nearest), two with weights
(linear), four (cubic) or those under a stretched filter (antialias); the backward is the same
kind of weighted gather with the taps transposed (computed once on the host), written against
``F``, so double backward works.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._op import Op
from .conv import _crop, _pad2, _scatter_windows, _windows


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
        from ..nn import more_layers
        from .pool3d import adaptive_avg_pool3d
        pool = (more_layers.adaptive_avg_pool1d, more_layers.adaptive_avg_pool2d,
                adaptive_avg_pool3d)[dim - 1]
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


# -- pixel shuffle --------------------------------------------------------------------------------
def _shuffle(ns, x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r)"""
    *lead, c, h, w = x.shape
    n = len(lead)
    y = ns.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = ns.transpose(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return ns.reshape(y, (*lead, c // (r * r), h * r, w * r))


def _unshuffle(ns, x, r):
    """(*, C, H r, W r) -> (*, C r^2, H, W)"""
    *lead, c, h, w = x.shape
    n = len(lead)
    y = ns.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = ns.transpose(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return ns.reshape(y, (*lead, c * r * r, h // r, w // r))


class PixelShuffleBackward0(Op):
    """y[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w]"""
    __slots__ = ("r",)

    def forward(self, xp, x, r=1):
        self.r = r
        return xp.ascontiguousarray(_shuffle(xp, x, r))

    def backward(self, F, gy):
        return _unshuffle(F, gy, self.r)


class PixelUnshuffleBackward0(Op):
    """y[..., c r^2 + i r + j, h, w] = x[..., c, h r + i, w r + j]"""
    __slots__ = ("r",)

    def forward(self, xp, x, r=1):
        self.r = r
        return xp.ascontiguousarray(_unshuffle(xp, x, r))

    def backward(self, F, gy):
        return _shuffle(F, gy, self.r)


def _check_factor(input, r, fn, what):
    if input.ndim < 3:
        raise RuntimeError(f"{fn} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{fn} expects a positive {what}, but got {r}")


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    _check_factor(input, r, "pixel_shuffle", "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return PixelShuffleBackward0.apply(input, r=r)


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    _check_factor(input, r, "pixel_unshuffle", "downscale_factor")
    for d, name in ((-2, "height"), (-1, "width")):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return PixelUnshuffleBackward0.apply(input, r=r)


# -- unfold / fold --------------------------------------------------------------------------------
def _blocks(size, kernel, dilation, padding, stride):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in
                 zip(size, kernel, dilation, padding, stride))


def _im2col(xp, x, kernel, dilation, padding, stride):
    """(N, C, H, W) -> (N, C kh kw, L): each block as a column, channel-major"""
    win = _windows(xp, _pad2(xp, x, padding), kernel, stride, dilation)
    n, c, oh, ow, kh, kw = win.shape
    return xp.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, oh * ow)


def _col2im(xp, cols, size, kernel, dilation, padding, stride):
    """(N, C kh kw, L) -> (N, C, H, W): the columns added back where their blocks lie"""
    (kh, kw), (oh, ow) = kernel, _blocks(size, kernel, dilation, padding, stride)
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    shares = cols.reshape(n, c, kh, kw, oh, ow).transpose(0, 1, 4, 5, 2, 3)
    full = (n, c, size[0] + 2 * padding[0], size[1] + 2 * padding[1])
    return _crop(_scatter_windows(xp, shares, full, stride, dilation), padding, size)


class Im2ColBackward0(Op):
    """y[n, (c, i, j), (h, w)] = x[n, c, s h + d i - p, s w + d j - p]  (zero outside x; an
    unbatched (C, H, W) x is one sample)"""
    __slots__ = ("size", "args")

    def forward(self, xp, x, kernel_size=(1, 1), dilation=(1, 1), padding=(0, 0),
                stride=(1, 1)):
        self.size, self.args = x.shape[-2:], (kernel_size, dilation, padding, stride)
        if x.ndim == 3:
            return _im2col(xp, x[None], *self.args)[0]
        return _im2col(xp, x, *self.args)

    def backward(self, F, gy):
        if F.fast:
            if gy.ndim == 2:
                return _col2im(F.xp, gy[None], self.size, *self.args)[0]
            return _col2im(F.xp, gy, self.size, *self.args)
        k, d, p, s = self.args
        return Col2ImBackward0.apply(gy, output_size=self.size, kernel_size=k, dilation=d,
                                     padding=p, stride=s)


class Col2ImBackward0(Op):
    """y[n, c, h, w] = the sum of the columns entries x[n, (c, i, j), l] that block l puts at
    (h, w)  (the adjoint of unfold)"""
    __slots__ = ("args",)

    def forward(self, xp, x, output_size=(1, 1), kernel_size=(1, 1), dilation=(1, 1),
                padding=(0, 0), stride=(1, 1)):
        self.args = (kernel_size, dilation, padding, stride)
        if x.ndim == 2:
            return _col2im(xp, x[None], output_size, *self.args)[0]
        return _col2im(xp, x, output_size, *self.args)

    def backward(self, F, gy):
        if F.fast:
            if gy.ndim == 3:
                return _im2col(F.xp, gy[None], *self.args)[0]
            return _im2col(F.xp, gy, *self.args)
        k, d, p, s = self.args
        return Im2ColBackward0.apply(gy, kernel_size=k, dilation=d, padding=p, stride=s)


def _fold_args(kernel_size, dilation, padding, stride):
    out = []
    for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"),
                    (stride, "stride")):
        v = (v, v) if isinstance(v, int) else tuple(v)
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        out.append(v)
    (k, d, p, s) = out
    for v, name, a, b, cond in ((k, "kernel size", "kernel_height", "kernel_width", "greater "
                                 "than zero"), (s, "stride", "stride_height", "stride_width",
                                                "greater than zero"),
                                (d, "dilation", "dilation_height", "dilation_width", "greater "
                                 "than zero")):
        if any(x <= 0 for x in v):
            raise RuntimeError(f"{name} should be {cond}, but got {a}: {v[0]} {b}: {v[1]}")
    if any(x < 0 for x in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    return k, d, p, s


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks of (N, C, H, W) (or (C, H, W)) as (N, C kh kw, L) columns."""
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    size = tuple(input.shape[-2:])
    blocks = _blocks(size, k, d, p, s)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least "
                           "one.")
    return Im2ColBackward0.apply(input, kernel_size=k, dilation=d, padding=p, stride=s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum (N, C kh kw, L) columns back into (N, C, H, W) (the adjoint of unfold)."""
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(size)}")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    c = input.shape[-2]
    if c % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c} and kernel_size={k}.")
    blocks = _blocks(size, k, d, p, s)
    if input.shape[-1] != blocks[0] * blocks[1] or any(b < 1 for b in blocks):
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {max(blocks[0], 0) * max(blocks[1], 0)}, but got "
                           f"input.size(2)={input.shape[-1]}.")
    return Col2ImBackward0.apply(input, output_size=size, kernel_size=k, dilation=d, padding=p,
                                 stride=s)


OPS = [UpsampleNearest1DBackward0, UpsampleNearest2DBackward0, UpsampleNearestExact1DBackward0,
       UpsampleNearestExact2DBackward0, UpsampleLinear1DBackward0, UpsampleBilinear2DBackward0,
       UpsampleNearest3DBackward0, UpsampleNearestExact3DBackward0, UpsampleTrilinear3DBackward0,
       UpsampleBicubic2DBackward0, UpsampleBilinear2DAaBackward0, UpsampleBicubic2DAaBackward0,
       PixelShuffleBackward0, PixelUnshuffleBackward0, Im2ColBackward0, Col2ImBackward0]
