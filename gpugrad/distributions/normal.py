"""Normal (Gaussian) distribution."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size, Tensor
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, erfinv, is_number, standard_normal

__all__ = ["Normal"]


class Normal(Distribution):
    """N(loc, scale^2): log p(x) = -(x - loc)^2 / (2 scale^2) - log scale - log sqrt(2 pi)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if is_number(loc) and is_number(scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Normal, _instance)
        batch_shape = Size(batch_shape)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        super(Normal, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def rsample(self, sample_shape=Size()):
        """x = loc + eps scale, eps ~ N(0, 1)"""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value):
        """F(x) = (1 + erf((x - loc) / (scale sqrt 2))) / 2"""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + gpugrad.erf((value - self.loc) * self.scale.reciprocal()
                                      / math.sqrt(2)))

    def icdf(self, value):
        """F^-1(p) = loc + scale sqrt(2) erfinv(2p - 1)"""
        if not isinstance(value, Tensor):
            value = gpugrad.tensor(value, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        """H = 1/2 + log(2 pi) / 2 + log scale"""
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
