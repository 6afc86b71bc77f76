"""HalfCauchy distribution: |X|, X ~ Cauchy(0, scale)."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Tensor
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """HalfCauchy(scale): log p(x) = log 2 - log(pi scale (1 + (x / scale)^2)), x >= 0
    (-inf below 0). ``rsample`` is |loc-free Cauchy draw|."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        base_dist = Cauchy(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return gpugrad.full(tuple(self._extended_shape()), math.inf, dtype=self.scale.dtype,
                            device=self.scale.device)

    @property
    def mode(self):
        return gpugrad.zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def _as_tensor(self, value):
        if isinstance(value, Tensor):
            return value
        return gpugrad.tensor(value, dtype=self.scale.dtype, device=self.scale.device)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = self._as_tensor(value)
        lp = self.base_dist.log_prob(value) + math.log(2)
        return gpugrad.where(value >= 0, lp, -math.inf)

    def cdf(self, value):
        """F(x) = 2 F_Cauchy(x) - 1 = (2 / pi) atan(x / scale)"""
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """H = H(Cauchy(0, scale)) - log 2 = log(2 pi scale)"""
        return self.base_dist.entropy() - math.log(2)
