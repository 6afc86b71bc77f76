"""Gamma and Chi2 distributions, with Marsaglia-Tsang draws built from gpugrad's generator and
implicitly reparameterised gradients (``rsample``)."""
from __future__ import annotations

import gpugrad

from ..ops._op import Op
from ..tensor import Size
from . import constraints
from ._gamma_grad import standard_gamma_grad
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .utils import broadcast_all, finfo, is_number, standard_normal, standard_uniform

__all__ = ["Chi2", "Gamma"]


def standard_gamma(alpha):
    """Gamma(alpha, 1) draws of alpha's shape, outside the graph (Marsaglia and Tsang, 2000):
    for a >= 1, x = d v with d = a - 1/3, v = (1 + c z)^3, c = 1 / sqrt(9 d), z ~ N(0, 1),
    accepted when log u < z^2 / 2 + d - d v + d log v; for a < 1, a draw for a + 1 times
    u^(1 / a). Values are clamped to the dtype's smallest normal number."""
    with gpugrad.no_grad():
        a = alpha.detach()
        shape, dtype, device = tuple(a.shape), a.dtype, a.device
        boost = a < 1
        d = gpugrad.where(boost, a + 1, a) - 1 / 3
        c = (9 * d).rsqrt()
        out = gpugrad.zeros_like(a)
        fixed = done = ~a.isfinite()   # nan / inf parameters draw themselves: no endless loop
        while not bool(done.all()):
            z = standard_normal(shape, dtype, device)
            v = (1 + c * z) ** 3
            u = standard_uniform(shape, dtype, device)
            ok = (v > 0) & (u.log() < 0.5 * z * z + d - d * v
                            + d * gpugrad.where(v > 0, v, 1.0).log())
            out = gpugrad.where(ok & ~done, d * v, out)
            done = done | ok
        u = standard_uniform(shape, dtype, device)
        out = gpugrad.where(boost, out * (u.log() / a).exp(), out)
        out = gpugrad.where(fixed, a, out)
        return out.clamp(min=float(finfo(dtype).tiny))


class StandardGammaBackward0(Op):
    """y = a Gamma(a, 1) draw (made outside the graph, passed in); dy/da = the implicit
    reparameterisation gradient at y's quantile (see _gamma_grad.py)"""
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, a, draw=None):
        return draw.copy()

    def backward(self, F, gy, a, y):
        if not F.fast:
            raise NotImplementedError("double backward through a Gamma draw (rsample of Gamma, "
                                      "Chi2, Beta, Dirichlet or StudentT) is not supported by "
                                      "gpugrad")
        return gy * standard_gamma_grad(F.xp, a, y)


def standard_gamma_rsample(alpha):
    """Gamma(alpha, 1) draws that carry d draw / d alpha (implicit reparameterisation)."""
    draw = standard_gamma(alpha)
    return StandardGammaBackward0.apply(alpha, draw=draw._data)


class Gamma(ExponentialFamily):
    """Gamma(concentration a, rate b): log p(x) = a log b + (a - 1) log x - b x - lgamma(a).
    ``rsample`` differentiates a draw in a implicitly: at fixed quantile u = P(a, x),
    dx/da = -(dP/da) / p(x)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = is_number(concentration) and is_number(rate)
        batch_shape = Size() if scalar else self.concentration.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        """x = g / rate, g ~ Gamma(concentration, 1)"""
        shape = self._extended_shape(sample_shape)
        g = standard_gamma_rsample(self.concentration.expand(shape))
        return (g / self.rate.expand(shape)).clamp(min=float(finfo(g.dtype).tiny))

    @property
    def _natural_params(self):
        """theta = (a - 1, -b)"""
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        """F = lgamma(x + 1) - (x + 1) log(-y)"""
        return (x + 1).lgamma() - (x + 1) * (-y).log()

    @property
    def _mean_carrier_measure(self):
        return 0

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration, self.rate
        return gpugrad.xlogy(a, b) + gpugrad.xlogy(a - 1, value) - b * value - a.lgamma()

    def cdf(self, value):
        """F(x) = P(a, b x), the regularised lower incomplete gamma function"""
        if self._validate_args:
            self._validate_sample(value)
        return gpugrad.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        """H = a - log b + lgamma(a) + (1 - a) digamma(a)"""
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()


class Chi2(Gamma):
    """Chi2(df) = Gamma(df / 2, 1 / 2)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if is_number(df):
            df = gpugrad.tensor(float(df), dtype=gpugrad.get_default_dtype())
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
