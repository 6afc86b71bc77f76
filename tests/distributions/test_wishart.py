"""Wishart: densities against formulas written out in numpy, moments of seeded draws,
reparameterised gradients, shapes and messages; PyTorch as an oracle where it is installed."""
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
from tests.distributions._special import _mvlgamma

P = 3


def _spd(rng, batch=(), p=P, ridge=1.0):
    a = rng.normal(size=batch + (p, p))
    return a @ np.swapaxes(a, -1, -2) + ridge * np.eye(p)


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
