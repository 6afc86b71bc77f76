"""Generalized Pareto distribution (loc, scale, concentration)."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number, standard_uniform

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GPD(loc m, scale s, concentration c), z = (x - m) / s:
    log p(x) = -log s - (1 / c + 1) log(1 + c z) (-log s - z at c = 0);
    survival S(x) = (1 + c z)^(-1 / c) (exp(-z) at c = 0). Support [m, m - s / c] for c < 0,
    [m, inf) otherwise. ``rsample`` is the icdf of a uniform draw."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = is_number(loc) and is_number(scale) and is_number(concentration)
        batch_shape = Size() if scalar else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _safe_conc(self):
        """(c == 0 up to isclose, c with 1 where it is 0): keeps 1 / c finite in both branches"""
        c = self.concentration
        zero = c.isclose(gpugrad.zeros_like(c))
        return zero, gpugrad.where(zero, 1.0, c)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(standard_uniform(shape, self.loc.dtype, self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_conc()
        y = 1 / c + 1
        nonzero = gpugrad.where(y == 0, y, y * (c * z).log1p())
        return -self.scale.log() - gpugrad.where(zero, z, nonzero)

    def log_survival_function(self, value):
        """log S(x) = -log(1 + c z) / c (-z at c = 0)"""
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, c = self._safe_conc()
        return gpugrad.where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        """F^-1(u) = m + s ((1 - u)^(-c) - 1) / c (m - s log(1 - u) at c = 0)"""
        zero, c = self._safe_conc()
        log1mu = (-value).log1p()
        nonzero = self.loc + self.scale / c * (-c * log1mu).expm1()
        return gpugrad.where(zero, self.loc - self.scale * log1mu, nonzero)

    @property
    def mean(self):
        """m + s / (1 - c) for c < 1, else nan"""
        valid = self.concentration < 1
        c = gpugrad.where(valid, self.concentration, 0.5)
        return gpugrad.where(valid, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        """s^2 / ((1 - c)^2 (1 - 2 c)) for c < 1/2, else nan"""
        valid = self.concentration < 0.5
        c = gpugrad.where(valid, self.concentration, 0.25)
        return gpugrad.where(valid, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)),
                             math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        """H = log s + c + 1"""
        return (self.scale.log() + self.concentration + 1).expand(tuple(self._batch_shape))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = gpugrad.where(self.concentration < 0, self.loc - self.scale / self.concentration,
                              math.inf)
        return constraints.interval(self.loc, upper)
