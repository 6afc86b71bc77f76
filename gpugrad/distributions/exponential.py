"""Exponential distribution."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, is_number, standard_uniform

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """Exp(rate): log p(x) = log rate - rate x, x >= 0."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if is_number(rate) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Exponential, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Exponential, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return gpugrad.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        """x = e / rate, e = -log(1 - u) ~ Exp(1)"""
        shape = self._extended_shape(sample_shape)
        e = -(-standard_uniform(shape, self.rate.dtype, self.rate.device)).log1p()
        return e / self.rate

    @property
    def _natural_params(self):
        """theta = -rate"""
        return (-self.rate,)

    def _log_normalizer(self, x):
        """F = -log(-x)"""
        return -(-x).log()

    @property
    def _mean_carrier_measure(self):
        return 0

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """F(x) = 1 - exp(-rate x)"""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        """F^-1(p) = -log(1 - p) / rate"""
        return -(-value).log1p() / self.rate

    def entropy(self):
        """H = 1 - log rate"""
        return 1.0 - self.rate.log()
