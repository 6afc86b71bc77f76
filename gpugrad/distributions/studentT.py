"""Student's t distribution."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import standard_gamma_rsample
from .utils import broadcast_all, standard_normal

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc, scale): log p(x) = -(df + 1) / 2 log(1 + y^2 / df) - log scale
    - log(df pi) / 2 - lgamma(df / 2) + lgamma((df + 1) / 2), y = (x - loc) / scale.
    ``rsample`` is differentiable in loc, scale and (through the Chi2 draw) df."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return gpugrad.where(self.df <= 1, math.nan, self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """scale^2 df / (df - 2) for df > 2; inf for 1 < df <= 2; nan for df <= 1"""
        safe = gpugrad.where(self.df > 2, self.df, 3.0)
        var = self.scale.pow(2) * safe / (safe - 2)
        var = gpugrad.where(self.df <= 2, math.inf, var)
        return gpugrad.where(self.df <= 1, math.nan, var)

    def rsample(self, sample_shape=Size()):
        """x = loc + scale z sqrt(df / c), z ~ N(0, 1), c ~ Chi2(df) = 2 Gamma(df / 2, 1)"""
        shape = self._extended_shape(sample_shape)
        df = self.df.expand(shape)
        z = standard_normal(shape, df.dtype, df.device)
        chi2 = 2 * standard_gamma_rsample(0.5 * df)
        return self.loc + self.scale * z * (df / chi2).sqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self):
        """H = log scale + (df + 1) / 2 (digamma((df + 1) / 2) - digamma(df / 2))
        + log(df) / 2 + lbeta(df / 2, 1 / 2)"""
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma()
                                                     - (0.5 * df).digamma())
                + 0.5 * df.log() + lbeta)
