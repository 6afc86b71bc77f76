"""Von Mises distribution on the circle."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, is_number, lazy_property, standard_uniform

__all__ = ["VonMises"]


def _proposal_r(kappa):
    """r = (1 + rho^2) / (2 rho), rho = (tau - sqrt(2 tau)) / (2 kappa),
    tau = 1 + sqrt(1 + 4 kappa^2) (Best and Fisher, 1979); 1 / kappa + kappa for tiny kappa,
    where the closed form cancels to 0 / 0."""
    tau = 1 + (1 + 4 * kappa.pow(2)).sqrt()
    rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
    r = (1 + rho.pow(2)) / (2 * rho)
    return gpugrad.where(kappa < 1e-5, 1 / kappa + kappa, r)


def _rejection_sample(loc, concentration, proposal_r, shape):
    """Best-Fisher rejection: f = (1 + r z) / (r + z), z = cos(pi u1), accepted when
    c (2 - c) > u2 or log(c / u2) + 1 - c >= 0, c = kappa (r - f); x = sign(u3 - 1/2) acos f,
    then shifted by loc and wrapped to [-pi, pi)."""
    x = gpugrad.zeros(shape, dtype=loc.dtype, device=loc.device)
    done = gpugrad.zeros(shape, dtype=gpugrad.bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = (standard_uniform(shape, loc.dtype, loc.device) for _ in range(3))
        z = (math.pi * u1).cos()
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        x = gpugrad.where(accept & ~done, (u3 - 0.5).sign() * f.clamp(-1, 1).acos(), x)
        done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """VonMises(loc mu, concentration kappa) on the circle:
    log p(x) = kappa cos(x - mu) - log(2 pi I0(kappa)). ``sample`` draws by rejection (in
    float64) and returns angles in [-pi, pi); there is no ``rsample``, as in PyTorch."""
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        scalar = is_number(loc) and is_number(concentration)
        batch_shape = Size() if scalar else self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(VonMises, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def log_prob(self, value):
        """I0(kappa) = i0e(kappa) e^kappa keeps large kappa finite"""
        if self._validate_args:
            self._validate_sample(value)
        k = self.concentration
        return (k * ((value - self.loc).cos() - 1) - math.log(2 * math.pi)
                - gpugrad.special.i0e(k).log())

    @lazy_property
    def _proposal_r(self):
        return _proposal_r(self.concentration.detach().double())

    def sample(self, sample_shape=Size()):
        shape = tuple(self._extended_shape(sample_shape))
        with gpugrad.no_grad():
            loc = self.loc.detach().double().expand(shape)
            kappa = self.concentration.detach().double().expand(shape)
            x = _rejection_sample(loc, kappa, self._proposal_r.expand(shape), shape)
            return x.to(self.loc.dtype)

    @property
    def mean(self):
        """the circular mean, loc"""
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """the circular variance 1 - I1(kappa) / I0(kappa)"""
        k = self.concentration
        return 1 - gpugrad.special.i1e(k) / gpugrad.special.i0e(k)
