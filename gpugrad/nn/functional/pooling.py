"""Pooling: max, average, adaptive, Lp, fractional max pooling and max unpooling in 1, 2 and 3-D
(ops), the adaptive average pools in 1 and 2-D and the ``*_with_indices`` aliases."""
from __future__ import annotations

import numpy as np

from ... import _creation
from ...ops.fractional import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ...ops.linalg import matmul
from ...ops.pool import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from ...ops.pool3d import (
    adaptive_avg_pool3d,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool3d,
    max_pool3d,
    max_pool3d_with_indices,
)
from ...ops.unpool import lp_pool1d, lp_pool2d, lp_pool3d, max_unpool1d, max_unpool2d, max_unpool3d

__all__ = ["adaptive_max_pool1d", "adaptive_max_pool2d", "avg_pool1d", "avg_pool2d", "max_pool1d",
           "max_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "avg_pool3d", "max_pool3d",
           "max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices"]


def _pool_matrix(size, out, like):
    """(out, size): row i averages PyTorch's adaptive bin [floor(i size / out),
    ceil((i + 1) size / out))."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -(-(i + 1) * size // out)
        m[i, start:end] = 1.0 / (end - start)
    return _creation.tensor(m, dtype=like.dtype, device=like.device)


def adaptive_avg_pool1d(input, output_size):
    """Average over ``output_size`` adaptive bins of the last dimension of (N, C, L) or (C, L)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    return matmul(input, _pool_matrix(input.shape[-1], output_size, input).mT)


def adaptive_avg_pool2d(input, output_size):
    """Average over adaptive bins of the last two dimensions of (N, C, H, W) or (C, H, W);
    ``None`` in ``output_size`` keeps that dimension's size."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    size = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    h, w = input.shape[-2:]
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    # the bins are rectangles, so the average is P_h @ x @ P_w^T
    return matmul(matmul(_pool_matrix(h, oh, input), input), _pool_matrix(w, ow, input).mT)


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
