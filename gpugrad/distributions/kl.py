"""KL divergence KL(p || q) = E_p[log p(x) - log q(x)], dispatched on the pair of types, and
every registered pair (PyTorch's ``torch.distributions.kl``)."""
from __future__ import annotations

import math
import warnings
from functools import total_ordering

import numpy as np

import gpugrad

from ..ops.nn.activation import softplus
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily, kl_expfamily_expfamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _lowrank_inv_quad
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis, _solve_tril
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .utils import euler_constant, sum_rightmost

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}   # (type_p, type_q) -> function, as registered
_KL_MEMOIZE = {}    # (type_p, type_q) -> function, for every pair looked up


def register_kl(type_p, type_q):
    """Decorator registering ``fn(p, q)`` as KL(p || q) for the pair of Distribution types;
    lookup picks the most specific registered pair by subclass order."""
    for t, name in ((type_p, "type_p"), (type_q, "type_q")):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()   # lookup order may have changed
        return fun
    return decorator


@total_ordering
class _Match:
    __slots__ = ("types",)

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The most specific registered match (single inheritance assumed)."""
    matches = [(p, q) for p, q in _KL_REGISTRY if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left_fun, right_fun = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left_fun is not right_fun:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left_fun


def kl_divergence(p, q):
    """KL(p || q), of shape batch_shape; NotImplementedError for an unregistered pair."""
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(t):
    return gpugrad.full_like(t, math.inf)


def _batch_trace_XXT(bmat):   # noqa: N802
    """trace(X X^T) over batches: the sum of squares of each matrix."""
    m, n = bmat.shape[-2], bmat.shape[-1]
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(tuple(bmat.shape[:-2]))


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """p log(p / q) + (1 - p) log((1 - p) / (1 - q)), via softplus of the logits"""
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = gpugrad.where(p.probs == 0, 0.0, gpugrad.where(q.probs == 0, math.inf, t1))
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = gpugrad.where(p.probs == 1, 0.0, gpugrad.where(q.probs == 1, math.inf, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    """sum_k p_k (log p_k - log q_k); inf where q_k = 0 < p_k"""
    t = p.probs * (p.logits - q.logits)
    t = gpugrad.where((q.probs == 0).expand_as(t), math.inf, t)
    t = gpugrad.where((p.probs == 0).expand_as(t), 0.0, t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    """(r + ((mu_p - mu_q) / s_q)^2 - 1 - log r) / 2, r = (s_p / s_q)^2"""
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    """log((h_q - l_q) / (h_p - l_p)); inf unless [l_p, h_p] lies within [l_q, h_q]"""
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return gpugrad.where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    """r - 1 - log r, r = rate_q / rate_p"""
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    """-log r + |mu_p - mu_q| / b_q + r exp(-|mu_p - mu_q| / b_p) - 1, r = b_p / b_q"""
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    """(tr(S_q^-1 S_p) + (mu_q - mu_p)^T S_q^-1 (mu_q - mu_p) - k) / 2 + log(|L_q| / |L_p|)"""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different event "
                         "shapes cannot be computed")
    Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (Lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - Lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    n = p.event_shape[0]
    batch = np.broadcast_shapes(tuple(Lq.shape[:-2]), tuple(Lp.shape[:-2]))
    term2 = _batch_trace_XXT(_solve_tril(Lq.expand(batch + (n, n)), Lp.expand(batch + (n, n))))
    term3 = _batch_mahalanobis(Lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


# different families
@register_kl(Normal, Uniform)
@register_kl(Normal, Exponential)
@register_kl(Laplace, Uniform)
@register_kl(Laplace, Exponential)
def _kl_unbounded_bounded(p, q):
    """inf: p has mass outside q's support"""
    return _infinite_like(p.loc)


@register_kl(Exponential, Uniform)
def _kl_exponential_uniform(p, q):
    return _infinite_like(p.rate)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    """rate (h + l) / 2 - log((h - l) rate); inf where l < 0"""
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return gpugrad.where(p.low < 0, math.inf, result)


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    """log(sqrt(2 pi) s_q / w) + (w^2 / 12 + ((h + l) / 2 - mu_q)^2) / (2 s_q^2), w = h - l"""
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * (rate_sqr * var_normal * 2 * math.pi).log()
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    scale_sqr_var_ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * (2 * scale_sqr_var_ratio / math.pi).log()
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + scale_sqr_var_ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale_ratio = loc_diff / p.scale
    t1 = scale_ratio.log()
    t2 = math.sqrt(2 / math.pi) * p.scale * (-0.5 * loc_diff_scale_ratio.pow(2)).exp()
    t3 = loc_diff * gpugrad.erf(math.sqrt(0.5) * loc_diff_scale_ratio)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    """a_q log(b_p / b_q) + lgamma(a_q) - lgamma(a_p) + (a_p - a_q) digamma(a_p)
    + (b_q - b_p) a_p / b_p"""
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    """lbeta(q) - lbeta(p) + sum_i (a_pi - a_qi) (digamma(a_pi) - digamma(a_p0 + a_p1))"""
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    """lgamma(a_p0) - lgamma(a_q0) - sum (lgamma(a_p) - lgamma(a_q))
    + sum (a_p - a_q) (digamma(a_p) - digamma(a_p0))"""
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    """r_p (log r_p - log r_q) - (r_p - r_q)"""
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    """-a log(b_q / r) + b_q / r + lgamma(a) + a euler - 1 - euler, r = rate_p"""
    ratio = q.rate / p.rate
    t1 = -q.concentration * ratio.log()
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * euler_constant
            - (1 + euler_constant))


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * euler_constant
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return t1 + t2 + t3 - (1 + euler_constant)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    """log(((s_p + s_q)^2 + (mu_p - mu_q)^2) / (4 s_p s_q))"""
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(LogNormal, LogNormal)
@register_kl(HalfNormal, HalfNormal)
def _kl_same_transform(p, q):
    """KL is invariant under the shared bijection: that of the base normals"""
    return _kl_normal_normal(p._base(), q._base())


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
