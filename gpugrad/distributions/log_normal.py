"""LogNormal distribution: exp of a Normal."""
from __future__ import annotations

from ..tensor import Size
from . import constraints
from .distribution import _LocScale
from .normal import Normal

__all__ = ["LogNormal"]


class LogNormal(_LocScale):
    """X = exp(Y), Y ~ N(loc, scale^2): log p(x) = log N(log x; loc, scale) - log x."""
    support = constraints.positive

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=Size()):
        return self._base().rsample(sample_shape).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return self._base().log_prob(y) - y

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._base().cdf(value.log())

    def icdf(self, value):
        return self._base().icdf(value).exp()

    def entropy(self):
        """H = H(Normal) + loc"""
        return self._base().entropy() + self.loc

    def _base(self):
        return Normal(self.loc, self.scale, validate_args=False)
