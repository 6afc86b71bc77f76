"""Multivariate normal with low-rank plus diagonal covariance W W^T + diag(D)."""
from __future__ import annotations

import math

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mv
from .utils import lazy_property, standard_normal

__all__ = ["LowRankMultivariateNormal"]


def _solve_lower(L, B):
    return gpugrad.linalg.solve_triangular(L, B, upper=False)


def _capacitance_tril(W, D):
    """chol(I + W^T D^-1 W), the m x m capacitance of Sigma = W W^T + diag(D)"""
    m = W.shape[-1]
    Wt_Dinv = W.mT / D.unsqueeze(-2)
    K = gpugrad.matmul(Wt_Dinv, W)
    eye = gpugrad.eye(m, dtype=W.dtype, device=W.device)
    return gpugrad.linalg.cholesky(K + eye)


def _lowrank_logdet(W, D, capacitance_tril):
    """log det Sigma = 2 sum log diag chol(C) + sum log D (the matrix determinant lemma)"""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _lowrank_inv_quad(W, D, capacitance_tril, A):
    """tr(A^T Sigma^-1 A) for A of shape (..., n, r), by Woodbury:
    Sigma^-1 = D^-1 - D^-1 W C^-1 W^T D^-1"""
    Dinv_A = A / D.unsqueeze(-1)
    first = (A * Dinv_A).sum((-2, -1))
    inner = _solve_lower(capacitance_tril, gpugrad.matmul(W.mT, Dinv_A))
    return first - inner.pow(2).sum((-2, -1))


class LowRankMultivariateNormal(Distribution):
    """N(loc, W W^T + diag(D)) with W = cov_factor (n x m), D = cov_diag:
    log p(x) = -(n log(2 pi) + log det Sigma + (x - loc)^T Sigma^-1 (x - loc)) / 2, evaluated
    in O(n m^2) through the capacitance C = I + W^T D^-1 W."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError("cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = gpugrad.broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc, self.cov_diag = loc_[..., 0], cov_diag_[..., 0]
        batch_shape = self.loc.shape[:-1]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """diag(Sigma) = sum_j W_ij^2 + D_i"""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(tuple(self._batch_shape + self._event_shape))

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (gpugrad.matmul(W, W.mT) + D.diag_embed()).expand(self._matrix_shape())

    @lazy_property
    def scale_tril(self):
        return gpugrad.linalg.cholesky(self.covariance_matrix)

    @lazy_property
    def precision_matrix(self):
        """D^-1 - (D^-1 W L_C^-T)(D^-1 W L_C^-T)^T (Woodbury)"""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = _solve_lower(self._capacitance_tril, W.mT / D.unsqueeze(-2))
        return (D.reciprocal().diag_embed() - gpugrad.matmul(A.mT, A)).expand(
            self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        """x = loc + W eps_W + sqrt(D) eps_D, eps ~ N(0, I)"""
        shape = self._extended_shape(sample_shape)
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        eps_W = standard_normal(tuple(shape[:-1]) + (W.shape[-1],), self.loc.dtype,
                                self.loc.device)
        eps_D = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(W, eps_W) + D.sqrt() * eps_D

    def _logdet(self):
        return _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                               self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = (value - self.loc).unsqueeze(-1)
        M = _lowrank_inv_quad(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                              self._capacitance_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + M)

    def entropy(self):
        """H = (n (1 + log(2 pi)) + log det Sigma) / 2"""
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
