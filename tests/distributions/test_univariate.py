"""Univariate families (Gamma, Chi2, Beta, Poisson, Binomial, Geometric, Cauchy, HalfNormal,
LogNormal, Gumbel, StudentT) and Dirichlet, the multivariate Beta: closed forms in numpy,
gradcheck, seeded sample statistics, shapes, validation, KL, and PyTorch as an oracle where it
is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.autograd import gradcheck
from tests.distributions._oracle import _evaluate
from tests.distributions._special import LOG_SQRT_2PI
from tests.distributions._validation import _default_validation  # noqa: F401 (autouse)

EULER = 0.57721566490153286060


def grad_tensor(data, device="cpu"):
    return tensor(data, device, gpugrad.float64, requires_grad=True)


def close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(to_numpy(a), b, rtol=rtol, atol=atol)


def within(sample_stat, expected, std, n, k=6.0):
    """|sample statistic - expected| below k standard errors (seeded, far from the edge)."""
    np.testing.assert_array_less(np.abs(to_numpy(sample_stat) - expected),
                                 k * np.asarray(std) / math.sqrt(n) + 1e-12)


lgamma = np.vectorize(math.lgamma)


def digamma(x):
    """psi(x) for x > 0: shift up by the recurrence, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64).copy()
    acc = np.zeros_like(x)
    while (x < 16).any():
        small = x < 16
        acc -= np.where(small, 1 / x, 0)
        x = np.where(small, x + 1, x)
    r = 1 / (x * x)
    series = r * (1 / 12 - r * (1 / 120 - r * (1 / 252 - r * (1 / 240 - r / 132))))
    return acc + np.log(x) - 0.5 / x - series


def test_digamma_helper():
    np.testing.assert_allclose(digamma([1.0, 0.5, 10.0]),
                               [-EULER, -EULER - 2 * math.log(2), 2.251752589066721],
                               rtol=1e-13)


# -- closed forms -------------------------------------------------------------------------------
def test_gamma_and_chi2_closed_forms(device):
    a, b, x = np.array([0.5, 3.0, 7.5]), np.array([2.0, 0.7, 1.0]), np.array([0.3, 4.0, 0.0])
    d = D.Gamma(tensor(a, device), tensor(b, device))
    lp = d.log_prob(tensor(x, device))
    assert lp.device.type == device
    with np.errstate(divide="ignore"):
        expected = a * np.log(b) + (a - 1) * np.log(x) - b * x - lgamma(a)
    close(lp, expected)
    close(d.entropy(), a - np.log(b) + lgamma(a) + (1 - a) * digamma(a))
    close(d.mean, a / b)
    close(d.variance, a / b ** 2)
    close(d.mode, np.maximum((a - 1) / b, 0))
    k = np.array([1.0, 3.0])
    c = D.Chi2(tensor(k, device))
    close(c.df, k)
    close(c.log_prob(tensor([0.5, 2.0], device)),
          (k / 2 - 1) * np.log([0.5, 2.0]) - np.array([0.5, 2.0]) / 2 - k / 2 * math.log(2)
          - lgamma(k / 2))
    close(c.mean, k)
    close(c.variance, 2 * k)


