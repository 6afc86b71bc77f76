"""Fisher-Snedecor (F) distribution."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, finfo, is_number

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F(d1, d2): log p(x) = lgamma((d1 + d2) / 2) - lgamma(d1 / 2) - lgamma(d2 / 2)
    + (d1 / 2) log(d1 / d2) + (d1 / 2 - 1) log x - ((d1 + d2) / 2) log(1 + d1 x / d2).
    ``rsample`` is a ratio of two Gamma draws, each reparameterised implicitly."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        batch_shape = Size() if is_number(df1) and is_number(df2) else self.df1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1, new.df2 = self.df1.expand(batch_shape), self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """d2 / (d2 - 2) for d2 > 2, else nan"""
        ok = self.df2 > 2
        return gpugrad.where(ok, self.df2 / (self.df2 - 2), math.nan)

    @property
    def mode(self):
        """((d1 - 2) / d1) (d2 / (d2 + 2)) for d1 > 2, else nan"""
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return gpugrad.where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self):
        """2 d2^2 (d1 + d2 - 2) / (d1 (d2 - 2)^2 (d2 - 4)) for d2 > 4, else nan"""
        d1, d2 = self.df1, self.df2
        var = 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))
        return gpugrad.where(d2 > 4, var, math.nan)

    def rsample(self, sample_shape=Size()):
        """x = (g1 / d1) / (g2 / d2) with g ~ Chi2, i.e. Gamma(d / 2, d) draws g1 / g2"""
        shape = self._extended_shape(sample_shape)
        tiny = float(finfo(self.df1.dtype).tiny)
        x1 = self._gamma1.rsample(sample_shape).reshape(tuple(shape))
        x2 = self._gamma2.rsample(sample_shape).reshape(tuple(shape)).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (h1 + h2).lgamma() - h1.lgamma() - h2.lgamma()
        t2 = h1 * ratio.log() + (h1 - 1) * value.log()
        t3 = (h1 + h2) * (ratio * value).log1p()
        return t1 + t2 - t3
