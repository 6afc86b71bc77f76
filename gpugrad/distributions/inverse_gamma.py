"""InverseGamma distribution: 1 / X, X ~ Gamma(concentration, rate)."""
from __future__ import annotations

import math

import gpugrad

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """InverseGamma(concentration a, rate b):
    log p(x) = a log b - lgamma(a) - (a + 1) log x - b / x, x > 0.
    ``rsample`` inverts a Gamma(a, b) draw (reparameterised implicitly)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -gpugrad.ones((), dtype=base_dist.rate.dtype, device=base_dist.rate.device)
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        """b / (a - 1) for a > 1, else inf"""
        a = self.concentration
        return gpugrad.where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """b^2 / ((a - 1)^2 (a - 2)) for a > 2, else inf"""
        a = self.concentration
        return gpugrad.where(a > 2, self.rate.pow(2) / ((a - 1).pow(2) * (a - 2)), math.inf)

    def cdf(self, value):
        """F(x) = Q(a, b / x), the regularised upper incomplete gamma function"""
        if self._validate_args:
            self._validate_sample(value)
        return gpugrad.special.gammaincc(self.concentration, self.rate / value)

    def entropy(self):
        """H = a + log b + lgamma(a) - (1 + a) digamma(a)"""
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