def test_beta_closed_forms(device):
    a, b = np.array([0.5, 3.0, 2.0, 0.3]), np.array([2.0, 0.7, 5.0, 0.2])
    x = np.array([0.3, 0.9, 0.5, 0.01])
    d = D.Beta(tensor(a, device), tensor(b, device))
    lbeta = lgamma(a) + lgamma(b) - lgamma(a + b)
    close(d.log_prob(tensor(x, device)), (a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - lbeta)
    close(d.entropy(), lbeta - (a - 1) * digamma(a) - (b - 1) * digamma(b)
          + (a + b - 2) * digamma(a + b))
    close(d.mean, a / (a + b))
    close(d.variance, a * b / ((a + b) ** 2 * (a + b + 1)))
    close(d.mode, [0.0, 1.0, 0.2, 1.0])   # (a - 1)_+ normalised; both below 1: a >= b
    u = D.Beta(1.0, 1.0)
    close(u.log_prob(tensor([0.0, 0.5, 1.0])), [0.0, 0.0, 0.0])   # 0 log 0 = 0 at the ends


def test_dirichlet_closed_forms(device):
    a = np.array([[0.5, 3.0, 1.2], [2.0, 2.0, 2.0]])
    x = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    d = D.Dirichlet(tensor(a, device))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    a0 = a.sum(-1)
    close(d.log_prob(tensor(x, device)),
          ((a - 1) * np.log(x)).sum(-1) + lgamma(a0) - lgamma(a).sum(-1))
    close(d.entropy(), lgamma(a).sum(-1) - lgamma(a0) - (3 - a0) * digamma(a0)
          - ((a - 1) * digamma(a)).sum(-1))
    close(d.mean, a / a0[:, None])
    close(d.variance, a * (a0[:, None] - a) / (a0[:, None] ** 2 * (a0[:, None] + 1)))
    close(d.mode[1], [1 / 3, 1 / 3, 1 / 3])
    close(D.Dirichlet(tensor([0.5, 0.9, 0.2])).mode, [0.0, 1.0, 0.0])   # corner: argmax
    beta = D.Beta(tensor(a[:, 0]), tensor(a[:, 1]))
    pair = D.Dirichlet(tensor(a[:, :2]))
    v = np.array([0.3, 0.6])
    close(beta.log_prob(tensor(v)), to_numpy(pair.log_prob(tensor(np.stack([v, 1 - v], -1)))))


def test_poisson_closed_forms(device):
    rate, k = np.array([0.5, 30.0, 0.0]), np.array([2.0, 25.0, 0.0])
    d = D.Poisson(tensor(rate, device))
    close(d.log_prob(tensor(k, device)), [2 * math.log(0.5) - 0.5 - math.log(2),
                                          25 * math.log(30) - 30 - math.lgamma(26), 0.0])
    close(d.mean, rate)
    close(d.variance, rate)
    close(d.mode, np.floor(rate))


def test_binomial_closed_forms(device):
    n, p, k = np.array([5.0, 10.0, 10.0]), np.array([0.3, 0.8, 1.0]), np.array([2.0, 10.0, 10.0])
    log_comb = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1)
    d = D.Binomial(tensor(n, device), probs=tensor(p, device))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = log_comb + k * np.log(p) + (n - k) * np.log1p(-p)
    close(d.log_prob(tensor(k, device))[:2], expected[:2])
    logits = np.array([-0.3, 1.8])
    d = D.Binomial(7, logits=tensor(logits, device))
    q = 1 / (1 + np.exp(-logits))
    kk = np.array([2.0, 7.0])
    close(d.log_prob(tensor(kk, device)),
          lgamma(8) - lgamma(kk + 1) - lgamma(8 - kk) + kk * np.log(q) + (7 - kk) * np.log1p(-q),
          rtol=1e-11)
    close(d.mean, 7 * q)
    close(d.variance, 7 * q * (1 - q))
    close(d.mode, np.minimum(np.floor(8 * q), 7))
    pmf = np.exp(to_numpy(d.log_prob(d.enumerate_support())))
    close(pmf.sum(0), [1.0, 1.0])
    close(d.entropy(), -(pmf * np.log(pmf)).sum(0))
    assert d.enumerate_support().shape == (8, 2)
    with pytest.raises(NotImplementedError, match="Inhomogeneous"):
        D.Binomial(tensor([2.0, 3.0]), tensor([0.5, 0.5])).entropy()


def test_geometric_closed_forms(device):
    p, k = np.array([0.3, 0.9, 1.0]), np.array([2.0, 5.0, 0.0])
    d = D.Geometric(tensor(p, device))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = k * np.log1p(-p) + np.log(p)
        entropy = (-p * np.log(p) - (1 - p) * np.log1p(-p)) / p
    expected[2] = 0.0   # p = 1: all mass on k = 0
    close(d.log_prob(tensor(k, device)), expected)
    close(d.mean, 1 / p - 1)
    close(d.variance, (1 / p - 1) / p)
    close(d.mode, [0.0, 0.0, 0.0])
    close(d.entropy()[:2], entropy[:2])
    by_logits = D.Geometric(logits=tensor(np.log(p[:2] / (1 - p[:2])), device))
    close(by_logits.log_prob(tensor(k[:2], device)), expected[:2], rtol=1e-10)


def test_cauchy_gumbel_closed_forms(device):
    loc, scale, x = np.array([0.3, -1.0]), np.array([2.0, 0.5]), np.array([1.0, -1.7])
    c = D.Cauchy(tensor(loc, device), tensor(scale, device))
    z = (x - loc) / scale
    close(c.log_prob(tensor(x, device)), -np.log(np.pi * scale) - np.log1p(z ** 2))
    close(c.cdf(tensor(x, device)), np.arctan(z) / np.pi + 0.5)
    close(c.icdf(c.cdf(tensor(x, device))), x)
    close(c.entropy(), np.log(4 * np.pi * scale))
    assert np.isnan(to_numpy(c.mean)).all() and np.isinf(to_numpy(c.variance)).all()
    close(c.mode, loc)
    g = D.Gumbel(tensor(loc, device), tensor(scale, device))
    close(g.log_prob(tensor(x, device)), -np.log(scale) - z - np.exp(-z))
    close(g.cdf(tensor(x, device)), np.exp(-np.exp(-z)))
    close(g.icdf(g.cdf(tensor(x, device))), x)
    close(g.mean, loc + scale * EULER)
    close(g.mode, loc)
    close(g.variance, np.pi ** 2 / 6 * scale ** 2)
    close(g.entropy(), np.log(scale) + 1 + EULER)


