"""KL divergences involving the exponential-family base, LowRankMultivariateNormal, Pareto and
ContinuousBernoulli (registered when ``kl`` is imported)."""
from __future__ import annotations

import math

import gpugrad

from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exp_family import ExponentialFamily, kl_expfamily_expfamily
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _infinite_like, register_kl
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _lowrank_inv_quad
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .pareto import Pareto
from .uniform import Uniform

register_kl(ExponentialFamily, ExponentialFamily)(kl_expfamily_expfamily)


# Gaussians: KL = (tr(S_q^-1 S_p) + d^T S_q^-1 d - n + log det S_q - log det S_p) / 2,
# d = mu_q - mu_p, with S_p = A A^T for a square-root factor A of p's covariance

def _sqrt_factor(p):
    """A with A A^T = Sigma_p: [W, diag(sqrt D)] for low rank, the Cholesky factor otherwise"""
    if isinstance(p, LowRankMultivariateNormal):
        W, D = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
        batch = gpugrad.broadcast_shapes(tuple(W.shape[:-2]), tuple(D.shape[:-1]))
        W = W.expand(batch + tuple(W.shape[-2:]))
        return gpugrad.cat([W, D.sqrt().diag_embed().expand(batch + (D.shape[-1],) * 2)], -1)
    return p._unbroadcasted_scale_tril


def _logdet(p):
    if isinstance(p, LowRankMultivariateNormal):
        return p._logdet()
    return 2 * p._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _inv_quad(q, A):
    """tr(A^T Sigma_q^-1 A)"""
    if isinstance(q, LowRankMultivariateNormal):
        return _lowrank_inv_quad(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                 q._capacitance_tril, A)
    L = q._unbroadcasted_scale_tril
    batch = gpugrad.broadcast_shapes(tuple(L.shape[:-2]), tuple(A.shape[:-2]))
    L = L.expand(batch + tuple(L.shape[-2:]))
    A = A.expand(batch + tuple(A.shape[-2:]))
    return gpugrad.linalg.solve_triangular(L, A, upper=False).pow(2).sum((-2, -1))


def _kl_gaussians(p, q):
    n = p.event_shape[0]
    trace = _inv_quad(q, _sqrt_factor(p))
    mahalanobis = _inv_quad(q, (q.loc - p.loc).unsqueeze(-1))
    return 0.5 * (trace + mahalanobis - n + _logdet(q) - _logdet(p))


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Low Rank Multivariate Normals with "
                         "different event shapes cannot be computed")
    return _kl_gaussians(p, q)


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_mixed_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two (Low Rank) Multivariate Normals with "
                         "different event shapes cannot be computed")
    return _kl_gaussians(p, q)


# Pareto

@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    """a_q log(s_p / s_q) - log(a_q / a_p) + a_q / a_p - 1; inf where s_p < s_q"""
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * (p.scale / q.scale).log() - alpha_ratio.log() + alpha_ratio - 1
    return gpugrad.where(p.scale < q.scale, math.inf, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    """log(a / (s r)) - 1 / a + a s r / (a - 1) - 1; inf for a <= 1"""
    sr = p.scale * q.rate
    result = (p.alpha / sr).log() - p.alpha.reciprocal() + p.alpha * sr / (p.alpha - 1) - 1
    return gpugrad.where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    """-H(p) - E_p[log q(x)], E_p[log x] = log s + 1 / a; inf for a <= 1"""
    e_log_x = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - e_log_x
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * e_log_x
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return gpugrad.where(p.alpha <= 1, math.inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    """-H(p) + log(sqrt(2 pi) s_q) + (Var_p + (E_p - mu_q)^2) / (2 s_q^2); inf for a <= 2"""
    m = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * m.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * m - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / (2 * q.scale.pow(2)) - 1
    return gpugrad.where(p.alpha <= 2, math.inf, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    """-log(h - l) - log(a s^a) + (a + 1) E_p[log x]; inf where l < s"""
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    e_log_x = (gpugrad.xlogy(p.high, p.high) - gpugrad.xlogy(p.low, p.low) - width) / width
    return gpugrad.where(p.low < q.scale, math.inf, e_log_x * (q.alpha + 1) - t1)


# ContinuousBernoulli

@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    """E_p[x] (eta_p - eta_q) + log C_p + log(1 - lam_p) - log C_q - log(1 - lam_q)"""
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


def _cross_entropy_cb(p, q):
    """-E_p[log q(x)] for p on [0, 1]: -(E_p[x] eta_q + log(1 - lam_q) + log C_q)"""
    return -p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cross_entropy_cb(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    """inf where [low, high] leaves [0, 1]"""
    result = -p.entropy() + _cross_entropy_cb(p, q)
    return gpugrad.where((p.low < 0) | (p.high > 1), math.inf, result)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).pow(2)) + q.scale.log()
    t3 = (p.variance + p.mean.pow(2) - 2.0 * q.loc * p.mean) / (2.0 * q.scale.pow(2))
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    """log(high - low) - H(p); inf unless [0, 1] lies within [low, high]"""
    result = -p.entropy() + (q.high - q.low).log()
    return gpugrad.where((q.low > 0) | (q.high < 1), math.inf, result)


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(Exponential, Pareto)
@register_kl(Gamma, Pareto)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Gamma, ContinuousBernoulli)
def _kl_positive_infinity(p, q):
    """inf: p has mass outside q's support"""
    return _infinite_like(p.rate)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Pareto)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Pareto)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Pareto)
def _kl_real_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)
