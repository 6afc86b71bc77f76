"""Weibull distribution: scale E^(1 / concentration), E ~ Exponential(1)."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """Weibull(scale s, concentration k):
    log p(x) = log(k / s) + (k - 1) log(x / s) - (x / s)^k, x > 0.
    ``rsample`` pushes an Exponential(1) draw through y = s e^(1 / k)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(gpugrad.ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """s Gamma(1 + 1 / k)"""
        return self.scale * (1 + self.concentration_reciprocal).lgamma().exp()

    @property
    def mode(self):
        """s ((k - 1) / k)^(1 / k) for k > 1, else 0"""
        k = self.concentration
        inner = ((k - 1) / k).clamp(min=0)
        return self.scale * gpugrad.where(k > 1, inner, 0.0).pow(self.concentration_reciprocal)

    @property
    def variance(self):
        """s^2 (Gamma(1 + 2 / k) - Gamma(1 + 1 / k)^2)"""
        r = self.concentration_reciprocal
        return self.scale.pow(2) * ((1 + 2 * r).lgamma().exp() - (1 + r).lgamma().exp().pow(2))

    def entropy(self):
        """H = euler (1 - 1 / k) + log(s / k) + 1"""
        return (euler_constant * (1 - self.concentration_reciprocal)
                + (self.scale * self.concentration_reciprocal).log() + 1)
