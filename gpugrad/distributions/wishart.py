"""Wishart distribution over p x p positive-definite matrices, with Bartlett-decomposition
draws whose chi-square factors are reparameterised implicitly (``rsample``)."""
from __future__ import annotations

import math
import warnings

import numpy as np

import gpugrad

from ..tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import standard_gamma_rsample
from .multivariate_normal import _precision_to_scale_tril
from .utils import finfo, is_number, lazy_property, standard_normal

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """psi_p(x) = sum_{i < p} digamma(x - i / 2)"""
    i = gpugrad.arange(p, dtype=x.dtype, device=x.device)
    return (x.unsqueeze(-1) - i / 2).digamma().sum(-1)


class Wishart(ExponentialFamily):
    """W_p(df = nu, V = L L^T), nu > p - 1:
    log p(X) = (nu - p - 1) / 2 log|X| - tr(V^-1 X) / 2 - nu p / 2 log 2 - nu / 2 log|V|
    - log Gamma_p(nu / 2). Exactly one of covariance_matrix (V), precision_matrix (V^-1),
    scale_tril (L). ``rsample``: X = L A A^T L^T (Bartlett), A lower-triangular with
    A_ii = sqrt(chi2(nu - i)) and A_ij ~ N(0, 1) below the diagonal."""
    arg_constraints = {"covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky,
                       "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if is_number(df):
            df = gpugrad.tensor(float(df), dtype=param.dtype, device=param.device)
        event_shape = Size(param.shape[-2:])
        batch_shape = Size(np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
        self.df = df.expand(batch_shape)
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
            self._unbroadcasted_scale_tril = gpugrad.linalg.cholesky(covariance_matrix)
        else:
            self.precision_matrix = param.expand(matrix_shape)
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        p = event_shape[-1]
        self.arg_constraints = dict(type(self).arg_constraints,
                                    df=constraints.greater_than(p - 1))
        validate = self._validate_args if validate_args is None else validate_args
        if validate and not bool(self.df.gt(p - 1).all()):
            shown = float(df) if df.numel() == 1 else df
            raise ValueError(f"Value of df={shown} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new.arg_constraints = self.arg_constraints
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape + self._event_shape)

    def _eye(self):
        L = self._unbroadcasted_scale_tril
        return gpugrad.eye(L.shape[-1], dtype=L.dtype, device=L.device)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return gpugrad.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        return gpugrad.cholesky_solve(self._eye(), L).expand(self._matrix_shape())

    def _df(self):
        return self.df[..., None, None]

    @property
    def mean(self):
        """E[X] = nu V"""
        return self._df() * self.covariance_matrix

    @property
    def mode(self):
        """(nu - p - 1) V, nan where nu <= p + 1"""
        p = self._event_shape[-1]
        factor = self.df - p - 1
        factor = gpugrad.where(factor <= 0, gpugrad.full_like(factor, float("nan")), factor)
        return factor[..., None, None] * self.covariance_matrix

    @property
    def variance(self):
        """Var[X_ij] = nu (V_ij^2 + V_ii V_jj)"""
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape=Size()):
        """X = (L A)(L A)^T with A from the Bartlett decomposition; d X / d nu flows through the
        chi-square draws chi2(k) = 2 Gamma(k / 2, 1)."""
        p = self._event_shape[-1]
        shape = self._extended_shape(sample_shape)
        L = self._unbroadcasted_scale_tril
        k = self.df.unsqueeze(-1) - gpugrad.arange(p, dtype=L.dtype, device=L.device)
        chi2 = 2 * standard_gamma_rsample((0.5 * k).expand(tuple(shape[:-1])))
        diag = chi2.sqrt().clamp(min=float(finfo(chi2.dtype).eps))
        noise = standard_normal(shape, L.dtype, L.device).tril(-1)
        A = noise + gpugrad.diag_embed(diag)
        chol = gpugrad.matmul(L, A)
        return gpugrad.matmul(chol, chol.mT)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        half_logdet_v = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = gpugrad.cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + half_logdet_v) - gpugrad.mvlgamma(nu / 2, p)
                + (nu - p - 1) / 2 * gpugrad.linalg.slogdet(value)[1] - trace / 2)

    def entropy(self):
        """H = (p + 1) / 2 log|V| + p (p + 1) / 2 log 2 + log Gamma_p(nu / 2)
        - (nu - p - 1) / 2 psi_p(nu / 2) + nu p / 2"""
        nu, p = self.df, self._event_shape[-1]
        half_logdet_v = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_logdet_v) + gpugrad.mvlgamma(nu / 2, p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)

    @property
    def _natural_params(self):
        """theta = (-V^-1 / 2, (nu - p - 1) / 2)"""
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        """F = -(y + (p + 1) / 2) log|-x| + log Gamma_p(y + (p + 1) / 2)"""
        p = self._event_shape[-1]
        half_nu = y + (p + 1) / 2
        return -half_nu * gpugrad.logdet(-x) + gpugrad.mvlgamma(half_nu, p)

    @property
    def _mean_carrier_measure(self):
        return 0
