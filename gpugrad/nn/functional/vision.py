"""Functions on images and feature maps: padding, resampling (``interpolate`` and its deprecated
``upsample*`` aliases), spatial transformers (``affine_grid``, ``grid_sample``), pixel and
channel shuffles, ``unfold`` and ``fold``."""
from __future__ import annotations

import warnings

from ...ops.nn.fold import fold, unfold
from ...ops.nn.grid_sample import affine_grid, grid_sample
from ...ops.nn.padding import pad
from ...ops.nn.pixelshuffle import pixel_shuffle, pixel_unshuffle
from ...ops.nn.upsampling import interpolate

__all__ = ["pad", "fold", "interpolate", "pixel_shuffle", "pixel_unshuffle", "unfold",
           "affine_grid", "grid_sample", "upsample", "upsample_nearest", "upsample_bilinear",
           "channel_shuffle"]


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate`` (warns, as PyTorch)."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='nearest')``."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def channel_shuffle(input, groups):
    """Regroup the C channels as (groups, C / groups), transpose to (C / groups, groups)."""
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    n, c, rest = input.shape[0], input.shape[1], tuple(input.shape[2:])
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    y = input.reshape((n, groups, c // groups) + rest).transpose(1, 2)
    return y.reshape(input.shape)
