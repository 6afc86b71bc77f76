"""Distributions composed from others (HalfCauchy, Pareto, Weibull, Kumaraswamy, InverseGamma,
LogisticNormal: transforms of a base; FisherSnedecor, NegativeBinomial, Multinomial,
LowRankMultivariateNormal, MixtureSameFamily), with GeneralizedPareto, ContinuousBernoulli and
VonMises, and their KL divergences: closed forms written out here, seeded moments, pathwise
gradients, shapes under expand and messages; PyTorch as an extra oracle where it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from tests.distributions._tensors import F64
from tests.distributions._validation import _default_validation  # noqa: F401 (autouse)


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(to_numpy(a), b, rtol=rtol, atol=atol)


def within_se(draws, mean, var, k=5.0):
    """the sample mean of draws (along dim 0) is within k standard errors of ``mean``"""
    draws = to_numpy(draws)
    se = np.sqrt(np.asarray(var) / draws.shape[0])
    assert np.all(np.abs(draws.mean(0) - mean) < k * se), (draws.mean(0), mean, se)


# ---- closed forms ---------------------------------------------------------------------------

def test_half_cauchy_formulas(device):
    s = tensor([0.5, 2.0], device)
    x = tensor([0.3, 4.0], device)
    d = D.HalfCauchy(s)
    sn, xn = np.array([0.5, 2.0]), np.array([0.3, 4.0])
    close(d.log_prob(x), np.log(2 / (np.pi * sn * (1 + (xn / sn) ** 2))))
    close(d.cdf(x), 2 / np.pi * np.arctan(xn / sn))
    close(d.icdf(d.cdf(x)), xn)
    close(d.entropy(), np.log(2 * np.pi * sn))
    assert np.isinf(to_numpy(d.mean)).all() and (to_numpy(d.mode) == 0).all()
    outside = D.HalfCauchy(s, validate_args=False).log_prob(tensor([-1.0, -1.0], device))
    assert (to_numpy(outside) == -np.inf).all()
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(tensor([-1.0, -1.0], device))
    assert isinstance(d, D.TransformedDistribution)


def test_pareto_formulas(device):
    s, a = tensor([1.0, 2.0], device), tensor([3.0, 0.8], device)
    d = D.Pareto(s, a)
    sn, an, xn = np.array([1.0, 2.0]), np.array([3.0, 0.8]), np.array([1.5, 5.0])
    close(d.log_prob(tensor(xn, device)), np.log(an) + an * np.log(sn) - (an + 1) * np.log(xn))
    close(d.cdf(tensor(xn, device)), 1 - (sn / xn) ** an)
    close(d.entropy(), np.log(sn / an) + 1 / an + 1)
    close(d.mean, [3.0 * 1 / 2, np.inf])
    close(D.Pareto(tensor(1.0), tensor(3.0)).variance, 3.0 / (4 * 1))
    close(d.support.lower_bound, sn)
    assert not bool(d.support.check(tensor([0.9, 2.5], device)).all())


def test_weibull_formulas(device):
    s, k = tensor([1.5, 0.7], device), tensor([2.0, 0.6], device)
    d = D.Weibull(s, k)
    sn, kn, xn = np.array([1.5, 0.7]), np.array([2.0, 0.6]), np.array([0.8, 2.0])
    lp = np.log(kn / sn) + (kn - 1) * np.log(xn / sn) - (xn / sn) ** kn
    close(d.log_prob(tensor(xn, device)), lp)
    close(d.cdf(tensor(xn, device)), 1 - np.exp(-(xn / sn) ** kn))
    g = np.vectorize(math.gamma)
    close(d.mean, sn * g(1 + 1 / kn))
    close(d.variance, sn ** 2 * (g(1 + 2 / kn) - g(1 + 1 / kn) ** 2))
    close(d.entropy(), 0.5772156649015329 * (1 - 1 / kn) + np.log(sn / kn) + 1)
    close(d.mode, [1.5 * 0.5 ** 0.5, 0.0])


def test_kumaraswamy_formulas(device):
    a, b = np.array([2.0, 0.5, 3.0]), np.array([3.0, 2.0, 1.5])
    d = D.Kumaraswamy(tensor(a, device), tensor(b, device))
    x = np.array([0.3, 0.6, 0.9])
    lp = np.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x ** a)
    close(d.log_prob(tensor(x, device)), lp)
    close(d.cdf(tensor(x, device)), 1 - (1 - x ** a) ** b)
    beta = np.vectorize(lambda p, q: math.exp(math.lgamma(p) + math.lgamma(q) - math.lgamma(p + q)))
    m1, m2 = b * beta(1 + 1 / a, b), b * beta(1 + 2 / a, b)
    close(d.mean, m1)
    close(d.variance, m2 - m1 ** 2)
    harmonic = np.array([1 + 1 / 2 + 1 / 3, 1 + 1 / 2, 2 - 2 * math.log(2) + 2 / 3])   # H_b
    close(d.entropy(), (1 - 1 / b) + (1 - 1 / a) * harmonic - np.log(a * b))
    mode = to_numpy(d.mode)
    a2, b2 = a[[0, 2]], b[[0, 2]]
    np.testing.assert_allclose(mode[[0, 2]], ((a2 - 1) / (a2 * b2 - 1)) ** (1 / a2))
    assert np.isnan(mode[1])


def test_inverse_gamma_formulas(device):
    a, b = np.array([3.0, 1.5, 0.5]), np.array([2.0, 1.0, 4.0])
    d = D.InverseGamma(tensor(a, device), tensor(b, device))
    x = np.array([0.5, 2.0, 3.0])
    lg = np.vectorize(math.lgamma)
    close(d.log_prob(tensor(x, device)), a * np.log(b) - lg(a) - (a + 1) * np.log(x) - b / x)
    close(d.mean, [1.0, 2.0, np.inf])
    close(d.mode, b / (a + 1))
    close(d.variance, [4.0 / 4.0, np.inf, np.inf])
    euler = 0.5772156649015329
    digamma = np.array([1.5, 2 - 2 * math.log(2), -2 * math.log(2)]) - euler
    close(d.entropy(), a + np.log(b) + lg(a) - (1 + a) * digamma)
    # F(x) = Q(a, b / x), the upper regularised incomplete gamma function
    close(d.cdf(tensor(x, device)), to_numpy(gpugrad.special.gammaincc(tensor(a), tensor(b / x))))


def test_generalized_pareto_formulas(device):
    m, s, c = np.array([0.5, 0.0, 1.0]), np.array([2.0, 1.0, 0.5]), np.array([0.3, 0.0, -0.5])
    d = D.GeneralizedPareto(tensor(m, device), tensor(s, device), tensor(c, device))
    x = np.array([1.0, 2.0, 1.5])
    z = (x - m) / s
    lp = np.where(c == 0, -np.log(s) - z,
                  -np.log(s) - (1 / np.where(c == 0, 1, c) + 1) * np.log1p(c * z))
    close(d.log_prob(tensor(x, device)), lp)
    surv = np.where(c == 0, np.exp(-z), (1 + c * z) ** (-1 / np.where(c == 0, 1, c)))
    close(d.cdf(tensor(x, device)), 1 - surv)
    close(d.icdf(d.cdf(tensor(x, device))), x)
    close(d.mean, m + s / (1 - c))
    close(d.variance, s ** 2 / ((1 - c) ** 2 * (1 - 2 * c)))
    close(d.entropy(), np.log(s) + c + 1)
    close(d.support.upper_bound, [np.inf, np.inf, 2.0])


def test_fisher_snedecor_formulas(device):
    d1, d2 = np.array([3.0, 5.0]), np.array([6.0, 3.0])
    d = D.FisherSnedecor(tensor(d1, device), tensor(d2, device))
    x = np.array([0.7, 1.9])
    lg = np.vectorize(math.lgamma)
    lp = (lg((d1 + d2) / 2) - lg(d1 / 2) - lg(d2 / 2) + d1 / 2 * np.log(d1 / d2)
          + (d1 / 2 - 1) * np.log(x) - (d1 + d2) / 2 * np.log1p(d1 * x / d2))
    close(d.log_prob(tensor(x, device)), lp)
    close(d.mean, [6.0 / 4.0, 3.0])
    assert np.isnan(to_numpy(d.variance)).tolist() == [False, True]
    close(d.variance[0], 2 * 36 * 7 / (3 * 16 * 2))


def test_negative_binomial_formulas(device):
    r, p = np.array([3.0, 0.5]), np.array([0.4, 0.7])
    d = D.NegativeBinomial(tensor(r, device), probs=tensor(p, device))
    k = np.array([2.0, 5.0])
    lg = np.vectorize(math.lgamma)
    lp = lg(k + r) - lg(k + 1) - lg(r) + r * np.log1p(-p) + k * np.log(p)
    close(d.log_prob(tensor(k, device)), lp)
    close(d.mean, r * p / (1 - p))
    close(d.variance, r * p / (1 - p) ** 2)
    close(d.mode, np.floor(np.maximum((r - 1) * p / (1 - p), 0)))
    dl = D.NegativeBinomial(tensor(r, device), logits=tensor(np.log(p / (1 - p)), device))
    close(dl.log_prob(tensor(k, device)), lp)
    zero = D.NegativeBinomial(tensor(0.0, device), probs=tensor(0.5, device))
    close(zero.log_prob(tensor(0.0, device)), 0.0)


def test_multinomial_formulas(device):
    p = np.array([[0.2, 0.3, 0.5], [0.6, 0.4, 0.0]])
    d = D.Multinomial(4, probs=tensor(p, device))
    x = np.array([[1.0, 1.0, 2.0], [3.0, 1.0, 0.0]])
    lg = np.vectorize(math.lgamma)
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = lg(5) - lg(x + 1).sum(-1) + np.where(x > 0, x * np.log(p), 0).sum(-1)
    close(d.log_prob(tensor(x, device)), lp)
    close(d.mean, 4 * p)
    close(d.variance, 4 * p * (1 - p))
    # entropy by enumerating every count vector of one batch member
    q = p[0]
    h = 0.0
    for a in range(5):
        for b in range(5 - a):
            c = 4 - a - b
            logp = lg(5) - lg(a + 1) - lg(b + 1) - lg(c + 1) + a * np.log(q[0]) \
                + b * np.log(q[1]) + c * np.log(q[2])
            h -= np.exp(logp) * logp
    close(d.entropy()[0], h)
    with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
        D.Multinomial(tensor([3.0]), probs=tensor(q))


def test_continuous_bernoulli_formulas(device):
    lam = np.array([0.2, 0.4995, 0.9])
    d = D.ContinuousBernoulli(tensor(lam, device))
    x = np.array([0.3, 0.7, 0.95])
    c = 2 * np.arctanh(1 - 2 * lam) / (1 - 2 * lam)
    close(d.log_prob(tensor(x, device)), np.log(c) + x * np.log(lam) + (1 - x) * np.log1p(-lam),
          rtol=1e-6)
    mean = np.array([lam[0] / (2 * lam[0] - 1) + 1 / np.log((1 - lam[0]) / lam[0]),
                     0.5 + (lam[1] - 0.5) / 3,
                     lam[2] / (2 * lam[2] - 1) + 1 / np.log((1 - lam[2]) / lam[2])])
    close(d.mean, mean, rtol=1e-6)
    cdf = (lam ** x * (1 - lam) ** (1 - x) + lam - 1) / (2 * lam - 1)
    close(d.cdf(tensor(x, device)), cdf, rtol=1e-3)   # x itself near lam = 1/2
    close(d.icdf(d.cdf(tensor(x, device))), x, rtol=1e-6)
    # the Bregman entropy of the exponential-family base equals the closed form
    close(D.ExponentialFamily.entropy(d), to_numpy(d.entropy()), rtol=1e-6)


def test_von_mises_formulas(device):
    loc, k = np.array([0.5, -1.0]), np.array([2.0, 30.0])
    d = D.VonMises(tensor(loc, device), tensor(k, device))
    x = np.array([1.0, -0.9])
    close(d.log_prob(tensor(x, device)), k * np.cos(x - loc) - np.log(2 * np.pi * np.i0(k)))
    # 1 - I1(k) / I0(k), I_n(k) = (1 / pi) int_0^pi exp(k cos t) cos(n t) dt (trapezoid rule:
    # exact to rounding for this smooth periodic integrand)
    t = np.linspace(0, np.pi, 20001)
    w = np.exp(k[:, None] * (np.cos(t) - 1))
    ratio = np.trapezoid(w * np.cos(t), t, axis=-1) / np.trapezoid(w, t, axis=-1)
    close(d.variance, 1 - ratio, rtol=1e-9)
    assert not d.has_rsample
    with pytest.raises(NotImplementedError):
        d.rsample()


def test_lowrank_mvn_matches_dense(device):
    rng = np.random.default_rng(1)
    W, Dg = rng.normal(size=(2, 4, 2)), rng.uniform(0.5, 2.0, size=(2, 4))
    loc = rng.normal(size=(2, 4))
    d = D.LowRankMultivariateNormal(tensor(loc, device), tensor(W, device), tensor(Dg, device))
    cov = W @ W.transpose(0, 2, 1) + np.stack([np.diag(v) for v in Dg])
    x = rng.normal(size=(3, 2, 4))
    diff = x - loc
    maha = np.einsum("sbi,bij,sbj->sb", diff, np.linalg.inv(cov), diff)
    logdet = np.linalg.slogdet(cov)[1]
    close(d.log_prob(tensor(x, device)), -0.5 * (4 * np.log(2 * np.pi) + logdet + maha))
    close(d.covariance_matrix, cov)
    close(d.precision_matrix, np.linalg.inv(cov))
    close(d.scale_tril, np.linalg.cholesky(cov))
    close(d.variance, np.diagonal(cov, axis1=-2, axis2=-1))
    close(d.entropy(), 0.5 * (4 * (1 + np.log(2 * np.pi)) + logdet))


def test_mixture_same_family_formulas(device):
    w = np.array([0.3, 0.7])
    mu, s = np.array([-1.0, 2.0]), np.array([0.5, 1.5])
    mix = D.Categorical(tensor(w, device))
    d = D.MixtureSameFamily(mix, D.Normal(tensor(mu, device), tensor(s, device)))
    x = np.array([0.0, 1.0, 3.0])
    dens = (w * np.exp(-(x[:, None] - mu) ** 2 / (2 * s ** 2)) / (s * np.sqrt(2 * np.pi))).sum(-1)
    close(d.log_prob(tensor(x, device)), np.log(dens))
    close(d.mean, (w * mu).sum())
    m = (w * mu).sum()
    close(d.variance, (w * (s ** 2 + (mu - m) ** 2)).sum())
    from math import erf
    cdf = [sum(wi * 0.5 * (1 + erf((xi - mi) / (si * math.sqrt(2))))
               for wi, mi, si in zip(w, mu, s)) for xi in x]
    close(d.cdf(tensor(x, device)), cdf)
    assert d.batch_shape == () and d.event_shape == ()


def test_mixture_of_multivariate_components_shapes():
    mix = D.Categorical(gpugrad.ones(3, 5, dtype=F64))
    comp = D.Independent(D.Normal(gpugrad.randn(3, 5, 2, dtype=F64),
                                  gpugrad.ones(3, 5, 2, dtype=F64)), 1)
    d = D.MixtureSameFamily(mix, comp)
    assert d.batch_shape == (3,) and d.event_shape == (2,)
    gpugrad.manual_seed(0)
    assert d.sample((4,)).shape == (4, 3, 2)
    assert d.log_prob(gpugrad.zeros(4, 3, 2, dtype=F64)).shape == (4, 3)
    assert d.mean.shape == (3, 2) and d.variance.shape == (3, 2)
    assert d.expand((6, 3)).sample().shape == (6, 3, 2)


def test_mixture_messages():
    comp = D.Normal(gpugrad.zeros(4, dtype=F64), gpugrad.ones(4, dtype=F64))
    with pytest.raises(ValueError, match="needs to be an  instance of torch.distributions"):
        D.MixtureSameFamily(comp, comp)
    with pytest.raises(ValueError, match=r"`mixture_distribution component` \(3\) does not "
                                         r"equal `component_distribution.batch_shape\[-1\]` "
                                         r"\(4\)"):
        D.MixtureSameFamily(D.Categorical(gpugrad.ones(3)), comp)


# ---- sampling: moments and pathwise gradients ----------------------------------------------

N = 40000


@pytest.mark.parametrize("make, mean, var", [
    (lambda: D.HalfCauchy(tensor(1.0)), None, None),
    (lambda: D.Pareto(tensor(2.0), tensor(5.0)), 2.5, 4 * 5 / (16 * 3)),
    (lambda: D.Weibull(tensor(1.5), tensor(2.0)), 1.5 * math.gamma(1.5),
     2.25 * (1 - math.gamma(1.5) ** 2)),
    (lambda: D.Kumaraswamy(tensor(2.0), tensor(3.0)), None, None),
    (lambda: D.InverseGamma(tensor(5.0), tensor(2.0)), 0.5, 4 / (16 * 3)),
    (lambda: D.FisherSnedecor(tensor(6.0), tensor(12.0)), 1.2, 2 * 144 * 16 / (6 * 100 * 8)),
    (lambda: D.GeneralizedPareto(tensor(0.5), tensor(1.0), tensor(0.1)), None, None),
    (lambda: D.ContinuousBernoulli(tensor(0.8)), None, None),
    (lambda: D.NegativeBinomial(tensor(4.0), probs=tensor(0.3)), None, None),
    (lambda: D.VonMises(tensor(0.3), tensor(4.0)), None, None),
])
def test_sample_moments(make, mean, var):
    d = make()
    gpugrad.manual_seed(0)
    x = d.sample((N,))
    assert x.shape == (N,)
    if isinstance(d, D.HalfCauchy):   # no moments: the median is scale
        assert abs(np.median(to_numpy(x)) - 1.0) < 0.03
        return
    if mean is None:
        mean, var = float(d.mean), float(d.variance)
    if isinstance(d, D.VonMises):   # circular: E[cos(x - loc)] = I1(k) / I0(k)
        c = np.cos(to_numpy(x) - 0.3)
        within_se(c[:, None], 1 - float(d.variance), c.var())
        return
    within_se(x.unsqueeze(-1), mean, var)


def test_multinomial_and_lowrank_sample_moments():
    gpugrad.manual_seed(1)
    p = np.array([0.1, 0.6, 0.3])
    x = D.Multinomial(7, probs=tensor(p)).sample((N // 4,))
    assert x.shape == (N // 4, 3) and (to_numpy(x).sum(-1) == 7).all()
    within_se(x, 7 * p, 7 * p * (1 - p))
    W, Dg = np.array([[1.0], [0.5]]), np.array([0.5, 2.0])
    d = D.LowRankMultivariateNormal(tensor([1.0, -1.0]), tensor(W), tensor(Dg))
    y = to_numpy(d.rsample((N,)))
    within_se(y, [1.0, -1.0], np.diag(W @ W.T) + Dg)
    np.testing.assert_allclose(np.cov(y.T), W @ W.T + np.diag(Dg), atol=0.1)


def test_mixture_sample_moments():
    mix = D.Categorical(tensor([0.25, 0.75]))
    d = D.MixtureSameFamily(mix, D.Normal(tensor([-2.0, 1.0]), tensor([0.5, 1.0])))
    gpugrad.manual_seed(2)
    within_se(d.sample((N,)).unsqueeze(-1), float(d.mean), float(d.variance))


def test_rsample_gradients_explicit():
    """pathwise gradients of explicit reparameterisations, against the derivative of the map
    written out"""
    gpugrad.manual_seed(3)
    s, a = tensor(2.0, requires_grad=True), tensor(3.0, requires_grad=True)
    x = D.Pareto(s, a).rsample((5,))
    x.sum().backward()
    close(s.grad, float((x / s).sum()))                      # x = s exp(e / a)
    close(a.grad, float((-(x * (x / s).log()) / a).sum()))   # dx/da = -x log(x / s) / a
    loc, sc, c = (tensor(v, requires_grad=True) for v in (0.5, 2.0, 0.2))
    gpugrad.manual_seed(4)
    u = gpugrad.rand(6, dtype=F64)
    gpugrad.manual_seed(4)
    y = D.GeneralizedPareto(loc, sc, c).rsample((6,))
    y.sum().backward()
    close(sc.grad, float(((((1 - u) ** -0.2) - 1) / 0.2).sum()))
    close(loc.grad, 6.0)


@pytest.mark.parametrize("make, param, dmean", [
    (lambda t: D.Weibull(t, tensor(2.0)), 1.5, math.gamma(1.5)),
    (lambda t: D.InverseGamma(tensor(4.0), t), 2.0, 1 / 3),
    (lambda t: D.Kumaraswamy(t, tensor(2.0)), 3.0, None),
    (lambda t: D.HalfCauchy(t), 2.0, None),
])
def test_rsample_gradient_of_mean(make, param, dmean):
    """d/dtheta of the sample mean over many seeded draws ~ d mean / d theta"""
    t = tensor(param, requires_grad=True)
    if dmean is None:   # no simple closed form: differentiate the mean formula instead
        t2 = tensor(param, requires_grad=True)
        if isinstance(make(t2), D.HalfCauchy):   # the median scales with s: use it
            gpugrad.manual_seed(5)
            x = make(t).rsample((N,))
            med = x.sort()[0][N // 2]
            med.backward()
            assert abs(float(t.grad) - float(med) / param) < 1e-9
            return
        make(t2).mean.backward()
        dmean = float(t2.grad)
    gpugrad.manual_seed(5)
    make(t).rsample((N,)).mean().backward()
    assert abs(float(t.grad) - dmean) < 0.03 * max(1.0, abs(dmean))


# ---- KL divergences ------------------------------------------------------------------------

def test_kl_lowrank_equals_dense():
    rng = np.random.default_rng(2)
    def lowrank():
        return D.LowRankMultivariateNormal(tensor(rng.normal(size=3)),
                                           tensor(rng.normal(size=(3, 2))),
                                           tensor(rng.uniform(0.5, 1.5, 3)))
    p, q = lowrank(), lowrank()
    dense = lambda d: D.MultivariateNormal(d.loc, covariance_matrix=d.covariance_matrix)
    expect = float(D.kl_divergence(dense(p), dense(q)))
    close(D.kl_divergence(p, q), expect)
    close(D.kl_divergence(dense(p), q), expect)
    close(D.kl_divergence(p, dense(q)), expect)
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(p, D.LowRankMultivariateNormal(gpugrad.zeros(2, dtype=F64),
                                                       gpugrad.ones(2, 1, dtype=F64),
                                                       gpugrad.ones(2, dtype=F64)))


def test_kl_pareto_closed_form_and_monte_carlo():
    p, q = D.Pareto(tensor(1.0), tensor(3.0)), D.Pareto(tensor(0.5), tensor(2.0))
    expect = 2 * math.log(2) - math.log(2 / 3) + 2 / 3 - 1
    close(D.kl_divergence(p, q), expect)
    gpugrad.manual_seed(0)
    x = p.sample((200000,))
    mc = to_numpy(p.log_prob(x) - q.log_prob(x))
    assert abs(mc.mean() - expect) < 5 * mc.std() / math.sqrt(x.shape[0])
    assert math.isinf(float(D.kl_divergence(q, p)))
    assert math.isinf(float(D.kl_divergence(D.Normal(tensor(0.0), tensor(1.0)), p)))


@pytest.mark.parametrize("p, q", [
    (lambda: D.Pareto(tensor(1.0), tensor(3.0)), lambda: D.Exponential(tensor(0.7))),
    (lambda: D.Pareto(tensor(1.0), tensor(3.0)), lambda: D.Gamma(tensor(2.0), tensor(0.7))),
    (lambda: D.Pareto(tensor(1.0), tensor(3.5)), lambda: D.Normal(tensor(1.0), tensor(2.0))),
    (lambda: D.Uniform(tensor(1.5), tensor(3.0)), lambda: D.Pareto(tensor(1.0), tensor(2.0))),
    (lambda: D.ContinuousBernoulli(tensor(0.3)), lambda: D.ContinuousBernoulli(tensor(0.8))),
    (lambda: D.Beta(tensor(2.0), tensor(3.0)), lambda: D.ContinuousBernoulli(tensor(0.8))),
    (lambda: D.ContinuousBernoulli(tensor(0.3)), lambda: D.Normal(tensor(0.2), tensor(0.7))),
    (lambda: D.ContinuousBernoulli(tensor(0.3)), lambda: D.Exponential(tensor(2.0))),
    (lambda: D.ContinuousBernoulli(tensor(0.3)), lambda: D.Uniform(tensor(-1.0), tensor(2.0))),
    (lambda: D.Uniform(tensor(0.2), tensor(0.9)), lambda: D.ContinuousBernoulli(tensor(0.8))),
])
def test_kl_monte_carlo(p, q):
    p, q = p(), q()
    gpugrad.manual_seed(1)
    x = p.sample((200000,))
    mc = to_numpy(p.log_prob(x) - q.log_prob(x))
    kl = float(D.kl_divergence(p, q))
    assert abs(mc.mean() - kl) < 5 * mc.std() / math.sqrt(x.shape[0]) + 1e-9, (mc.mean(), kl)


# ---- shapes, expand and validation ---------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda: D.HalfCauchy(gpugrad.ones(3, dtype=F64)),
    lambda: D.Pareto(gpugrad.ones(3, dtype=F64), gpugrad.ones(3, dtype=F64) * 2),
    lambda: D.Weibull(gpugrad.ones(3, dtype=F64), gpugrad.ones(3, dtype=F64) * 2),
    lambda: D.Kumaraswamy(gpugrad.ones(3, dtype=F64), gpugrad.ones(3, dtype=F64) * 2),
    lambda: D.InverseGamma(gpugrad.ones(3, dtype=F64) * 3, gpugrad.ones(3, dtype=F64)),
    lambda: D.FisherSnedecor(gpugrad.ones(3, dtype=F64) * 3, gpugrad.ones(3, dtype=F64) * 5),
    lambda: D.GeneralizedPareto(gpugrad.zeros(3, dtype=F64), gpugrad.ones(3, dtype=F64), 0.1),
    lambda: D.ContinuousBernoulli(gpugrad.ones(3, dtype=F64) * 0.3),
    lambda: D.NegativeBinomial(gpugrad.ones(3, dtype=F64) * 2, probs=gpugrad.ones(3) * 0.3),
    lambda: D.VonMises(gpugrad.zeros(3, dtype=F64), gpugrad.ones(3, dtype=F64)),
    lambda: D.Multinomial(5, probs=gpugrad.ones(3, 4, dtype=F64) / 4),
    lambda: D.LogisticNormal(gpugrad.zeros(3, 2, dtype=F64), gpugrad.ones(3, 2, dtype=F64)),
    lambda: D.LowRankMultivariateNormal(gpugrad.zeros(3, 2, dtype=F64),
                                        gpugrad.ones(2, 1, dtype=F64),
                                        gpugrad.ones(2, dtype=F64)),
])
def test_expand_and_sample_shapes(make):
    d = make()
    assert d.batch_shape == (3,)
    e = d.expand((5, 3))
    assert type(e) is type(d) and e.batch_shape == (5, 3) and e.event_shape == d.event_shape
    gpugrad.manual_seed(0)
    x = e.sample((2,))
    assert x.shape == (2, 5, 3) + tuple(d.event_shape)
    assert e.log_prob(x).shape == (2, 5, 3)
    if d.has_rsample:
        assert e.rsample((2,)).shape == x.shape


@pytest.mark.parametrize("make, match", [
    (lambda: D.HalfCauchy(tensor(-1.0)), "parameter scale .* of distribution HalfCauchy"),
    # the base distributions validate first, as in PyTorch
    (lambda: D.Pareto(tensor(1.0), tensor(0.0)), "parameter rate .* of distribution Exponential"),
    (lambda: D.InverseGamma(tensor(-1.0), tensor(2.0)), "parameter concentration .* Gamma"),
    (lambda: D.Weibull(tensor(1.0), tensor(-2.0)), "parameter concentration .* Weibull"),
    (lambda: D.Kumaraswamy(tensor(-1.0), tensor(2.0)), "parameter concentration1 .* Kumaraswamy"),
    (lambda: D.VonMises(tensor(0.0), tensor(-1.0)), "parameter concentration .* VonMises"),
    (lambda: D.GeneralizedPareto(tensor(0.0), tensor(-1.0), tensor(0.0)), "parameter scale "),
    (lambda: D.NegativeBinomial(tensor(2.0), probs=tensor(1.0)), "parameter probs "),
    (lambda: D.FisherSnedecor(tensor(-1.0), tensor(2.0)), "parameter concentration .* Gamma"),
])
def test_invalid_parameters(make, match):
    with pytest.raises(ValueError, match="Expected " + match):
        make()


def test_lowrank_invalid_diag_fails_in_cholesky():
    """as in PyTorch, the capacitance's Cholesky factorisation fails before validation"""
    with pytest.raises(gpugrad.linalg.LinAlgError, match="not positive-definite"):
        D.LowRankMultivariateNormal(gpugrad.zeros(2, dtype=F64), gpugrad.ones(2, 1, dtype=F64),
                                    -gpugrad.ones(2, dtype=F64))


