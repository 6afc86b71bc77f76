"""Pooling: max, average, adaptive, Lp, fractional max pooling and max unpooling in 1, 2 and 3-D
(ops), the adaptive average pools in 1 and 2-D and the ``*_with_indices`` aliases."""
from __future__ import annotations

from ...ops.nn.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d,
    max_pool2d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from ...ops.nn.pooling3d import (
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    max_pool3d,
    max_pool3d_with_indices,
)

__all__ = ["adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d",
           "max_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "avg_pool3d", "max_pool3d",
           "max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices"]


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool1d(..., return_indices=True)``: (values, indices)."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """``max_pool2d(..., return_indices=True)``: (values, indices)."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool1d(..., return_indices=True)``: (values, indices)."""
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """``adaptive_max_pool2d(..., return_indices=True)``: (values, indices)."""
    return adaptive_max_pool2d(input, output_size, True)
