"""Pareto distribution: scale exp(E), E ~ Exponential(alpha)."""
from __future__ import annotations

from ..tensor import Size
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """Pareto(scale s, alpha a): log p(x) = log a + a log s - (a + 1) log x, x >= s.
    ``rsample`` pushes an Exponential(a) draw through y = s exp(e)."""
    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base_dist = Exponential(self.alpha, validate_args=validate_args)
        transforms = [ExpTransform(), AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(Size(batch_shape))
        new.alpha = self.alpha.expand(Size(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        """a s / (a - 1); inf for a <= 1"""
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        """s^2 a / ((a - 1)^2 (a - 2)); inf for a <= 2"""
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        """H = log(s / a) + 1 / a + 1"""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