def test_lowrank_shape_messages():
    z = gpugrad.zeros(3, dtype=F64)
    with pytest.raises(ValueError, match="loc must be at least one-dimensional."):
        D.LowRankMultivariateNormal(gpugrad.zeros((), dtype=F64), z, z)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices with shape 3 x m"):
        D.LowRankMultivariateNormal(z, gpugrad.zeros(2, 1, dtype=F64), z)


# ---- PyTorch as an oracle -------------------------------------------------------------------

def _pairs():
    P = lambda v: np.asarray(v, dtype=np.float64)
    return [
        ("HalfCauchy", (P([0.5, 2.0]),), {}, P([0.3, 1.5])),
        ("Pareto", (P([1.0, 2.0]), P([3.0, 2.5])), {}, P([1.5, 2.2])),
        ("Weibull", (P([1.5, 0.7]), P([2.0, 0.6])), {}, P([0.8, 2.0])),
        ("Kumaraswamy", (P([2.0, 0.5]), P([3.0, 2.0])), {}, P([0.3, 0.6])),
        ("InverseGamma", (P([3.0, 1.5]), P([2.0, 1.0])), {}, P([0.5, 2.0])),
        ("FisherSnedecor", (P([3.0, 5.0]), P([6.0, 9.0])), {}, P([0.7, 1.9])),
        ("NegativeBinomial", (P([3.0, 0.5]),), {"probs": P([0.4, 0.7])}, P([2.0, 5.0])),
        ("ContinuousBernoulli", (P([0.2, 0.4995]),), {}, P([0.3, 0.7])),
        ("VonMises", (P([0.5, -1.0]), P([2.0, 30.0])), {}, P([1.0, -0.9])),
        ("Multinomial", (4,), {"probs": P([0.2, 0.3, 0.5])}, P([1.0, 1.0, 2.0])),
        ("LogisticNormal", (P([0.2, -0.4]), P([1.0, 0.5])), {}, P([0.2, 0.5, 0.3])),
        ("LowRankMultivariateNormal", (P([1.0, 0.0, -1.0]), P([[1.0], [0.5], [0.2]]),
                                       P([0.5, 1.0, 2.0])), {}, P([0.3, 0.1, 0.0])),
    ]


