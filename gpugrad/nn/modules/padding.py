"""Padding layers: ``ZeroPad``, ``ConstantPad``, ``ReflectionPad``, ``ReplicationPad`` and
``CircularPad`` over the last 1, 2 or 3 dimensions, each a call of ``F.pad``."""
from __future__ import annotations

from ...ops.nn.padding import pad
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


class _PadNd(Module):
    """``padding``: an int for every side, or (left, right[, top, bottom[, front, back]])."""
    _dims = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = (padding,) * (2 * self._dims) if isinstance(padding, int) else \
            tuple(padding)

    def forward(self, input):
        return pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with ``value``."""
    _dims, _mode = 1, "constant"

class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions with ``value``."""
    _dims, _mode = 2, "constant"

class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions with ``value``."""
    _dims, _mode = 3, "constant"

class ReflectionPad1d(_PadNd):
    """Pads the last dimension with its mirror image (the edge not repeated)."""
    _dims, _mode = 1, "reflect"

class ReflectionPad2d(_PadNd):
    """Pads the last two dimensions with its mirror image (the edge not repeated)."""
    _dims, _mode = 2, "reflect"

class ReflectionPad3d(_PadNd):
    """Pads the last three dimensions with its mirror image (the edge not repeated)."""
    _dims, _mode = 3, "reflect"

class ReplicationPad1d(_PadNd):
    """Pads the last dimension with copies of its edge values."""
    _dims, _mode = 1, "replicate"

class ReplicationPad2d(_PadNd):
    """Pads the last two dimensions with copies of its edge values."""
    _dims, _mode = 2, "replicate"

class ReplicationPad3d(_PadNd):
    """Pads the last three dimensions with copies of its edge values."""
    _dims, _mode = 3, "replicate"

class CircularPad1d(_PadNd):
    """Pads the last dimension periodically (wrapped around)."""
    _dims, _mode = 1, "circular"

class CircularPad2d(_PadNd):
    """Pads the last two dimensions periodically (wrapped around)."""
    _dims, _mode = 2, "circular"

class CircularPad3d(_PadNd):
    """Pads the last three dimensions periodically (wrapped around)."""
    _dims, _mode = 3, "circular"

class ZeroPad1d(ConstantPad1d):
    """Pads the last dimension with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"

class ZeroPad2d(ConstantPad2d):
    """Pads the last two dimensions with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"

class ZeroPad3d(ConstantPad3d):
    """Pads the last three dimensions with zeros."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
