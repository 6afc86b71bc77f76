"""Poisson distribution."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, is_number, standard_uniform

__all__ = ["Poisson"]

_SMALL = 10.0   # below this rate: sequential inversion; from it: transformed rejection


def _inversion(lam):
    """k = min{k : u <= F(k)}, summing the pmf term by term (rates below _SMALL)."""
    u = standard_uniform(tuple(lam.shape), lam.dtype, lam.device)
    k = gpugrad.zeros_like(lam)
    p = (-lam).exp()
    cdf = p
    active = u > cdf
    while bool(active.any()):
        k = k + active.to(lam.dtype)
        p = gpugrad.where(active, p * lam / k.clamp(min=1), p)
        cdf = gpugrad.where(active, cdf + p, cdf)
        active = active & (u > cdf) & (p > 0)
    return k


def _ptrs(lam):
    """Hormann's transformed rejection with squeeze (PTRS, 1993), valid for rates >= 10."""
    shape, dtype, device = tuple(lam.shape), lam.dtype, lam.device
    slam, loglam = lam.sqrt(), lam.log()
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    log_invalpha = (1.1239 + 1.1328 / (b - 3.4)).log()
    vr = 0.9277 - 3.6224 / (b - 2)
    out = gpugrad.where(lam.isfinite(), 0.0, lam)
    done = ~lam.isfinite()   # nan / inf rates draw themselves (no endless loop)
    while not bool(done.all()):
        u = standard_uniform(shape, dtype, device) - 0.5
        v = standard_uniform(shape, dtype, device)
        us = 0.5 - u.abs()
        k = ((2 * a / us + b) * u + lam + 0.43).floor()
        quick = (us >= 0.07) & (v <= vr)
        bad = (k < 0) | ((us < 0.013) & (v > us))
        kk = k.clamp(min=0)
        test = (v.log() + log_invalpha - (a / (us * us) + b).log()
                <= -lam + kk * loglam - (kk + 1).lgamma())
        ok = quick | (~bad & test)
        out = gpugrad.where(ok & ~done, k, out)
        done = done | ok
    return out


def poisson_sample(rate):
    """Poisson(rate) draws of rate's shape, outside the graph, computed in float64."""
    with gpugrad.no_grad():
        lam = rate.detach().double()
        small = lam < _SMALL
        k = gpugrad.where(small, _inversion(gpugrad.where(small, lam, 0.0)),
                          _ptrs(gpugrad.where(small, _SMALL, lam)))
        return k.to(rate.dtype)


class Poisson(ExponentialFamily):
    """Poisson(rate): log p(k) = k log rate - rate - lgamma(k + 1), k = 0, 1, 2, ..."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if is_number(rate) else self.rate.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return poisson_sample(self.rate.detach().expand(shape))

    @property
    def _natural_params(self):
        """theta = log rate (carrier -lgamma(k + 1), whose mean has no closed form)"""
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        """F = exp(x)"""
        return x.exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return gpugrad.xlogy(value, rate) - rate - (value + 1).lgamma()


