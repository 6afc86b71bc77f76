"""Reparameterised draws of the gamma family: the implicit gradient dx/da of a Gamma(a, 1)
draw against a high-precision evaluation (mpmath) and PyTorch's approximation (each skipped
when absent), and, for Gamma, Chi2, Beta, Dirichlet and StudentT, the pathwise gradients'
averages against the derivatives of the exact means."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.distributions._gamma_grad import standard_gamma_grad

A = np.array([0.1, 0.5, 1.0, 2.0, 5.0, 30.0, 300.0, 3.0, 1000.0, 0.01])
X = np.array([0.01, 0.3, 2.0, 1.5, 9.0, 28.0, 310.0, 40.0, 950.0, 1e-30])


def grad_tensor(data, device):
    return tensor(data, device, gpugrad.float64, requires_grad=True)


def test_implicit_gradient_matches_a_high_precision_evaluation():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    ours = standard_gamma_grad(np, A, X)
    for a, x, g in zip(A, X, ours):
        # dx/da = -(dP/da) / p(x; a), P the regularised lower incomplete gamma function
        dp = mp.diff(lambda s, x=x: mp.gammainc(s, 0, x, regularized=True), a)
        density = mp.exp((a - 1) * mp.log(x) - x - mp.loggamma(a))
        assert g == pytest.approx(float(-dp / density), rel=1e-7), (a, x)


def test_implicit_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    theirs = torch._standard_gamma_grad(torch.tensor(A), torch.tensor(X)).numpy()
    np.testing.assert_allclose(standard_gamma_grad(np, A, X), theirs, rtol=5e-4)


def test_the_gradient_keeps_the_quantile_fixed():
    # moving a by h and the draw by h dx/da leaves P(a, x) unchanged to first order
    a, x = np.array([0.7, 3.0, 12.0]), np.array([0.4, 4.5, 9.0])
    g = standard_gamma_grad(np, a, x)

    def P(a, x):
        return scipy.special.gammainc(a, x)
    h = 1e-6   # what is left is O(h^2): a gradient off by 1e-4 would leave 1e-4 of it
    moved = P(a + h, x + h * g) - P(a, x)
    unmoved = P(a + h, x) - P(a, x)
    assert np.all(np.abs(moved) < 1e-5 * np.abs(unmoved))


def test_gamma_rsample_gradients_and_graph(device):
    gpugrad.manual_seed(0)
    a, b = grad_tensor([0.6, 4.0], device), grad_tensor([2.0, 0.5], device)
    x = D.Gamma(a, b).rsample((4000,))
    assert D.Gamma(a, b).has_rsample and x.shape == (4000, 2)
    assert "StandardGammaBackward0" in {fn.name() for fn, _ in x.grad_fn.next_functions
                                        if fn is not None} | {
        f.name() for fn, _ in x.grad_fn.next_functions if fn is not None
        for f, _ in fn.next_functions if f is not None}
    x.mean(0).sum().backward()
    # d E[x] / da = 1 / b and d E[x] / db = -a / b^2, averaged over the draws
    np.testing.assert_allclose(to_numpy(a.grad), [0.5, 2.0], rtol=0.05)
    np.testing.assert_allclose(to_numpy(b.grad), [-0.15, -16.0], rtol=0.05)
    # the rate's gradient is exact draw by draw: x = g / b
    b2 = grad_tensor([2.0, 0.5], device)
    y = D.Gamma(a.detach(), b2).rsample((10,))
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(b2.grad), -(to_numpy(y) / to_numpy(b2)).sum(0),
                               rtol=1e-12)
    assert not D.Gamma(a, b).sample((3,)).requires_grad


def test_chi2_beta_dirichlet_and_student_t_gradients(device):
    gpugrad.manual_seed(1)
    n = 4000
    df = grad_tensor([3.0], device)
    D.Chi2(df).rsample((n,)).mean().backward()
    assert to_numpy(df.grad)[0] == pytest.approx(1.0, rel=0.05)   # E = df
    a, b = grad_tensor([2.0], device), grad_tensor([3.0], device)
    D.Beta(a, b).rsample((n,)).mean().backward()                  # E = a / (a + b)
    assert to_numpy(a.grad)[0] == pytest.approx(3 / 25, rel=0.08)
    assert to_numpy(b.grad)[0] == pytest.approx(-2 / 25, rel=0.08)
    c = grad_tensor([1.0, 2.0, 3.0], device)
    x = D.Dirichlet(c).rsample((n,))
    assert x.shape == (n, 3)
    np.testing.assert_allclose(to_numpy(x.sum(-1)), np.ones(n), rtol=1e-12)
    x[:, 0].mean().backward()                                     # E[x0] = c0 / sum(c)
    np.testing.assert_allclose(to_numpy(c.grad), [5 / 36, -1 / 36, -1 / 36], atol=0.012)
    loc, scale, nu = (grad_tensor([0.5], device), grad_tensor([2.0], device),
                      grad_tensor([9.0], device))
    t = D.StudentT(nu, loc, scale).rsample((n,))
    (t - loc.detach()).pow(2).mean().backward()   # E = scale^2 nu / (nu - 2)
    assert to_numpy(loc.grad)[0] == pytest.approx(0.0, abs=0.1)
    assert to_numpy(scale.grad)[0] == pytest.approx(2 * 2.0 * 9 / 7, rel=0.08)
    assert to_numpy(nu.grad)[0] == pytest.approx(-4.0 * 2 / 49, rel=0.25)


def test_second_derivative_through_a_gamma_draw_raises(device):
    a = grad_tensor([2.0], device)
    x = D.Gamma(a, 1.0).rsample()
    with pytest.raises(NotImplementedError, match="double backward through a Gamma draw"):
        gpugrad.autograd.grad(x.sum(), a, create_graph=True)
    assert math.isfinite(gpugrad.autograd.grad(D.Gamma(a, 1.0).rsample().sum(), a)[0].item())
