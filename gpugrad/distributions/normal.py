"""Normal (Gaussian) distribution."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size, Tensor
from .distribution import _LocScale
from .utils import erfinv, standard_normal

__all__ = ["Normal"]


class Normal(_LocScale):
    """N(loc, scale^2): log p(x) = -(x - loc)^2 / (2 scale^2) - log scale - log sqrt(2 pi)."""

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        """x = loc + eps scale, eps ~ N(0, 1)"""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        """F(x) = (1 + erf((x - loc) / (scale sqrt 2))) / 2"""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + gpugrad.erf((value - self.loc) * self.scale.reciprocal()
                                      / math.sqrt(2)))

    def icdf(self, value):
        """F^-1(p) = loc + scale sqrt(2) erfinv(2p - 1)"""
        if not isinstance(value, Tensor):
            value = gpugrad.tensor(value, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """H = 1/2 + log(2 pi) / 2 + log scale"""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
