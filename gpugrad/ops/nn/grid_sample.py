"""The spatial-transformer pair: ``affine_grid`` (sampling coordinates of an affine map) and
``grid_sample`` (the input read at those coordinates, bilinearly, bicubically (2-D) or at the
nearest pixel), in 2-D and 3-D. Coordinates are normalised to [-1, 1]; clipping and reflection
make the source index a piecewise-linear function of the grid, so each backward is written once,
against the namespace F, with that function's slope as a constant: the gradients are
differentiable again.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np

from ...tensor import Tensor
from .._op import Op

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def _steps(xp, n, align_corners, dtype):
    """n evenly spaced points over [-1, 1] (pixel centres unless align_corners); 0 for n = 1."""
    if n <= 1:
        return xp.zeros(n, dtype=dtype)
    v = xp.linspace(-1.0, 1.0, n, dtype=dtype)
    return v if align_corners else v * ((n - 1) / n)


class AffineGridGeneratorBackward0(Op):
    """grid[n, *p] = theta[n] @ (x, y[, z], 1) at each output position p (x along W, y along
    H, z along D): a product with a constant base grid, linear in theta"""
    __slots__ = ("base", "shape")
    temps = ("base",)

    def forward(self, xp, theta, size=(1, 1, 1, 1), align_corners=False):
        spatial = tuple(size[2:])
        axes = [_steps(xp, n, align_corners, theta.dtype) for n in spatial]
        grids = xp.meshgrid(*axes, indexing="ij")         # D/H/W order; the coordinates x first
        ones = xp.ones(spatial, dtype=theta.dtype)
        base = xp.stack(list(grids[::-1]) + [ones], axis=-1).reshape(-1, len(spatial) + 1)
        self.base, self.shape = base, (size[0],) + spatial + (len(spatial),)
        return xp.matmul(base, theta.transpose(0, 2, 1)).reshape(self.shape)

    def backward(self, F, gy):
        base = self.base if F.fast else Tensor._make(self.base)
        g = F.reshape(gy, (gy.shape[0], -1, gy.shape[-1]))
        return F.matmul(F.swapaxes(g, 1, 2), base)


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) or (N, D, H, W, 3) coordinates theta maps the output positions to."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if theta.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"torch.{theta.dtype.name}")
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    k = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[-2:]) != (k, k + 1):
        raise ValueError(f"Expected a batch of {k}D affine matrices of shape Nx{k}x{k + 1} for "
                         f"size {size}. Got {theta.shape}.")
    if align_corners and min(size[2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      stacklevel=2)
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    return AffineGridGeneratorBackward0.apply(theta, size=size, align_corners=bool(align_corners))


# -- grid_sample ----------------------------------------------------------------------------------
def _reflect(xp, i, twice_low, twice_high):
    """i reflected into [low, high] by the borders, and the slope (+-1) of that map."""
    if twice_low == twice_high:
        return xp.zeros_like(i), xp.zeros_like(i)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    slope = xp.where(i < low, -1.0, 1.0).astype(i.dtype)
    i = xp.abs(i - low)
    extra, flips = xp.fmod(i, span), xp.floor(i / span)
    even = flips % 2 == 0
    return xp.where(even, extra + low, span - extra + low), xp.where(even, slope, -slope)


def _source(xp, c, size, padding_mode, align_corners):
    """The source index of normalised coordinates c along a dimension of ``size`` pixels, and
    its slope d index / d c (a constant where the map is linear, 0 where it is clipped)."""
    if align_corners:
        i, slope = (c + 1) / 2 * (size - 1), xp.full(c.shape, (size - 1) / 2, dtype=c.dtype)
    else:
        i, slope = ((c + 1) * size - 1) / 2, xp.full(c.shape, size / 2, dtype=c.dtype)
    if padding_mode == "reflection":
        i, s = _reflect(xp, i, 0, 2 * (size - 1)) if align_corners else _reflect(
            xp, i, -1, 2 * size - 1)
        slope = slope * s
    if padding_mode in ("border", "reflection"):
        slope = xp.where((i > 0) & (i < size - 1), slope, 0)
        i = xp.clip(i, 0, size - 1)
    return i, slope


def _unnormalize(xp, c, size, align_corners):
    """The source index of normalised coordinates c (no padding applied) and its slope."""
    if align_corners:
        return (c + 1) / 2 * (size - 1), xp.full(c.shape, (size - 1) / 2, dtype=c.dtype)
    return ((c + 1) * size - 1) / 2, xp.full(c.shape, size / 2, dtype=c.dtype)


def _bounded(xp, i, size, padding_mode, align_corners):
    """An integer tap position mapped by the padding mode (border: clipped; reflection:
    reflected, then clipped; zeros: as is; bicubic reads its 4 x 4 taps through this)."""
    if padding_mode == "reflection":
        i = (_reflect(xp, i, 0, 2 * (size - 1)) if align_corners else
             _reflect(xp, i, -1, 2 * size - 1))[0]
    if padding_mode in ("border", "reflection"):
        i = xp.clip(i, 0, size - 1)
    return i


_A = -0.75   # PyTorch's cubic convolution parameter


def _near(d):
    return ((_A + 2) * d - (_A + 3)) * d * d + 1


def _far(d):
    return ((_A * d - 5 * _A) * d + 8 * _A) * d - 4 * _A


def _dnear(d):
    return (3 * (_A + 2) * d - 2 * (_A + 3)) * d


def _dfar(d):
    return (3 * _A * d - 10 * _A) * d + 8 * _A


def _tap(t, o, cubic):
    """The weight of the tap at offset o from floor(s), at fraction t = s - floor(s)."""
    if not cubic:
        return t if o else 1 - t
    return (_far(t + 1), _near(t), _near(1 - t), _far(2 - t))[o + 1]


def _dtap(t, o, cubic):
    """d _tap / d t"""
    if not cubic:
        return 1.0 if o else -1.0
    return (_dfar(t + 1), _dnear(t), -_dnear(1 - t), -_dfar(2 - t))[o + 1]


class _GridSampler(Op):
    """out[n, :, *p] = sum over the taps q around the source point s(grid[n, *p]) of
    prod_j w(q_j - floor(s_j), t_j) x[n, :, q] with t = s - floor(s): bilinear (2 taps a
    dimension, weights 1 - t, t), bicubic (4 taps, cubic convolution with A = -0.75, each tap
    mapped by the padding mode), or x at the nearest pixel; taps outside the input read 0"""
    __slots__ = ("corners", "t", "slope", "mode")
    saves = (0, 1)
    saved_names = ("input", "grid")
    temps = ("corners", "t", "slope")

    def forward(self, xp, x, grid, mode="bilinear", padding_mode="zeros", align_corners=False):
        sizes = x.shape[2:]
        k, n = len(sizes), x.shape[0]
        cubic = mode == "bicubic"
        pos, self.slope = [], []
        for j, size in enumerate(sizes):         # grid's last axis lists x (W) first
            if cubic:
                i, slope = _unnormalize(xp, grid[..., k - 1 - j], size, align_corners)
            else:
                i, slope = _source(xp, grid[..., k - 1 - j], size, padding_mode, align_corners)
            pos.append(i)
            self.slope.append(slope)
        self.mode = mode
        if mode == "nearest":
            base, self.t, offsets = [xp.rint(i) for i in pos], None, [(0,) * k]
        else:
            base = [xp.floor(i) for i in pos]
            self.t = [i - b for i, b in zip(pos, base)]
            offsets = list(itertools.product((-1, 0, 1, 2) if cubic else (0, 1), repeat=k))
        batch = xp.arange(n).reshape((n,) + (1,) * (grid.ndim - 2)) * int(np.prod(sizes))
        self.corners = []
        for b in offsets:
            idx = [bj + o for bj, o in zip(base, b)]
            if cubic:
                idx = [_bounded(xp, i, s, padding_mode, align_corners)
                       for i, s in zip(idx, sizes)]
            valid = None
            for i, size in zip(idx, sizes):
                inside = (i >= 0) & (i <= size - 1)
                valid = inside if valid is None else valid & inside
            flat = batch + _ravel(xp, [xp.clip(i, 0, s - 1).astype(xp.int64) for i, s in
                                       zip(idx, sizes)], sizes)
            self.corners.append((b, flat, valid.astype(x.dtype)))
        rows = _rows(xp, x)
        y = 0
        for b, flat, valid in self.corners:
            w = valid if self.t is None else _weight(self.t, b, cubic) * valid
            y = y + rows[flat] * w[..., None]
        return xp.ascontiguousarray(xp.moveaxis(y, -1, 1))

    def backward(self, F, gy, x, grid):
        const = (lambda a: a) if F.fast else Tensor._make
        k = x.ndim - 2
        need = self.needs_input_grad
        nearest, cubic = self.mode == "nearest", self.mode == "bicubic"
        gyt = F.transpose(gy, (0,) + tuple(range(2, k + 2)) + (1,))    # (N, *out, C)
        t = self.t
        if not (F.fast or nearest):   # t as a function of the grid, exact in value/slope
            t = [grid[..., k - 1 - j] * const(s) + const(tj - grid._data[..., k - 1 - j] * s)
                 for j, (tj, s) in enumerate(zip(self.t, self.slope))]
        gx = ggrid = None
        if need[0]:
            rows = (x.shape[0] * int(np.prod(x.shape[2:])), x.shape[1])
            acc = None
            for b, flat, valid in self.corners:
                w = const(valid) if nearest else _weight(t, b, cubic) * const(valid)
                part = F.index_add(rows, (flat,), gyt * F.expand_dims(w, -1))
                acc = part if acc is None else acc + part
            acc = F.reshape(acc, (x.shape[0],) + tuple(x.shape[2:]) + (x.shape[1],))
            gx = F.transpose(acc, (0, k + 1) + tuple(range(1, k + 1)))
        if need[1]:
            if nearest:
                ggrid = F.zeros_like(grid)
            else:
                rows = _rows(F, x)
                gt = [0] * k
                for b, flat, valid in self.corners:
                    s = F.sum(gyt * rows[flat], axis=-1) * const(valid)
                    for j in range(k):
                        gt[j] = gt[j] + s * _weight(t, b, cubic, skip=j) * _dtap(t[j], b[j],
                                                                                cubic)
                ggrid = F.concatenate([F.expand_dims(gt[j] * const(self.slope[j]), -1)
                                       for j in reversed(range(k))], axis=-1)
        return gx, ggrid


def _ravel(xp, idx, sizes):
    flat = idx[0]
    for i, s in zip(idx[1:], sizes[1:]):
        flat = flat * s + i
    return flat


def _rows(F, x):
    """x as (N * prod(spatial), C): one row per pixel."""
    k = x.ndim - 2
    xt = F.transpose(x, (0,) + tuple(range(2, k + 2)) + (1,))
    return F.reshape(xt, (-1, x.shape[1]))


def _weight(t, b, cubic=False, skip=None):
    """prod_j _tap(t_j, b_j) over the dimensions j other than ``skip``."""
    w = 1.0
    for j, (tj, bj) in enumerate(zip(t, b)):
        if j != skip:
            w = w * _tap(tj, bj, cubic)
    return w


class GridSampler2DBackward0(_GridSampler):
    __slots__ = ()


class GridSampler3DBackward0(_GridSampler):
    __slots__ = ()


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input (N, C, H, W) read at grid (N, Ho, Wo, 2) (x, y in [-1, 1]), or in 3-D (N, C, D, H,
    W) at (N, Do, Ho, Wo, 3)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    k = input.ndim - 2
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    if mode == "bicubic" and k == 3:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        from .pooling import _TORCH_DTYPE
        raise RuntimeError(f"expected scalar type {_TORCH_DTYPE[input.dtype.name]} but found "
                           f"{_TORCH_DTYPE[grid.dtype.name]}")
    cls = GridSampler2DBackward0 if k == 2 else GridSampler3DBackward0
    return cls.apply(input, grid, mode=mode, padding_mode=padding_mode,
                     align_corners=bool(align_corners))


OPS = [AffineGridGeneratorBackward0, GridSampler2DBackward0, GridSampler3DBackward0]
