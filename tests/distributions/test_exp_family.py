"""gpugrad.distributions.exp_family: which distributions are ExponentialFamily members, the
entropy the base class derives from the log normaliser, and its Bregman-divergence KL against
the closed forms."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

from gpugrad import distributions as D
from gpugrad.distributions.exp_family import ExponentialFamily
from tests.distributions._validation import _default_validation  # noqa: F401 (autouse)


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(to_numpy(a), b, rtol=rtol, atol=atol)


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


def test_kl_exponential_family_bregman():
    """the generic Bregman KL of the exponential-family base agrees with the closed form"""
    from gpugrad.distributions.exp_family import kl_expfamily_expfamily
    p, q = D.ContinuousBernoulli(tensor([0.3, 0.6])), D.ContinuousBernoulli(tensor([0.8, 0.1]))
    close(kl_expfamily_expfamily(p, q), to_numpy(D.kl_divergence(p, q)), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="cannot be computed using Bregman"):
        kl_expfamily_expfamily(p, _OtherFamily())


class _OtherFamily(D.ExponentialFamily):
    arg_constraints = {}

    def __init__(self):
        super().__init__()