def test_half_normal_and_log_normal_closed_forms(device):
    s, x = np.array([0.3, 2.0]), np.array([0.5, 1.5])
    h = D.HalfNormal(tensor(s, device))
    close(h.log_prob(tensor(x, device)), math.log(2) - x ** 2 / (2 * s ** 2) - np.log(s)
          - LOG_SQRT_2PI)
    close(h.mean, s * math.sqrt(2 / math.pi))
    close(h.variance, s ** 2 * (1 - 2 / math.pi))
    close(h.entropy(), 0.5 * math.log(math.pi / 2) + np.log(s) + 0.5)
    close(h.cdf(tensor(x, device)), np.vectorize(math.erf)(x / (s * math.sqrt(2))))
    close(h.icdf(h.cdf(tensor(x, device))), x, rtol=1e-9)
    loc = np.array([0.3, -1.0])
    ln = D.LogNormal(tensor(loc, device), tensor(s, device))
    close(ln.log_prob(tensor(x, device)), -(np.log(x) - loc) ** 2 / (2 * s ** 2) - np.log(s)
          - LOG_SQRT_2PI - np.log(x))
    close(ln.mean, np.exp(loc + s ** 2 / 2))
    close(ln.mode, np.exp(loc - s ** 2))
    close(ln.variance, np.expm1(s ** 2) * np.exp(2 * loc + s ** 2))
    close(ln.entropy(), loc + 0.5 + LOG_SQRT_2PI + np.log(s))
    close(ln.icdf(ln.cdf(tensor(x, device))), x, rtol=1e-10)


def test_student_t_closed_forms(device):
    df, loc, scale = np.array([0.8, 1.5, 4.0]), np.array([0.3, 1.0, 0.0]), np.array([2.0, 0.5, 1])
    x = np.array([2.0, 0.4, -1.0])
    d = D.StudentT(tensor(df, device), tensor(loc, device), tensor(scale, device))
    y = (x - loc) / scale
    close(d.log_prob(tensor(x, device)),
          lgamma((df + 1) / 2) - lgamma(df / 2) - 0.5 * np.log(df * np.pi) - np.log(scale)
          - (df + 1) / 2 * np.log1p(y ** 2 / df))
    lbeta = lgamma(df / 2) + math.lgamma(0.5) - lgamma((df + 1) / 2)
    close(d.entropy(), np.log(scale) + (df + 1) / 2 * (digamma((df + 1) / 2) - digamma(df / 2))
          + 0.5 * np.log(df) + lbeta)
    mean, var = to_numpy(d.mean), to_numpy(d.variance)
    assert np.isnan(mean[0]) and np.isnan(var[0]) and np.isinf(var[1])
    close(mean[1:], loc[1:])
    close(var[2], 4.0 / 2.0)
    close(d.mode, loc)
    cauchy = D.Cauchy(tensor(loc), tensor(scale))   # df = 1 is the Cauchy
    close(D.StudentT(1.0, tensor(loc), tensor(scale)).log_prob(tensor(x)),
          to_numpy(cauchy.log_prob(tensor(x))), rtol=1e-12)


