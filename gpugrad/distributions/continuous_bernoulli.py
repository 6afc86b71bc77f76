"""Continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019)."""
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
    clamp_probs,
    is_number,
    lazy_property,
    logits_to_probs,
    standard_uniform,
)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryParams, ExponentialFamily):
    """CB(lam), lam = probs = sigmoid(logits): p(x) = C(lam) lam^x (1 - lam)^(1 - x) on [0, 1],
    C(lam) = 2 atanh(1 - 2 lam) / (1 - 2 lam) (C(1/2) = 2). Inside ``lims`` around 1/2 the
    closed forms cancel, and Taylor expansions in lam - 1/2 are used instead.
    ``rsample`` is the icdf of a uniform draw."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            scalar = is_number(probs)
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            scalar = is_number(logits)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        batch_shape = Size() if scalar else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        self._expand_param(new, batch_shape)
        ExponentialFamily.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def probs(self):   # clamped away from 0 and 1, where the normaliser is singular
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with the unstable region replaced by lims[0] (its branch is discarded)"""
        return gpugrad.where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """log C(lam) = log |log(1 - lam) - log lam| - log |1 - 2 lam|;
        log 2 + (4/3 + 104/45 d) d, d = (lam - 1/2)^2, near 1/2"""
        p = self._cut_probs()
        below = gpugrad.where(p <= 0.5, p, 0.0)
        above = gpugrad.where(p >= 0.5, p, 1.0)
        log_norm = ((-p).log1p() - p.log()).abs().log() - gpugrad.where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        d = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d) * d
        return gpugrad.where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        """lam / (2 lam - 1) + 1 / (log(1 - lam) - log lam); 1/2 + (1/3 + 16/45 d^2) d,
        d = lam - 1/2, near 1/2"""
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        d = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * d.pow(2)) * d
        return gpugrad.where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self):
        """lam (lam - 1) / (1 - 2 lam)^2 + 1 / (log(1 - lam) - log lam)^2;
        1/12 - (1/15 - 128/945 d) d, d = (lam - 1/2)^2, near 1/2"""
        p = self._cut_probs()
        var = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + ((-p).log1p() - p.log()).pow(-2)
        d = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * d) * d
        return gpugrad.where(self._outside_unstable_region(), var, taylor)

    def sample(self, sample_shape=Size()):
        with gpugrad.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(standard_uniform(shape, self.probs.dtype, self.probs.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        """F(x) = (lam^x (1 - lam)^(1 - x) + lam - 1) / (2 lam - 1); x near 1/2"""
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inner = gpugrad.where(self._outside_unstable_region(), cdfs, value)
        return gpugrad.where(value <= 0.0, 0.0, gpugrad.where(value >= 1.0, 1.0, inner))

    def icdf(self, value):
        """F^-1(u) = (log1p(-lam + u (2 lam - 1)) - log1p(-lam)) / (log lam - log1p(-lam))"""
        p = self._cut_probs()
        x = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return gpugrad.where(self._outside_unstable_region(), x, value)

    def entropy(self):
        """H = mean (log(1 - lam) - log lam) - log C(lam) - log(1 - lam)"""
        log_p0, log_p1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """F(eta) = log |expm1(eta)| - log |eta|; eta / 2 + eta^2 / 24 - eta^4 / 2880 near 0"""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = gpugrad.where(outside, x, self._lims[0] - 0.5)
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return gpugrad.where(outside, log_norm, taylor)
