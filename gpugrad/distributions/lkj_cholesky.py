"""LKJ distribution over lower Cholesky factors of correlation matrices (Lewandowski,
Kurowicka and Joe, 2009), sampled by the onion method."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo, standard_normal

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim = d, concentration = eta): for L with L L^T = C a d x d correlation
    matrix, log p(L) = sum_{i=2..d} (2 (eta - 1) + d - i) log L_ii - log c, where
    log c = (d - 1) / 2 log pi + log Gamma_{d-1}(eta + (d - 1) / 2 - 1 / 2)
    - (d - 1) lgamma(eta + (d - 1) / 2) (so that C ~ LKJ(eta), p(C) ~ |C|^(eta - 1))."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError("Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        # onion method: row k >= 1 has squared norm y_k ~ Beta(k / 2, eta + (d - 1 - k) / 2)
        # below its diagonal (row 0 takes row 1's parameters and is never used)
        # NOTE: PyTorch draws Beta(k - 1 / 2, .), which skews the correlations of rows k >= 2
        offset = gpugrad.arange(dim - 1, dtype=c.dtype, device=c.device)
        offset = gpugrad.cat([gpugrad.zeros(1, dtype=c.dtype, device=c.device), offset])
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(0.5 * (offset + 1), marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(c.shape, Size((dim, dim)), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        """Row i = sqrt(y_i) u_i on its first i entries (u_i uniform on the unit sphere), and
        L_ii = sqrt(1 - |row|^2), so every row has unit norm."""
        with gpugrad.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            z = standard_normal(shape, y.dtype, y.device).tril(-1)
            norm = z.norm(dim=-1, keepdim=True)
            # NOTE: row 0 has no entries below the diagonal: 0 / 0 is replaced by 0
            u = z / gpugrad.where(norm > 0, norm, gpugrad.ones_like(norm))
            w = y.sqrt() * u
            diag = (1 - w.pow(2).sum(-1)).clamp(min=float(finfo(w.dtype).tiny)).sqrt()
            return w + gpugrad.diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d, eta = self.dim, self.concentration
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        i = gpugrad.arange(2, d + 1, dtype=value.dtype, device=value.device)
        order = 2 * (eta - 1).unsqueeze(-1) + d - i
        unnormalized = (order * diag.log()).sum(-1)
        alpha = eta + 0.5 * (d - 1)
        log_c = (0.5 * (d - 1) * math.log(math.pi) + gpugrad.mvlgamma(alpha - 0.5, d - 1)
                 - (d - 1) * alpha.lgamma())
        return unnormalized - log_c