# -- gradients ----------------------------------------------------------------------------------
GRADCHECKS = {
    "gamma": (lambda a, b: D.Gamma(a, b).log_prob(tensor([0.3, 2.5])), ([0.7, 3.0], [2.0, 0.5])),
    "chi2": (lambda k: D.Chi2(k).log_prob(tensor([0.3, 2.5])), ([1.5, 4.0],)),
    "beta": (lambda a, b: D.Beta(a, b).log_prob(tensor([0.3, 0.8])), ([0.7, 3.0], [2.0, 0.5])),
    "dirichlet": (lambda a: D.Dirichlet(a).log_prob(tensor([0.2, 0.3, 0.5])), ([0.7, 3.0, 1.1],)),
    "poisson": (lambda r: D.Poisson(r).log_prob(tensor([0.0, 4.0])), ([0.7, 3.0],)),
    "binomial": (lambda p: D.Binomial(6, p).log_prob(tensor([0.0, 4.0])), ([0.2, 0.6],)),
    "binomial_logits": (lambda lg: D.Binomial(6, logits=lg).log_prob(tensor([1.0, 6.0])),
                        ([0.2, -0.6],)),
    "geometric": (lambda p: D.Geometric(p).log_prob(tensor([0.0, 4.0])), ([0.2, 0.6],)),
    "cauchy": (lambda m, s: D.Cauchy(m, s).log_prob(tensor([0.0, 4.0])), ([0.2, 0.6], [1, 2])),
    "gumbel": (lambda m, s: D.Gumbel(m, s).log_prob(tensor([0.0, 4.0])), ([0.2, 0.6], [1, 2])),
    "half_normal": (lambda s: D.HalfNormal(s).log_prob(tensor([0.5, 4.0])), ([0.7, 2.0],)),
    "log_normal": (lambda m, s: D.LogNormal(m, s).log_prob(tensor([0.5, 4.0])),
                   ([0.2, 0.6], [1, 2])),
    "student_t": (lambda df, m, s: D.StudentT(df, m, s).log_prob(tensor([0.0, 4.0])),
                  ([0.9, 5.0], [0.2, 0.6], [1, 2])),
    "gamma_entropy": (lambda a, b: D.Gamma(a, b).entropy(), ([0.7, 3.0], [2.0, 0.5])),
    "beta_entropy": (lambda a, b: D.Beta(a, b).entropy(), ([0.7, 3.0], [2.0, 0.5])),
    "student_t_entropy": (lambda df: D.StudentT(df).entropy(), ([0.9, 5.0],)),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck(name):
    fn, args = GRADCHECKS[name]
    assert gradcheck(fn, tuple(grad_tensor(np.asarray(a, dtype=np.float64)) for a in args))


def test_kl_gradcheck():
    a, b = grad_tensor([0.7, 3.0]), grad_tensor([2.0, 0.5])
    assert gradcheck(lambda x, y: D.kl_divergence(D.Gamma(x, y), D.Gamma(1.5, 1.2)), (a, b))
    assert gradcheck(lambda x, y: D.kl_divergence(D.Beta(x, y), D.Beta(1.5, 1.2)), (a, b))
    c = grad_tensor([0.7, 3.0, 1.1])
    assert gradcheck(lambda x: D.kl_divergence(D.Dirichlet(x), D.Dirichlet(tensor([1.0, 2, 3]))),
                     (c,))


def test_rsample_is_reparameterised(device):
    loc, scale = grad_tensor([0.5, -1.0], device), grad_tensor([2.0, 0.5], device)
    for cls in (D.Cauchy, D.Gumbel, D.LogNormal):
        loc.grad = scale.grad = None
        x = cls(loc, scale).rsample((50,))
        assert x.shape == (50, 2) and x.requires_grad and x.device.type == device
        x.sum().backward()
        xs = to_numpy(x)
        if cls is D.LogNormal:   # x = exp(loc + eps scale)
            close(loc.grad, xs.sum(0))
            close(scale.grad, (xs * (np.log(xs) - to_numpy(loc)) / to_numpy(scale)).sum(0),
                  rtol=1e-10)
        else:                    # x = loc + eps scale
            close(loc.grad, [50.0, 50.0])
            close(scale.grad, ((xs - to_numpy(loc)) / to_numpy(scale)).sum(0), rtol=1e-10)
    s = grad_tensor([0.3, 2.0], device)
    x = D.HalfNormal(s).rsample((40,))
    x.sum().backward()
    close(s.grad, (to_numpy(x) / to_numpy(s)).sum(0), rtol=1e-12)


# -- sampling -----------------------------------------------------------------------------------
def _moments(d, n):
    s = to_numpy(d.sample((n,)))
    return s, to_numpy(d.mean), to_numpy(d.variance)


@pytest.mark.parametrize("name", ["gamma", "chi2", "beta", "dirichlet", "poisson", "binomial",
                                  "geometric", "half_normal", "log_normal", "gumbel",
                                  "student_t"])
def test_sample_mean_and_variance(name, device):
    T = lambda a: tensor(a, device)   # noqa: E731
    d = {"gamma": lambda: D.Gamma(T([0.3, 1.0, 5.0]), T([1.0, 2.0, 0.5])),
         "chi2": lambda: D.Chi2(T([0.5, 3.0])),
         "beta": lambda: D.Beta(T([0.3, 2.0, 5.0]), T([0.5, 7.0, 1.0])),
         "dirichlet": lambda: D.Dirichlet(T([[0.3, 2.0, 4.0], [1.0, 1.0, 1.0]])),
         "poisson": lambda: D.Poisson(T([0.0, 0.3, 4.0, 9.99, 10.0, 57.0, 1e4])),
         "binomial": lambda: D.Binomial(T([0.0, 5.0, 300.0, 1000.0]),
                                        T([0.4, 0.3, 0.5, 0.99])),
         "geometric": lambda: D.Geometric(T([0.3, 0.9, 0.05, 1.0])),
         "half_normal": lambda: D.HalfNormal(T([0.3, 2.0])),
         "log_normal": lambda: D.LogNormal(T([0.3, -1.0]), T([0.2, 0.5])),
         "gumbel": lambda: D.Gumbel(T([0.3, -1.0]), T([2.0, 0.5])),
         "student_t": lambda: D.StudentT(T([5.0, 10.0]), T([1.0, -2.0]), T([2.0, 0.5]))}[name]()
    gpugrad.manual_seed(0)
    n = 100_000
    x = d.sample((n,))
    assert x.device.type == device and x.shape == (n,) + tuple(d.batch_shape + d.event_shape)
    assert not x.requires_grad
    s, mean, var = to_numpy(x), to_numpy(d.mean), to_numpy(d.variance)
    assert d.support.check(x).all().item()
    within(s.mean(0), mean, np.sqrt(var), n)
    # the sample variance: its spread is bounded by sqrt(mu4 - var^2); est. from the draws
    mu4 = ((s - s.mean(0)) ** 4).mean(0)
    within(s.var(0), var, np.sqrt(np.maximum(mu4 - var ** 2, 0)) + 1e-12, n)


def test_gamma_and_chi2_cdf_in_closed_form(device):
    # P(1, x) = 1 - e^-x, P(3, x) = 1 - e^-x (1 + x + x^2 / 2); Chi2(2) is Gamma(1, 1/2)
    x = np.array([0.3, 1.0, 4.0])
    g = D.Gamma(tensor([1.0, 3.0, 3.0], device), tensor([1.0, 1.0, 2.0], device))
    bx = x * np.array([1.0, 1.0, 2.0])
    close(g.cdf(tensor(x, device)),
          [1 - math.exp(-bx[0])] + [1 - math.exp(-v) * (1 + v + v * v / 2) for v in bx[1:]])
    close(D.Chi2(tensor([2.0], device)).cdf(tensor(x, device)), 1 - np.exp(-x / 2))


def test_gamma_draws_follow_the_cdf():
    """Both Marsaglia-Tsang branches (a < 1 boosted, a >= 1) against closed-form cdfs:
    F(x; 1/2) = erf(sqrt x), F(x; 3) = 1 - exp(-x) (1 + x + x^2 / 2)."""
    gpugrad.manual_seed(1)
    n = 100_000
    s = to_numpy(D.Gamma(tensor([0.5, 3.0]), 1.0).sample((n,)))
    for x in (0.01, 0.2, 1.0, 2.5, 6.0):
        cdf = np.array([math.erf(math.sqrt(x)), 1 - math.exp(-x) * (1 + x + x * x / 2)])
        within((s <= x).mean(0), cdf, np.sqrt(cdf * (1 - cdf)) + 1e-9, n)


@pytest.mark.parametrize("rate", [3.5, 25.0])
def test_poisson_frequencies_match_pmf(rate):
    """Inversion (small rates) and transformed rejection (large) against the pmf, per value."""
    gpugrad.manual_seed(2)
    n = 100_000
    s = to_numpy(D.Poisson(rate).sample((n,)))
    assert (s == np.floor(s)).all() and (s >= 0).all()
    k = np.arange(int(rate + 5 * math.sqrt(rate)))
    pmf = np.exp(k * math.log(rate) - rate - lgamma(k + 1))
    freq = (s[:, None] == k).mean(0)
    within(freq, pmf, np.sqrt(pmf * (1 - pmf)) + 1e-9, n)


def test_binomial_frequencies_match_pmf():
    gpugrad.manual_seed(3)
    n = 100_000
    s = to_numpy(D.Binomial(600, tensor(0.2)).sample((n,)))   # crosses a chunk boundary
    k = np.arange(90, 150)
    pmf = np.exp(lgamma(601) - lgamma(k + 1) - lgamma(601 - k) + k * math.log(0.2)
                 + (600 - k) * math.log(0.8))
    within((s[:, None] == k).mean(0), pmf, np.sqrt(pmf * (1 - pmf)) + 1e-9, n)


def test_sampling_reproducible_and_float32():
    d = D.Dirichlet(tensor([0.5, 2.0, 3.0], dtype=gpugrad.float32))
    gpugrad.manual_seed(5)
    a = to_numpy(d.sample((4,)))
    gpugrad.manual_seed(5)
    b = to_numpy(d.sample((4,)))
    np.testing.assert_array_equal(a, b)
    assert a.dtype == np.float32
    np.testing.assert_allclose(a.sum(-1), 1.0, rtol=1e-6)
    small = to_numpy(D.Gamma(tensor([1e-3], dtype=gpugrad.float32), 1.0).sample((1000,)))
    assert (small > 0).all() and np.isfinite(small).all()   # clamped to tiny, not 0


# -- shapes, expand, validation -----------------------------------------------------------------
SHAPED = {
    "gamma": lambda: D.Gamma(tensor(np.full((2, 3), 2.0)), 1.5),
    "chi2": lambda: D.Chi2(tensor(np.full((2, 3), 2.0))),
    "beta": lambda: D.Beta(tensor(np.full((2, 3), 2.0)), 1.5),
    "dirichlet": lambda: D.Dirichlet(tensor(np.full((2, 3, 4), 2.0))),
    "poisson": lambda: D.Poisson(tensor(np.full((2, 3), 2.0))),
    "binomial": lambda: D.Binomial(4, tensor(np.full((2, 3), 0.3))),
    "geometric": lambda: D.Geometric(logits=tensor(np.zeros((2, 3)))),
    "cauchy": lambda: D.Cauchy(tensor(np.zeros((2, 3))), 1.0),
    "half_normal": lambda: D.HalfNormal(tensor(np.ones((2, 3)))),
    "log_normal": lambda: D.LogNormal(tensor(np.zeros((2, 3))), 1.0),
    "gumbel": lambda: D.Gumbel(tensor(np.zeros((2, 3))), 1.0),
    "student_t": lambda: D.StudentT(tensor(np.full((2, 3), 3.0))),
}


@pytest.mark.parametrize("name", list(SHAPED))
def test_shapes_and_expand(name):
    d = SHAPED[name]()
    event = tuple(d.event_shape)
    assert tuple(d.batch_shape) == (2, 3)
    x = d.sample((5,))
    assert x.shape == (5, 2, 3) + event
    assert d.log_prob(x).shape == (5, 2, 3)
    e = d.expand((4, 2, 3))
    assert type(e) is type(d) and tuple(e.batch_shape) == (4, 2, 3)
    assert e.sample().shape == (4, 2, 3) + event
    close(e.log_prob(x[0]), np.broadcast_to(to_numpy(d.log_prob(x[0])), (4, 2, 3)))
    close(e.mean, np.broadcast_to(to_numpy(d.mean), (4, 2, 3) + event))


def test_scalar_parameters_give_empty_batch_shape():
    for d in (D.Gamma(2.0, 1.0), D.Chi2(3.0), D.Beta(2.0, 1.0), D.Poisson(2.0),
              D.Binomial(3, 0.5), D.Geometric(0.5), D.Cauchy(0.0, 1.0), D.HalfNormal(1.0),
              D.LogNormal(0.0, 1.0), D.Gumbel(0.0, 1.0), D.StudentT(2.0)):
        assert d.batch_shape == () and d.sample().shape == () and d.sample((3,)).shape == (3,)


@pytest.mark.parametrize("make", [
    lambda: D.Gamma(tensor([1.0, -1.0]), 1.0), lambda: D.Gamma(1.0, tensor([0.0])),
    lambda: D.Chi2(tensor([-2.0])), lambda: D.Beta(tensor([0.0]), 1.0),
    lambda: D.Dirichlet(tensor([1.0, 0.0])), lambda: D.Poisson(tensor([-0.5])),
    lambda: D.Binomial(tensor([2.5]), tensor([0.5])), lambda: D.Binomial(3, tensor([1.5])),
    lambda: D.Geometric(tensor([0.0])), lambda: D.Geometric(tensor([1.2])),
    lambda: D.Cauchy(0.0, tensor([-1.0])), lambda: D.HalfNormal(tensor([0.0])),
    lambda: D.LogNormal(tensor([math.nan]), 1.0), lambda: D.Gumbel(0.0, tensor([-1.0])),
    lambda: D.StudentT(tensor([0.0])),
])
def test_invalid_parameters_raise(make):
    with pytest.raises(ValueError, match="Expected parameter"):
        make()


@pytest.mark.parametrize("d, bad", [
    (lambda: D.Gamma(2.0, 1.0), [-0.1]), (lambda: D.Beta(2.0, 1.0), [1.5]),
    (lambda: D.Dirichlet(tensor([1.0, 2.0])), [[0.3, 0.6]]), (lambda: D.Poisson(2.0), [1.5]),
    (lambda: D.Poisson(2.0), [-1.0]), (lambda: D.Binomial(3, 0.5), [4.0]),
    (lambda: D.Geometric(0.5), [0.5]), (lambda: D.HalfNormal(1.0), [-1.0]),
    (lambda: D.LogNormal(0.0, 1.0), [0.0]),
])
def test_invalid_values_raise(d, bad):
    with pytest.raises(ValueError, match="support"):
        d().log_prob(tensor(bad))


def test_validation_can_be_turned_off_and_dirichlet_needs_a_vector():
    D.Gamma(tensor([-1.0]), 1.0, validate_args=False)
    assert D.Poisson(2.0, validate_args=False).log_prob(tensor([1.5])).shape == (1,)
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(tensor(1.0))
    with pytest.raises(ValueError, match="not both"):
        D.Binomial(3, probs=0.5, logits=0.0)
    with pytest.raises(ValueError, match="not both"):
        D.Geometric()


# -- KL divergence ------------------------------------------------------------------------------
def test_kl_closed_forms(device):
    T = lambda a: tensor(a, device)   # noqa: E731
    ap, bp, aq, bq = np.array([0.5, 3.0]), np.array([2.0, 0.7]), np.array([1.5, 0.4]), 1.3
    kl = D.kl_divergence(D.Gamma(T(ap), T(bp)), D.Gamma(T(aq), bq))
    assert kl.device.type == device
    close(kl, (ap - aq) * digamma(ap) - lgamma(ap) + lgamma(aq) + aq * np.log(bp / bq)
          + ap * (bq - bp) / bp, rtol=1e-11)
    rp, rq = np.array([0.5, 30.0]), np.array([2.0, 25.0])
    close(D.kl_divergence(D.Poisson(T(rp)), D.Poisson(T(rq))),
          rp * np.log(rp / rq) - rp + rq)
    rate = np.array([0.5, 3.0])
    close(D.kl_divergence(D.Exponential(T(rate)), D.Gamma(T(np.ones(2)), T(rq))),
          to_numpy(D.kl_divergence(D.Exponential(T(rate)), D.Exponential(T(rq)))), rtol=1e-11)
    a = np.array([[0.5, 3.0, 1.2], [2.0, 2.0, 2.0]])
    b = np.array([1.0, 2.0, 3.0])
    a0, b0 = a.sum(-1), b.sum()
    close(D.kl_divergence(D.Dirichlet(T(a)), D.Dirichlet(T(b))),
          lgamma(a0) - lgamma(b0) - (lgamma(a) - lgamma(b)).sum(-1)
          + ((a - b) * (digamma(a) - digamma(a0)[:, None])).sum(-1), rtol=1e-11)
    beta_p, beta_q = D.Beta(T(a[:, 0]), T(a[:, 1])), D.Beta(T(b[:1]), T(b[1:2]))
    dir_p, dir_q = D.Dirichlet(T(a[:, :2])), D.Dirichlet(T(b[:2]))
    close(D.kl_divergence(beta_p, beta_q), to_numpy(D.kl_divergence(dir_p, dir_q)), rtol=1e-11)
    for p in (D.Gamma(T(ap), T(bp)), beta_p, dir_p, D.Poisson(T(rp)), D.Geometric(T([0.3])),
              D.Gumbel(T([0.2]), T([1.5])), D.Cauchy(T([0.2]), T([1.5])),
              D.LogNormal(T([0.2]), T([1.5])), D.HalfNormal(T([1.5]))):
        close(D.kl_divergence(p, p), np.zeros(p.batch_shape), atol=1e-12)


def test_kl_does_not_mix_families():
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.LogNormal(0.0, 1.0), D.Normal(0.0, 1.0))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Gamma(1.0, 1.0), D.Beta(1.0, 1.0))


