"""Bernoulli distribution (probs or logits)."""
from __future__ import annotations

import math

import gpugrad

from ..ops.nn.loss import binary_cross_entropy_with_logits
from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    BinaryParams,
    broadcast_all,
)

__all__ = ["Bernoulli"]


class Bernoulli(BinaryParams, ExponentialFamily):
    """Bernoulli(p), p = sigmoid(logits): log p(x) = x log p + (1 - x) log(1 - p), x in {0, 1}."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._set_param(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        self._expand_param(new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where p > 1/2, 0 where p < 1/2, nan at a tie"""
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return gpugrad.where(self.probs == 0.5, math.nan, mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with gpugrad.no_grad():
            return gpugrad.bernoulli(self.probs.expand(shape))

    @property
    def _natural_params(self):
        """theta = logit(p)"""
        return (self.logits,)

    def _log_normalizer(self, x):
        """F = log(1 + exp(x))"""
        return gpugrad.nn.functional.softplus(x)

    @property
    def _mean_carrier_measure(self):
        return 0

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        """H = -p log p - (1 - p) log(1 - p)"""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = gpugrad.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
