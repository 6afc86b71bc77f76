"""Normal (Gaussian) distribution."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size, Tensor
from .distribution import _LocScale
from .exp_family import ExponentialFamily
from .utils import erfinv, standard_normal

__all__ = ["Normal"]


class Normal(_LocScale, ExponentialFamily):
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

    @property
    def _natural_params(self):
        """theta = (loc / scale^2, -1 / (2 scale^2))"""
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        """F = -x^2 / (4 y) + log(pi / -y) / 2"""
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()

    @property
    def _mean_carrier_measure(self):
        return 0

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
