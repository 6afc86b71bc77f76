"""Gumbel (type-I extreme value) distribution."""
from __future__ import annotations

import math

from ..tensor import Size
from .distribution import _LocScale
from .utils import euler_constant, finfo, standard_uniform

__all__ = ["Gumbel"]


class Gumbel(_LocScale):
    """Gumbel(loc, scale): log p(x) = -log scale - z - exp(-z), z = (x - loc) / scale."""

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        """x = loc - scale log(-log u), u ~ U[tiny, 1 - eps]"""
        shape = self._extended_shape(sample_shape)
        fi = finfo(self.loc.dtype)
        u = standard_uniform(shape, self.loc.dtype, self.loc.device)
        u = u.clamp(min=float(fi.tiny), max=1 - float(fi.eps))
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(self.scale.log() + z + (-z).exp())

    def cdf(self, value):
        """F(x) = exp(-exp(-z))"""
        if self._validate_args:
            self._validate_sample(value)
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        """F^-1(p) = loc - scale log(-log p)"""
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        """H = log scale + 1 + euler"""
        return self.scale.log() + (1 + euler_constant)
