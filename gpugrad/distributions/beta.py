"""Beta distribution on [0, 1]."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import standard_gamma_rsample
from .utils import broadcast_all, is_number

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """Beta(a = concentration1, b = concentration0):
    log p(x) = (a - 1) log x + (b - 1) log(1 - x) - lgamma(a) - lgamma(b) + lgamma(a + b).
    ``rsample`` goes through two Gamma draws, each reparameterised implicitly."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        scalar = is_number(concentration1) and is_number(concentration0)
        batch_shape = Size() if scalar else self.concentration1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Beta, _instance)
        batch_shape = Size(batch_shape)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        """(a - 1)_+ / ((a - 1)_+ + (b - 1)_+); 1 where a >= b and both are below 1, else 0"""
        a, b = self.concentration1, self.concentration0
        ma, mb = (a - 1).clamp(min=0.0), (b - 1).clamp(min=0.0)
        corner = (a < 1) & (b < 1)
        return gpugrad.where(corner, (a >= b).to(a.dtype), ma / (ma + mb))

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=Size()):
        """x = g_a / (g_a + g_b), g ~ Gamma(., 1)"""
        shape = self._extended_shape(sample_shape)
        ga = standard_gamma_rsample(self.concentration1.expand(shape))
        gb = standard_gamma_rsample(self.concentration0.expand(shape))
        return ga / (ga + gb)

    @property
    def _natural_params(self):
        """theta = (a, b) against t(x) = (log x, log(1 - x)), carrier k(x) = -log x(1 - x)"""
        return self.concentration1, self.concentration0

    def _log_normalizer(self, x, y):
        """F = lgamma(x) + lgamma(y) - lgamma(x + y)"""
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

    @property
    def _mean_carrier_measure(self):
        """E[-log x - log(1 - x)] = 2 digamma(a + b) - digamma(a) - digamma(b)"""
        a, b = self.concentration1, self.concentration0
        return 2 * (a + b).digamma() - a.digamma() - b.digamma()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (gpugrad.xlogy(a - 1.0, value) + gpugrad.xlogy(b - 1.0, 1 - value)
                + (a + b).lgamma() - a.lgamma() - b.lgamma())

    def entropy(self):
        """H = lbeta(a, b) - (a - 1) digamma(a) - (b - 1) digamma(b) + (a + b - 2) digamma(a + b)"""
        a, b = self.concentration1, self.concentration0
        lbeta = a.lgamma() + b.lgamma() - (a + b).lgamma()
        return (lbeta - (a - 1) * a.digamma() - (b - 1) * b.digamma()
                + (a + b - 2) * (a + b).digamma())