# -- PyTorch as the oracle ----------------------------------------------------------------------
def _cases(mod):
    T = lambda a: mod.tensor(np.asarray(a, dtype=np.float64))   # noqa: E731
    d = mod.distributions
    return {
        "gamma": (d.Gamma(T([0.5, 3.0]), T([2.0, 0.7])), T([0.3, 4.0])),
        "chi2": (d.Chi2(T([0.5, 3.0])), T([0.3, 4.0])),
        "beta": (d.Beta(T([0.5, 3.0, 0.3]), T([2.0, 0.7, 0.2])), T([0.3, 0.9, 0.5])),
        "dirichlet": (d.Dirichlet(T([[0.5, 3.0, 1.2], [2, 2, 2]])),
                      T([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])),
        "poisson": (d.Poisson(T([0.5, 30.0])), T([2.0, 25.0])),
        "binomial": (d.Binomial(T([5.0, 10.0]), T([0.3, 0.8])), T([2.0, 10.0])),
        "binomial_logits": (d.Binomial(7, logits=T([-0.3, 1.8])), T([2.0, 7.0])),
        "geometric": (d.Geometric(T([0.3, 1.0])), T([2.0, 0.0])),
        "geometric_logits": (d.Geometric(logits=T([0.3, -1.0])), T([2.0, 0.0])),
        "cauchy": (d.Cauchy(T([0.3, 1.0]), T([2.0, 0.5])), T([2.0, 0.0])),
        "half_normal": (d.HalfNormal(T([0.3, 1.0])), T([0.2, 0.7])),
        "log_normal": (d.LogNormal(T([0.3, 1.0]), T([2.0, 0.5])), T([2.0, 0.4])),
        "gumbel": (d.Gumbel(T([0.3, 1.0]), T([2.0, 0.5])), T([2.0, 0.4])),
        "student_t": (d.StudentT(T([0.8, 1.5, 4.0]), T([0.3, 1.0, 0.0]), T([2.0, 0.5, 1.0])),
                      T([2.0, 0.4, -1.0])),
    }


