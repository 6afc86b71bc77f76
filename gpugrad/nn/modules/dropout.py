"""Dropout layers: elementwise, per channel (1-, 2- and 3-D) and alpha dropout."""
from __future__ import annotations

from .. import functional as F
from ..functional.dropout import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from .module import Module

__all__ = ["Dropout1d", "Dropout2d", "Dropout", "AlphaDropout", "FeatureAlphaDropout", "Dropout3d"]


class _DropoutNd(Module):
    _fn = staticmethod(dropout2d)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) / (C, L) input in training mode."""
    _fn = staticmethod(dropout1d)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) input in training mode."""
    _fn = staticmethod(dropout2d)


class Dropout(Module):
    """Zeroes each element with probability ``p`` in training mode and scales the rest by
    1 / (1 - p); the identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class AlphaDropout(_DropoutNd):
    """Alpha dropout in training mode, the identity in eval mode."""
    _fn = staticmethod(alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels in training mode."""
    _fn = staticmethod(feature_alpha_dropout)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) input in training mode."""
    _fn = staticmethod(dropout3d)
