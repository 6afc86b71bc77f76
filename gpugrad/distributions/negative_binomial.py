"""Negative binomial distribution (total_count, probs or logits)."""
from __future__ import annotations

import gpugrad

from ..nn.functional import logsigmoid
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import BinaryParams, broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParams, Distribution):
    """NB(r = total_count, p): the number of successes before r failures, each trial a success
    with probability p = sigmoid(logits):
    log p(k) = lgamma(k + r) - lgamma(k + 1) - lgamma(r) + r log(1 - p) + k log p."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            self._param = self.logits
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_param(new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        """r p / (1 - p)"""
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        """floor((r - 1) p / (1 - p)), at least 0"""
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        """r p / (1 - p)^2"""
        return self.mean / gpugrad.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(self.total_count, self.logits.neg().exp(), validate_args=False)

    def sample(self, sample_shape=Size()):
        """k ~ Poisson(lam), lam ~ Gamma(r, rate = (1 - p) / p)"""
        with gpugrad.no_grad():
            return gpugrad.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        log_unnormalized = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -(r + value).lgamma() + (1.0 + value).lgamma() + r.lgamma()
        # NOTE: r + k = 0 only at r = k = 0, where the pmf is 1 (lgamma has poles there)
        log_normalization = gpugrad.where(r + value == 0, 0.0, log_normalization)
        return log_unnormalized - log_normalization
