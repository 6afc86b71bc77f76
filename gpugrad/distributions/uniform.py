"""Uniform distribution on [low, high)."""
from __future__ import annotations

import math

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number, standard_uniform

__all__ = ["Uniform"]


class Uniform(Distribution):
    """U[low, high): log p(x) = -log(high - low) on [low, high), -inf outside."""
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        batch_shape = Size() if is_number(low) and is_number(high) else self.low.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Uniform, _instance)
        batch_shape = Size(batch_shape)
        new.low, new.high = self.low.expand(batch_shape), self.high.expand(batch_shape)
        super(Uniform, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=Size()):
        """x = low + u (high - low), u ~ U[0, 1)"""
        shape = self._extended_shape(sample_shape)
        u = standard_uniform(shape, self.low.dtype, self.low.device)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).to(self.low.dtype)
        ub = self.high.gt(value).to(self.low.dtype)
        return (lb * ub).log() - (self.high - self.low).log()

    def cdf(self, value):
        """F(x) = clamp((x - low) / (high - low), 0, 1)"""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        """F^-1(p) = low + p (high - low)"""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """H = log(high - low)"""
        return (self.high - self.low).log()
