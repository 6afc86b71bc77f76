"""Laplace distribution."""
from __future__ import annotations

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo, is_number, standard_uniform

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace(loc, scale): log p(x) = -log(2 scale) - |x - loc| / scale."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        batch_shape = Size() if is_number(loc) and is_number(scale) else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc, new.scale = self.loc.expand(batch_shape), self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=Size()):
        """x = loc - scale sign(u) log(1 - |u|), u ~ U[eps - 1, 1)"""
        shape = self._extended_shape(sample_shape)
        eps = float(finfo(self.loc.dtype).eps)
        u = standard_uniform(shape, self.loc.dtype, self.loc.device) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        """F(x) = 1/2 - sign(x - loc) expm1(-|x - loc| / scale) / 2"""
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value):
        """F^-1(p) = loc - scale sign(p - 1/2) log(1 - 2 |p - 1/2|)"""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        """H = 1 + log(2 scale)"""
        return 1 + (2 * self.scale).log()
