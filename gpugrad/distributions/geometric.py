"""Geometric distribution: the number of failures before the first success."""
from __future__ import annotations

import gpugrad

from ..ops.nn.loss import binary_cross_entropy_with_logits
from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import (
    BinaryParams,
    broadcast_all,
    finfo,
    standard_uniform,
)

__all__ = ["Geometric"]


class Geometric(BinaryParams, Distribution):
    """Geometric(p): log p(k) = k log(1 - p) + log p, k = 0, 1, 2, ..."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = self._set_param(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0   # beyond unit_interval: p = 0 never succeeds
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{self.probs}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        self._expand_param(new, batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return gpugrad.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        """k = floor(log u / log(1 - p)), u ~ U(tiny, 1)"""
        shape = self._extended_shape(sample_shape)
        with gpugrad.no_grad():
            p = self.probs.detach()
            tiny = float(finfo(p.dtype).tiny)
            u = standard_uniform(shape, p.dtype, p.device).clamp(min=tiny)
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = gpugrad.where((probs == 1) & (value == 0), 0.0, probs)   # 0 log 0 = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        """H = (-p log p - (1 - p) log(1 - p)) / p"""
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
