"""Dirichlet distribution over the probability simplex."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import standard_gamma_rsample

__all__ = ["Dirichlet"]


def _argmax_one_hot(x):
    idx = x.argmax(-1).unsqueeze(-1)
    k = gpugrad.arange(x.shape[-1], device=x.device)
    return (k == idx).to(x.dtype)


class Dirichlet(ExponentialFamily):
    """Dir(a): log p(x) = sum (a_k - 1) log x_k + lgamma(sum a_k) - sum lgamma(a_k).
    ``rsample`` normalises Gamma draws, each reparameterised implicitly."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape + self.event_shape)
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        """x = g / sum g, g_k ~ Gamma(a_k, 1)"""
        shape = self._extended_shape(sample_shape)
        g = standard_gamma_rsample(self.concentration.expand(shape))
        return g / g.sum(-1, keepdim=True)

    @property
    def _natural_params(self):
        """theta = a against t(x) = log x, carrier k(x) = -sum log x_k"""
        return (self.concentration,)

    def _log_normalizer(self, x):
        """F = sum lgamma(x_k) - lgamma(sum x_k)"""
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()

    @property
    def _mean_carrier_measure(self):
        """E[-sum log x_k] = K digamma(a_0) - sum digamma(a_k)"""
        a = self.concentration
        return a.shape[-1] * a.sum(-1).digamma() - a.digamma().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (gpugrad.xlogy(a - 1.0, value).sum(-1) + a.sum(-1).lgamma()
                - a.lgamma().sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        """(a - 1)_+ normalised; the one-hot of the largest a where every a_k < 1"""
        mm = (self.concentration - 1).clamp(min=0.0)
        mode = mm / mm.sum(-1, keepdim=True)
        corner = (self.concentration < 1).all(-1, keepdim=True)
        return gpugrad.where(corner, _argmax_one_hot(self.concentration), mode)

    @property
    def variance(self):
        a0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (a0 - self.concentration) / (a0.pow(2) * (a0 + 1))

    def entropy(self):
        """H = sum lgamma(a_k) - lgamma(a0) - (k - a0) digamma(a0) - sum (a_k - 1) digamma(a_k)"""
        k = self.concentration.shape[-1]
        a = self.concentration
        a0 = a.sum(-1)
        return (a.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma()
                - ((a - 1.0) * a.digamma()).sum(-1))