@pytest.mark.parametrize("name, args, kwargs, value", _pairs(), ids=lambda v: str(v)[:20])
def test_torch_oracle(name, args, kwargs, value):
    torch = pytest.importorskip("torch")
    conv_t = lambda a: torch.tensor(a) if isinstance(a, np.ndarray) else a
    conv_g = lambda a: tensor(a) if isinstance(a, np.ndarray) else a
    dt = getattr(torch.distributions, name)(*map(conv_t, args),
                                            **{k: conv_t(v) for k, v in kwargs.items()})
    dg = getattr(D, name)(*map(conv_g, args), **{k: conv_g(v) for k, v in kwargs.items()})
    # NOTE: PyTorch's Bessel polynomials (VonMises) are good to ~1e-6, its Multinomial entropy
    # to ~1e-8; the exact values are checked against integrals above
    rtol = {"VonMises": 1e-5, "Multinomial": 1e-7}.get(name, 1e-9)
    close(dg.log_prob(tensor(value)), dt.log_prob(torch.tensor(value)).numpy(), rtol=rtol)
    for attr in ("mean", "variance"):
        try:
            expect = getattr(dt, attr).numpy()
        except NotImplementedError:
            continue
        close(getattr(dg, attr), expect, rtol=rtol)
    for method, arg in (("entropy", ()), ("cdf", (value,))):
        try:
            expect = getattr(dt, method)(*map(torch.tensor, arg)).numpy()
        except NotImplementedError:
            continue
        close(getattr(dg, method)(*map(tensor, arg)), expect, rtol=rtol)


