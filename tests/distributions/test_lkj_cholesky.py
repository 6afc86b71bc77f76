"""LKJCholesky: the density against PyTorch's normaliser written out in numpy, samples that are
Cholesky factors of correlation matrices with the right moments, shapes and messages."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from tests.distributions._special import _mvlgamma


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
