"""Laplace distribution."""
from __future__ import annotations

from ..tensor import Size
from .distribution import _LocScale
from .utils import finfo, standard_uniform

__all__ = ["Laplace"]


class Laplace(_LocScale):
    """Laplace(loc, scale): log p(x) = -log(2 scale) - |x - loc| / scale."""

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