NOT_BUILT: set = set()   # (distribution, method) pairs PyTorch has and gpugrad does not
ORACLE_METHODS = ("log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf",
                  "probs", "logits")


@pytest.mark.parametrize("name", list(_cases(gpugrad)))
def test_matches_torch(name):
    torch = pytest.importorskip("torch")
    ours, value = _cases(gpugrad)[name]
    theirs, tvalue = _cases(torch)[name]
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.support.is_discrete == theirs.support.is_discrete
    compared = 0
    for m in ORACLE_METHODS:
        try:
            expected = _evaluate(theirs, tvalue, m)
        except (NotImplementedError, AttributeError):
            with pytest.raises((NotImplementedError, AttributeError)):
                _evaluate(ours, value, m)
            continue
        if (name, m) in NOT_BUILT:
            with pytest.raises(NotImplementedError):
                _evaluate(ours, value, m)
            continue
        mine = _evaluate(ours, value, m)
        np.testing.assert_allclose(to_numpy(mine), expected.detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=m)
        compared += 1
    assert compared >= 5


def _kl_pairs(mod):
    T = lambda a: mod.tensor(np.asarray(a, dtype=np.float64))   # noqa: E731
    d = mod.distributions
    return {
        "gamma": (d.Gamma(T([0.5, 3.0]), T([2.0, 0.7])), d.Gamma(T([1.5, 0.4]), T([1.0, 3.0]))),
        "chi2": (d.Chi2(T([2.0, 0.5])), d.Chi2(T([1.0, 1.5]))),
        "beta": (d.Beta(T([0.5, 3.0]), T([2.0, 0.7])), d.Beta(T([1.5, 0.4]), T([1.0, 3.0]))),
        "dirichlet": (d.Dirichlet(T([[0.5, 3.0, 1.2], [2, 2, 2]])), d.Dirichlet(T([1, 2, 3]))),
        "poisson": (d.Poisson(T([0.5, 30.0])), d.Poisson(T([2.0, 25.0]))),
        "exponential_gamma": (d.Exponential(T([0.5, 3.0])),
                              d.Gamma(T([1.5, 0.4]), T([1.0, 3.0]))),
        "geometric": (d.Geometric(T([0.3, 0.9])), d.Geometric(logits=T([0.2, -1.0]))),
        "gumbel": (d.Gumbel(T([0.3, 1.0]), T([2.0, 0.5])), d.Gumbel(T([0.0, -1.0]), T([1, 1.5]))),
        "cauchy": (d.Cauchy(T([0.3, 1.0]), T([2.0, 0.5])), d.Cauchy(T([0.0, -1.0]), T([1, 1.5]))),
        "log_normal": (d.LogNormal(T([0.3, 1.0]), T([2.0, 0.5])),
                       d.LogNormal(T([0.0, -1.0]), T([1.0, 1.5]))),
        "half_normal": (d.HalfNormal(T([2.0, 0.5])), d.HalfNormal(T([1.0, 1.5]))),
    }


