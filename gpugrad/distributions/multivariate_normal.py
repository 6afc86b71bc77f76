"""Multivariate normal distribution (covariance, precision or lower Cholesky factor)."""
from __future__ import annotations

import math

import numpy as np

import gpugrad

from ..tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property, standard_normal

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """bmat @ bvec over broadcast batch dimensions."""
    return gpugrad.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _solve_tril(L, B):
    """L^-1 B for lower-triangular L (a general solve: there is no triangular one)."""
    return gpugrad.linalg.solve(L, B)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x = |L^-1 x|^2, for batches of L and x whose batch shapes broadcast
    (L's batch dims are the rightmost of x's); L is not copied per x."""
    n = bx.shape[-1]
    bx_batch_shape = tuple(bx.shape[:-1])
    bx_batch_dims, bL_batch_dims = len(bx_batch_shape), bL.dim() - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    # reshape x from (..., i, j, n) to (..., i/si, si, j/sj, sj, n) so L's dims line up
    bx_new_shape = tuple(bx.shape[:outer_batch_dims])
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += (sx // sL, sL)
    bx = bx.reshape(bx_new_shape + (n,))
    permute_dims = (list(range(outer_batch_dims))
                    + list(range(outer_batch_dims, new_batch_dims, 2))
                    + list(range(outer_batch_dims + 1, new_batch_dims, 2))
                    + [new_batch_dims])
    bx = bx.permute(permute_dims)
    flat_L = bL.reshape(-1, n, n)                               # b x n x n
    flat_x = bx.reshape(-1, flat_L.shape[0], n)                 # c x b x n
    flat_x_swap = flat_x.permute(1, 2, 0)                       # b x n x c
    M_swap = _solve_tril(flat_L, flat_x_swap).pow(2).sum(-2)    # b x c
    permuted_M = M_swap.t().reshape(tuple(bx.shape[:-1]))
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    return permuted_M.permute(permute_inv_dims).reshape(bx_batch_shape)


def _eye_like(P):
    return gpugrad.eye(P.shape[-1], dtype=P.dtype, device=P.device)


def _precision_to_scale_tril(P):
    """L with L L^T = P^-1: the Cholesky factor of P with rows and columns reversed, inverted."""
    Lf = gpugrad.linalg.cholesky(gpugrad.flip(P, (-2, -1)))
    L_inv = gpugrad.flip(Lf, (-2, -1)).mT
    return _solve_tril(L_inv, _eye_like(P)).tril()


class MultivariateNormal(Distribution):
    """N(loc, Sigma), Sigma = L L^T: log p(x) = -(k log(2 pi) + |L^-1 (x - loc)|^2) / 2
    - sum log diag(L). Exactly one of covariance_matrix, precision_matrix, scale_tril."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                 ("covariance_matrix", covariance_matrix),
                                                 ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            what = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{what} must be at least two-dimensional, "
                             "with optional leading batch dimensions")
        batch_shape = Size(np.broadcast_shapes(tuple(matrix.shape[:-2]),
                                               tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = gpugrad.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = batch_shape + self.event_shape
        cov_shape = batch_shape + self.event_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return gpugrad.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L_inv = _solve_tril(self._unbroadcasted_scale_tril, _eye_like(self.loc))
        return gpugrad.matmul(L_inv.mT, L_inv).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(tuple(self._batch_shape + self._event_shape)))

    def rsample(self, sample_shape=Size()):
        """x = loc + L eps, eps ~ N(0, I)"""
        shape = self._extended_shape(sample_shape)
        eps = standard_normal(shape, self.loc.dtype, self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        """H = k (1 + log(2 pi)) / 2 + sum log diag(L)"""
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(tuple(self._batch_shape))