def test_torch_oracle_kl():
    torch = pytest.importorskip("torch")
    TD, t = torch.distributions, lambda v: torch.tensor(v, dtype=torch.float64)
    cases = [
        (("Pareto", 1.0, 3.0), ("Pareto", 0.5, 2.0)),
        (("Pareto", 1.0, 3.0), ("Exponential", 0.7)),
        (("Pareto", 1.0, 3.0), ("Gamma", 2.0, 0.7)),
        (("Pareto", 1.0, 3.5), ("Normal", 1.0, 2.0)),
        (("Uniform", 1.5, 3.0), ("Pareto", 1.0, 2.0)),
        (("ContinuousBernoulli", 0.3), ("ContinuousBernoulli", 0.8)),
        (("Beta", 2.0, 3.0), ("ContinuousBernoulli", 0.8)),
        (("ContinuousBernoulli", 0.3), ("Normal", 0.2, 0.7)),
        (("ContinuousBernoulli", 0.3), ("Exponential", 2.0)),
        (("Normal", 0.0, 1.0), ("Pareto", 1.0, 2.0)),
    ]
    for (pn, *pa), (qn, *qa) in cases:
        kt = TD.kl_divergence(getattr(TD, pn)(*map(t, pa)), getattr(TD, qn)(*map(t, qa)))
        kg = D.kl_divergence(getattr(D, pn)(*map(tensor, pa)), getattr(D, qn)(*map(tensor, qa)))
        close(kg, kt.numpy(), rtol=1e-9)
