"""Wishart and LKJCholesky: densities against formulas written out in numpy, moments of seeded
draws, reparameterised gradients, shapes and messages; ExponentialFamily structure of the
distributions that derive from it."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.autograd import gradcheck
from gpugrad.distributions.exp_family import ExponentialFamily

P = 3


def _spd(rng, batch=(), p=P, ridge=1.0):
    a = rng.normal(size=batch + (p, p))
    return a @ np.swapaxes(a, -1, -2) + ridge * np.eye(p)


def _mvlgamma(a, p):
    """log Gamma_p(a) = p (p - 1) / 4 log pi + sum_{j=1..p} lgamma(a + (1 - j) / 2)"""
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a + (1 - j) / 2)
                                                     for j in range(1, p + 1))


def _digamma(x):
    """psi(x) for x > 0: shift above 10 by the recurrence, then the asymptotic series"""
    acc = 0.0
    while x < 10:
        acc -= 1 / x
        x += 1
    x2 = 1 / (x * x)
    return acc + math.log(x) - 0.5 / x - x2 * (1 / 12 - x2 * (1 / 120 - x2 / 252))


def _mvdigamma(a, p):
    return sum(_digamma(a - i / 2) for i in range(p))


def _wishart_logpdf(x, nu, v):
    p = v.shape[-1]
    return ((nu - p - 1) / 2 * np.linalg.slogdet(x)[1] - np.trace(np.linalg.solve(v, x)) / 2
            - nu * p / 2 * math.log(2) - nu / 2 * np.linalg.slogdet(v)[1] - _mvlgamma(nu / 2, p))


# -- Wishart ------------------------------------------------------------------------------------
@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_log_prob_matches_formula(device, rng, param):
    v = _spd(rng, (2,))
    nu = np.array([3.5, 7.0])
    arg = {"covariance_matrix": v, "precision_matrix": np.linalg.inv(v),
           "scale_tril": np.linalg.cholesky(v)}[param]
    d = D.Wishart(tensor(nu, device), **{param: tensor(arg, device)})
    x = _spd(rng, (4, 2), ridge=0.5)
    got = to_numpy(d.log_prob(tensor(x, device)))
    want = np.array([[_wishart_logpdf(x[i, j], nu[j], v[j]) for j in range(2)]
                     for i in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert d.batch_shape == (2,) and d.event_shape == (P, P)
    for name in ("covariance_matrix", "precision_matrix", "scale_tril"):
        want = {"covariance_matrix": v, "precision_matrix": np.linalg.inv(v),
                "scale_tril": np.linalg.cholesky(v)}[name]
        np.testing.assert_allclose(to_numpy(getattr(d, name)), want, rtol=1e-9, atol=1e-12)


def test_wishart_moments_and_entropy_match_formulas(device, rng):
    v = _spd(rng, (2,))
    nu = np.array([4.5, 3.0])
    d = D.Wishart(tensor(nu, device), covariance_matrix=tensor(v, device))
    n = nu[:, None, None]
    np.testing.assert_allclose(to_numpy(d.mean), n * v, rtol=1e-12)
    diag = np.diagonal(v, axis1=-2, axis2=-1)
    np.testing.assert_allclose(to_numpy(d.variance),
                               n * (v ** 2 + diag[:, :, None] * diag[:, None, :]), rtol=1e-12)
    mode = to_numpy(d.mode)
    np.testing.assert_allclose(mode[0], (4.5 - P - 1) * v[0], rtol=1e-12)
    assert np.isnan(mode[1]).all()   # nu <= p + 1: no mode
    want = np.array([(P + 1) / 2 * np.linalg.slogdet(v[i])[1] + P * (P + 1) / 2 * math.log(2)
                     + _mvlgamma(nu[i] / 2, P) - (nu[i] - P - 1) / 2 * _mvdigamma(nu[i] / 2, P)
                     + nu[i] * P / 2 for i in range(2)])
    np.testing.assert_allclose(to_numpy(d.entropy()), want, rtol=1e-10)
    # the closed form agrees with the Bregman form of the log normalizer over (theta1, theta2)
    np.testing.assert_allclose(to_numpy(ExponentialFamily.entropy(d).detach()), want, rtol=1e-8)


def test_wishart_rsample_moments(device, rng):
    gpugrad.manual_seed(0)
    v = _spd(rng)
    nu, n = 5.5, 20000
    d = D.Wishart(tensor(nu, device), covariance_matrix=tensor(v, device))
    x = to_numpy(d.rsample((n,)))
    assert x.shape == (n, P, P)
    np.testing.assert_allclose(x, np.swapaxes(x, -1, -2), atol=1e-9)
    assert (np.linalg.eigvalsh(x) > 0).all()
    var = nu * (v ** 2 + np.outer(np.diag(v), np.diag(v)))
    assert (np.abs(x.mean(0) - nu * v) < 4 * np.sqrt(var / n)).all()
    # sample variance of X_ij against nu (V_ij^2 + V_ii V_jj), to 5%
    np.testing.assert_allclose(x.var(0), var, rtol=0.05)


def test_wishart_rsample_df_gradient_is_pathwise(device, rng):
    """E[dX/d nu] = dE[X]/d nu = V: the chi-square draws carry the df gradient."""
    gpugrad.manual_seed(1)
    v = _spd(rng)
    n = 4000
    df = tensor(np.full(n, 4.0), device, requires_grad=True)
    x = D.Wishart(df, covariance_matrix=tensor(v, device)).rsample()
    x.sum().backward()
    g = to_numpy(df.grad)
    assert abs(g.mean() - v.sum()) < 4 * g.std() / math.sqrt(n)


def test_wishart_rsample_scale_tril_gradient(device, rng):
    """X = (L A)(L A)^T is smooth in L for a fixed draw of A."""
    L = tensor(np.linalg.cholesky(_spd(rng)), device, requires_grad=True)

    def f(scale_tril):
        gpugrad.manual_seed(3)
        return D.Wishart(tensor(6.0, device), scale_tril=scale_tril,
                         validate_args=False).rsample((2,))

    assert gradcheck(f, (L,), eps=1e-6, atol=1e-6)


def test_wishart_expand_and_messages(device, rng):
    v = tensor(_spd(rng), device)
    d = D.Wishart(tensor(4.0, device), covariance_matrix=v).expand((2, 3))
    assert d.batch_shape == (2, 3) and d.sample().shape == (2, 3, P, P)
    np.testing.assert_allclose(to_numpy(d.mean[1, 2]), 4 * to_numpy(v), rtol=1e-12)
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix or precision_matrix"):
        D.Wishart(tensor(4.0, device))
    with pytest.raises(ValueError, match="must be at least two-dimensional"):
        D.Wishart(tensor(4.0, device), covariance_matrix=tensor(np.ones(3), device))
    with pytest.raises(ValueError, match=r"Value of df=1.0 expected to be greater than "
                                         r"ndim - 1 = 2\."):
        D.Wishart(tensor(1.0, device), covariance_matrix=v, validate_args=True)
    with pytest.raises(ValueError, match=r"Value of df=tensor\(\[1\., 4\.\].* expected to be "
                                         r"greater than ndim - 1 = 2\."):
        D.Wishart(tensor([1.0, 4.0], device), covariance_matrix=v)   # validated by default
    with pytest.warns(UserWarning, match="Low df values detected"):
        assert D.Wishart(tensor(1.0, device), covariance_matrix=v,
                         validate_args=False).batch_shape == ()
    with pytest.warns(UserWarning, match="Low df values detected"):
        D.Wishart(tensor(2.5, device), covariance_matrix=v)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        D.Wishart(tensor(3.0, device), covariance_matrix=v)
    assert D.Wishart.support is D.constraints.positive_definite


def test_wishart_against_torch(rng):
    torch = pytest.importorskip("torch")
    v, x = _spd(rng, (2,)), _spd(rng, (5, 2))
    nu = np.array([3.5, 6.0])
    t = torch.distributions.Wishart(torch.tensor(nu), precision_matrix=torch.tensor(v))
    g = D.Wishart(tensor(nu), precision_matrix=tensor(v))
    np.testing.assert_allclose(to_numpy(g.log_prob(tensor(x))),
                               t.log_prob(torch.tensor(x)).numpy(), rtol=1e-10)
    for name in ("mean", "variance", "covariance_matrix"):
        np.testing.assert_allclose(to_numpy(getattr(g, name)), getattr(t, name).numpy(),
                                   rtol=1e-10)
    np.testing.assert_allclose(to_numpy(g.entropy()), t.entropy().numpy(), rtol=1e-10)


# -- LKJCholesky --------------------------------------------------------------------------------
def _lkj_log_prob(L, d, eta):
    """sum_{i=2..d} (2 (eta - 1) + d - i) log L_ii - log c_d(eta) (PyTorch's normaliser)"""
    alpha = eta + (d - 1) / 2
    log_c = ((d - 1) / 2 * math.log(math.pi) + _mvlgamma(alpha - 0.5, d - 1)
             - (d - 1) * math.lgamma(alpha))
    return sum((2 * (eta - 1) + d - i) * math.log(L[i - 1, i - 1])
               for i in range(2, d + 1)) - log_c


def _corr_cholesky(rng, d):
    a = rng.normal(size=(d, d))
    c = a @ a.T + np.eye(d)
    s = np.sqrt(np.diag(c))
    return np.linalg.cholesky(c / np.outer(s, s))


def test_lkj_log_prob_matches_formula(device, rng):
    d, etas = 4, np.array([0.5, 1.0, 2.5])
    L = np.stack([[_corr_cholesky(rng, d) for _ in etas] for _ in range(2)])
    got = to_numpy(D.LKJCholesky(d, tensor(etas, device)).log_prob(tensor(L, device)))
    want = np.array([[_lkj_log_prob(L[i, j], d, etas[j]) for j in range(3)] for i in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("eta", [1.0, 2.0, 3.5])
def test_lkj_density_integrates_to_one_in_two_dims(device, eta):
    """d = 2: L = [[1, 0], [r, sqrt(1 - r^2)]], and the density over r in (-1, 1) has mass 1."""
    r = np.linspace(-1, 1, 20001)[1:-1]
    L = np.zeros((r.size, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1, r, np.sqrt(1 - r * r)
    p = np.exp(to_numpy(D.LKJCholesky(2, tensor(eta, device)).log_prob(tensor(L, device))))
    assert abs(np.trapezoid(p, r) - 1) < 1e-3


def test_lkj_samples_are_correlation_cholesky_factors(device):
    gpugrad.manual_seed(0)
    d = 5
    s = to_numpy(D.LKJCholesky(d, tensor([0.5, 3.0], device)).sample((100,)))
    assert s.shape == (100, 2, d, d)
    np.testing.assert_array_equal(np.triu(s, 1), 0)
    assert (np.diagonal(s, axis1=-2, axis2=-1) > 0).all()
    np.testing.assert_allclose(np.linalg.norm(s, axis=-1), 1, atol=1e-12)
    assert bool(D.constraints.corr_cholesky.check(tensor(s, device)).all())


@pytest.mark.parametrize("d,eta", [(4, 2.0), (5, 0.8)])
def test_lkj_sample_moments(device, d, eta):
    """Every off-diagonal correlation of LKJ(eta) in d dims is 2 B - 1, B ~ Beta(a, a) with
    a = eta - 1 + d / 2: mean 0, variance 1 / (2 eta + d - 1), the same for every pair."""
    gpugrad.manual_seed(1)
    n = 20000
    s = to_numpy(D.LKJCholesky(d, tensor(eta, device)).sample((n,)))
    c = s @ np.swapaxes(s, -1, -2)
    r = c[:, np.tril_indices(d, -1)[0], np.tril_indices(d, -1)[1]]
    var = 1 / (2 * eta + d - 1)
    assert (np.abs(r.mean(0)) < 4 * math.sqrt(var / n)).all()
    np.testing.assert_allclose(r.var(0), var, rtol=0.05)


def test_lkj_shapes_expand_and_messages(device):
    d = D.LKJCholesky(3, tensor(1.5, device))
    assert d.batch_shape == () and d.event_shape == (3, 3)
    e = d.expand((2, 4))
    assert e.batch_shape == (2, 4) and e.sample((5,)).shape == (5, 2, 4, 3, 3)
    assert D.LKJCholesky(3).batch_shape == ()
    with pytest.raises(ValueError, match="Expected dim to be an integer greater than or equal to "
                                         "2. Found dim=1."):
        D.LKJCholesky(1)


def test_lkj_against_torch(rng):
    torch = pytest.importorskip("torch")
    etas = np.array([0.7, 2.0])
    t = torch.distributions.LKJCholesky(4, torch.tensor(etas))
    v = t.sample((6,))
    np.testing.assert_allclose(to_numpy(D.LKJCholesky(4, tensor(etas)).log_prob(tensor(v.numpy()))),
                               t.log_prob(v).numpy(), rtol=1e-12)


# -- ExponentialFamily members ------------------------------------------------------------------
def _members(device):
    t = lambda v: tensor(v, device)  # noqa: E731
    return [D.Normal(t([0.3, -1.0]), t([0.5, 2.0])), D.Gamma(t([0.7, 3.0]), t([2.0, 0.5])),
            D.Beta(t([0.7, 3.0]), t([2.0, 0.5])), D.Bernoulli(probs=t([0.2, 0.9])),
            D.Exponential(t([0.5, 3.0])), D.Dirichlet(t([[0.5, 2.0, 3.0]])),
            D.Poisson(t([0.5, 3.0]))]


def test_exponential_family_members(device):
    for d in _members(device):
        assert isinstance(d, ExponentialFamily), type(d).__name__
        if isinstance(d, D.Poisson):   # E[log k!] has no closed form
            continue
        np.testing.assert_allclose(to_numpy(ExponentialFamily.entropy(d).detach()),
                                   to_numpy(d.entropy()), rtol=1e-10, atol=1e-12)
    assert not isinstance(D.Binomial(3, probs=tensor([0.5], device)), ExponentialFamily)
    assert not isinstance(D.Categorical(probs=tensor([0.5, 0.5], device)), ExponentialFamily)


def test_exponential_family_bregman_kl(device):
    from gpugrad.distributions.exp_family import kl_expfamily_expfamily
    p = D.Poisson(tensor([0.7, 3.0], device))
    q = D.Poisson(tensor([1.7, 2.0], device))
    lam_p, lam_q = np.array([0.7, 3.0]), np.array([1.7, 2.0])
    want = lam_p * np.log(lam_p / lam_q) - lam_p + lam_q
    np.testing.assert_allclose(to_numpy(kl_expfamily_expfamily(p, q).detach()), want, rtol=1e-10)
    p = D.Beta(tensor([0.7, 3.0], device), tensor([2.0, 0.5], device))
    q = D.Beta(tensor([1.7, 2.0], device), tensor([1.0, 1.5], device))
    np.testing.assert_allclose(to_numpy(kl_expfamily_expfamily(p, q).detach()),
                               to_numpy(D.kl_divergence(p, q)), rtol=1e-10)
