"""Kumaraswamy distribution on [0, 1]: (1 - U^(1 / b))^(1 / a), U ~ Uniform(0, 1)."""
from __future__ import annotations

import math

import gpugrad

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """E[X^n] = b B(1 + n / a, b) = b Gamma(1 + n / a) Gamma(b) / Gamma(1 + n / a + b)"""
    arg1 = 1 + n / a
    return b * (arg1.lgamma() + b.lgamma() - (arg1 + b).lgamma()).exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(a = concentration1, b = concentration0):
    log p(x) = log a + log b + (a - 1) log x + (b - 1) log(1 - x^a); F(x) = 1 - (1 - x^a)^b.
    ``rsample`` is F^-1 of a uniform draw, through three transforms."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base_dist = Uniform(gpugrad.zeros_like(self.concentration0),
                            gpugrad.ones_like(self.concentration0), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """((a - 1) / (a b - 1))^(1 / a) where a >= 1 and b >= 1 (not both 1), else nan"""
        a, b = self.concentration1, self.concentration0
        ok = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        ratio = gpugrad.where(ok, (a - 1) / gpugrad.where(ok, a * b - 1, 1.0), 0.5)
        return gpugrad.where(ok, ratio.pow(a.reciprocal()), math.nan)

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moments(a, b, 2) - _moments(a, b, 1).pow(2)

    def entropy(self):
        """H = (1 - 1 / b) + (1 - 1 / a) H_b - log(a b), H_b = digamma(b + 1) + euler"""
        a, b = self.concentration1, self.concentration0
        harmonic_b = (b + 1).digamma() + euler_constant
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic_b - a.log() - b.log()