@pytest.mark.parametrize("name", list(_kl_pairs(gpugrad)))
def test_kl_matches_torch(name):
    torch = pytest.importorskip("torch")
    p, q = _kl_pairs(gpugrad)[name]
    tp, tq = _kl_pairs(torch)[name]
    np.testing.assert_allclose(to_numpy(D.kl_divergence(p, q)),
                               torch.distributions.kl_divergence(tp, tq).numpy(), rtol=1e-10,
                               atol=1e-12)


GRAD_PARAMS = {"gamma": ("concentration", "rate"), "beta": ("concentration1", "concentration0"),
               "dirichlet": ("concentration",), "binomial_logits": ("logits",),
               "student_t": ("df", "loc", "scale"), "geometric": ("probs",),
               "log_normal": ("loc", "scale"), "half_normal": ("scale",)}


@pytest.mark.parametrize("name", list(GRAD_PARAMS))
def test_log_prob_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    grads = []
    for mod in (gpugrad, torch):
        d, v = _cases(mod)[name]
        params = GRAD_PARAMS[name]
        leaves = [getattr(d, k).detach().clone().requires_grad_(True) for k in params]
        kwargs = dict(zip(params, leaves))
        if name.startswith("binomial"):
            kwargs["total_count"] = d.total_count
        type(d)(**kwargs).log_prob(v).sum().backward()
        grads.append([to_numpy(t.grad) if mod is gpugrad else t.grad.numpy() for t in leaves])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_non_finite_parameters_do_not_hang_the_samplers():
    bad = tensor([math.inf, math.nan, 2.0])
    g = to_numpy(D.Gamma(bad, 1.0, validate_args=False).sample((3,)))
    p = to_numpy(D.Poisson(bad, validate_args=False).sample((3,)))
    for s in (g, p):
        assert np.isinf(s[:, 0]).all() and np.isnan(s[:, 1]).all() and np.isfinite(s[:, 2]).all()
