"""Multinomial distribution: counts of total_count draws from a Categorical."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import as_size, broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Mult(n, p) over count vectors x (sum x = n):
    log p(x) = lgamma(n + 1) - sum_k lgamma(x_k + 1) + sum_k x_k log p_k.
    ``total_count`` is one int shared by the batch (only ``log_prob`` works without it)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(self.total_count, probs=new._categorical.probs,
                                 validate_args=False)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        """the counts of n Categorical draws per event"""
        sample_shape = as_size(sample_shape)
        with gpugrad.no_grad():
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            k = self._categorical._num_events
            classes = gpugrad.arange(k, device=draws.device)
            counts = (draws.unsqueeze(-1) == classes).to(self.probs.dtype).sum(0)
            return counts.reshape(tuple(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # NOTE: 0 log 0 = 0: a class of probability 0 that was never drawn adds nothing
        logits = gpugrad.where((value == 0) & (logits == -math.inf), 0.0, logits)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        """H = n H(p) - lgamma(n + 1) + sum_k E[lgamma(x_k + 1)], x_k ~ Binomial(n, p_k)"""
        n = float(self.total_count)
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        weights = (support + 1).lgamma()
        return term1 + (binomial_probs * weights).sum(0).sum(-1)
