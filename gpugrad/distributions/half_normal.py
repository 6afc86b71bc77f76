"""HalfNormal distribution: |X|, X ~ N(0, scale^2)."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .normal import Normal
from .utils import broadcast_all, is_number, standard_normal

__all__ = ["HalfNormal"]


class HalfNormal(Distribution):
    """HalfNormal(scale): log p(x) = log 2 + log N(x; 0, scale), x >= 0 (-inf below 0)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        (self.scale,) = broadcast_all(scale)
        batch_shape = Size() if is_number(scale) else self.scale.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        batch_shape = Size(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _base(self):
        return Normal(0.0 * self.scale, self.scale, validate_args=False)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return gpugrad.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape=Size()):
        """x = scale |eps|, eps ~ N(0, 1)"""
        shape = self._extended_shape(sample_shape)
        return standard_normal(shape, self.scale.dtype, self.scale.device).abs() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lp = self._base().log_prob(value) + math.log(2)
        return gpugrad.where(value >= 0, lp, -math.inf)

    def cdf(self, value):
        """F(x) = 2 Phi(x / scale) - 1"""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self._base().cdf(value) - 1

    def icdf(self, prob):
        return self._base().icdf((prob + 1) / 2)

    def entropy(self):
        """H = H(N(0, scale)) - log 2"""
        return self._base().entropy() - math.log(2)
