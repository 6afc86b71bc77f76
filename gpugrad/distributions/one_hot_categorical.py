"""Categorical distribution over one-hot vectors."""
from __future__ import annotations

import gpugrad

from ..tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .utils import as_size

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


def _one_hot(indices, num_classes, dtype):
    """e_k for each index k, as ``dtype``."""
    classes = gpugrad.arange(num_classes, device=indices.device)
    return (indices.unsqueeze(-1) == classes).to(dtype)


class OneHotCategorical(Distribution):
    """Categorical(p) with samples coded as one-hot vectors of length K (event_shape (K,))."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape,
                                               validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return _one_hot(probs.argmax(dim=-1), probs.shape[-1], probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(as_size(sample_shape))
        return _one_hot(indices, self._categorical._num_events, self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = gpugrad.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through to probs:
    x = sample + (p - p.detach())."""
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
