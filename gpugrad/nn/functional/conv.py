"""Convolutions in 1, 2 and 3-D and their transposes (ops of ``gpugrad.ops.conv`` and
``gpugrad.ops.conv3d``)."""
from __future__ import annotations

from ...ops.nn.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "conv3d", "conv_transpose3d"]
