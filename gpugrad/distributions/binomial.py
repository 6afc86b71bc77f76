"""Binomial distribution (probs or logits)."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import BinaryParams, broadcast_all

__all__ = ["Binomial"]

_CHUNK = 256   # Bernoulli trials drawn per pass when sampling


def _clamp_by_zero(x):
    """max(x, 0) with gradient 1/2 at 0 (PyTorch's choice)"""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryParams, Distribution):
    """Binomial(n, p): log p(k) = log C(n, k) + k log p + (n - k) log(1 - p), k = 0..n."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
            param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
            param = self.logits
        self._param = param
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        self._expand_param(new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        """A sum of n Bernoulli(p) trials, drawn _CHUNK trials at a time (exact; O(n) work)."""
        shape = tuple(self._extended_shape(sample_shape))
        with gpugrad.no_grad():
            p = self.probs.detach().expand(shape).unsqueeze(-1)
            n = self.total_count.detach().expand(shape).unsqueeze(-1)
            out = gpugrad.zeros(shape, dtype=p.dtype, device=p.device)
            top = int(self.total_count.max().item()) if self.total_count.numel() else 0
            for start in range(0, top, _CHUNK):
                width = min(_CHUNK, top - start)
                trial = gpugrad.arange(start, start + width, dtype=p.dtype, device=p.device)
                u = gpugrad.rand(shape + (width,), dtype=p.dtype, device=p.device)
                out = out + ((u < p) & (trial < n)).to(p.dtype).sum(-1)
            return out

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = (n + 1).lgamma()
        log_factorial_k = (value + 1).lgamma()
        log_factorial_nmk = (n - value + 1).lgamma()
        # n log(1 + exp(logits)), stable: n max(logits, 0) + n log1p(exp(-|logits|))
        normalize_term = (n * _clamp_by_zero(self.logits)
                          + n * (-self.logits.abs()).exp().log1p() - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        """-sum_k p(k) log p(k) over the support (a single total_count only)"""
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max().item())
        if not self.total_count.min().item() == total_count:
            raise NotImplementedError(
                "Inhomogeneous total count not supported by `enumerate_support`.")
        values = gpugrad.arange(1 + total_count, dtype=self._param.dtype,
                                device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
