"""Cauchy distribution."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from .distribution import _LocScale
from .utils import standard_uniform

__all__ = ["Cauchy"]


class Cauchy(_LocScale):
    """Cauchy(loc, scale): log p(x) = -log(pi scale) - log(1 + ((x - loc) / scale)^2)."""

    @property
    def mean(self):
        return gpugrad.full_like(self.loc, math.nan)

    @property
    def variance(self):
        return gpugrad.full_like(self.loc, math.inf)

    def rsample(self, sample_shape=Size()):
        """x = loc + scale tan(pi (u - 1/2)), u ~ U[0, 1)"""
        shape = self._extended_shape(sample_shape)
        u = standard_uniform(shape, self.loc.dtype, self.loc.device)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        """F(x) = atan((x - loc) / scale) / pi + 1/2"""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        """F^-1(p) = loc + scale tan(pi (p - 1/2))"""
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        """H = log(4 pi scale)"""
        return math.log(4 * math.pi) + self.scale.log()
