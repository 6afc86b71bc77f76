"""Transforms beyond the elementwise ones: onto structured spaces (StickBreaking, LowerCholesky,
PositiveDefinite, CorrCholesky), built from other transforms or distributions (Reshape,
Independent, Cat, Stack, CumulativeDistribution), and Softplus; log |det J| against finite
differences, and a TransformedDistribution built from them."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.distributions import constraints as C
from gpugrad.distributions import transforms as T
from tests.distributions._tensors import F64
from tests.distributions._validation import _default_validation  # noqa: F401 (autouse)


def close(a, b, rtol=1e-10, atol=1e-12):
    np.testing.assert_allclose(to_numpy(a), b, rtol=rtol, atol=atol)


def jacobian_logdet(f, x):
    """log |det df/dx| of a map R^n -> R^n by central differences (float64 numpy in/out)"""
    n, h = x.size, 1e-6
    J = np.empty((n, n))
    for i in range(n):
        e = np.zeros(n)
        e[i] = h
        J[:, i] = (f(x + e) - f(x - e)) / (2 * h)
    return np.linalg.slogdet(J)[1]


# ---- transforms ----------------------------------------------------------------------------

def test_softplus_transform(device):
    x = tensor([-3.0, 0.0, 2.5], device)
    t = T.SoftplusTransform()
    y = t(x)
    xn = np.array([-3.0, 0.0, 2.5])
    close(y, np.log1p(np.exp(xn)))
    close(t.inv(y), xn)
    close(t.log_abs_det_jacobian(x, y), -np.log1p(np.exp(-xn)))   # log sigmoid(x)
    assert t.domain is C.real and t.codomain is C.positive and t.bijective and t.sign == 1


def test_stick_breaking_transform(device):
    t = T.StickBreakingTransform()
    y = t(gpugrad.zeros(2, 3, dtype=F64, device=device))
    close(y, np.full((2, 4), 0.25))   # x = 0 maps to the centre of the simplex
    x = np.array([0.3, -1.2, 0.8])
    y = t(tensor(x, device))
    assert bool(C.simplex.check(y))
    close(t.inv(y), x)
    fwd = lambda v: to_numpy(t(tensor(v)))[:-1]   # the first K-1 coordinates parameterise y
    close(t.log_abs_det_jacobian(tensor(x, device), y), jacobian_logdet(fwd, x), rtol=1e-7)
    assert t.forward_shape((5, 3)) == (5, 4) and t.inverse_shape((5, 4)) == (5, 3)
    with pytest.raises(ValueError, match="Too few dimensions on input"):
        t.forward_shape(())


def test_lower_cholesky_and_positive_definite(device):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 3))
    L = T.LowerCholeskyTransform()(tensor(x, device))
    expect = np.tril(x, -1) + np.stack([np.diag(np.exp(np.diag(m))) for m in x])
    close(L, expect)
    assert bool(C.lower_cholesky.check(L).all())
    close(T.LowerCholeskyTransform().inv(L), np.tril(x))
    P = T.PositiveDefiniteTransform()(tensor(x, device))
    close(P, expect @ expect.transpose(0, 2, 1))
    assert bool(C.positive_definite.check(P).all())
    close(T.PositiveDefiniteTransform().inv(P), np.tril(x))
    assert T.LowerCholeskyTransform() == T.LowerCholeskyTransform()


def test_corr_cholesky_transform(device):
    t = T.CorrCholeskyTransform()
    x = np.array([0.4, -0.3, 1.1, 0.2, -0.7, 0.5])
    L = t(tensor(x, device))
    Ln = to_numpy(L)
    assert Ln.shape == (4, 4)
    np.testing.assert_allclose(np.linalg.norm(Ln, axis=-1), 1.0, atol=1e-12)
    assert bool(C.corr_cholesky.check(L))
    np.testing.assert_allclose(np.diag(Ln @ Ln.T), 1.0, atol=1e-12)
    close(t.inv(L), x)
    fwd = lambda v: to_numpy(t(tensor(v)))[np.tril_indices(4, -1)]
    close(t.log_abs_det_jacobian(tensor(x, device), L), jacobian_logdet(fwd, x), rtol=1e-6)
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        t.forward_shape((5,))
    assert t.forward_shape((2, 6)) == (2, 4, 4) and t.inverse_shape((2, 4, 4)) == (2, 6)


def test_reshape_and_independent_transform(device):
    t = T.ReshapeTransform((2, 3), (6,))
    x = gpugrad.arange(12, dtype=F64, device=device).reshape(2, 2, 3)
    y = t(x)
    assert y.shape == (2, 6) and t.inv(y).shape == (2, 2, 3)
    close(t.log_abs_det_jacobian(x, y), [0.0, 0.0])
    assert t.domain.event_dim == 2 and t.codomain.event_dim == 1
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        T.ReshapeTransform((2, 3), (5,))
    it = T.IndependentTransform(T.ExpTransform(), 1)
    close(it.log_abs_det_jacobian(x, it(x)), to_numpy(x).sum(-1))
    assert it.domain.event_dim == 1 and it.bijective and it.sign == 1
    assert repr(it) == "IndependentTransform(ExpTransform(), 1)"


def test_cat_and_stack_transform(device):
    x = tensor(np.arange(10.0).reshape(5, 2) / 10, device)
    t = T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=0, lengths=[2, 3])
    y = t(x)
    xn = to_numpy(x)
    close(y, np.concatenate([np.exp(xn[:2]), 1 + 3 * xn[2:]]))
    close(t.inv(y), xn)
    close(t.log_abs_det_jacobian(x, y), np.concatenate([xn[:2], np.full((3, 2), math.log(3))]))
    assert bool(t.domain.check(x).all()) and t.codomain.check(y).shape == (5, 2)
    s = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 3.0)], dim=1)
    y = s(x)
    close(y, np.stack([np.exp(xn[:, 0]), 1 + 3 * xn[:, 1]], 1))
    close(s.inv(y), xn)
    close(s.log_abs_det_jacobian(x, y), np.stack([xn[:, 0], np.full(5, math.log(3))], 1))
    with pytest.raises(AssertionError, match=r"x.size\(0\) = 5 must equal length 4"):
        T.CatTransform([T.ExpTransform()], 0, [4]).log_abs_det_jacobian(x, x)


def test_cumulative_distribution_transform(device):
    base = D.Normal(tensor(0.5, device), tensor(2.0, device))
    t = T.CumulativeDistributionTransform(base)
    x = tensor([-1.0, 0.5, 3.0], device)
    y = t(x)
    close(y, [0.5 * (1 + math.erf((v - 0.5) / (2 * math.sqrt(2)))) for v in (-1.0, 0.5, 3.0)])
    close(t.inv(y), [-1.0, 0.5, 3.0], rtol=1e-9)
    close(t.log_abs_det_jacobian(x, y), to_numpy(base.log_prob(x)))
    assert t.codomain is C.unit_interval and t.domain is C.real


def test_transformed_distribution_with_new_transforms():
    """LogisticNormal density = Normal density over |det| of stick breaking"""
    loc, scale = tensor([0.2, -0.4]), tensor([1.0, 0.5])
    d = D.LogisticNormal(loc, scale)
    x = np.array([0.3, 0.9])
    y = T.StickBreakingTransform()(tensor(x))
    base = D.Normal(loc, scale).log_prob(tensor(x)).sum()
    lad = T.StickBreakingTransform().log_abs_det_jacobian(tensor(x), y)
    close(d.log_prob(y), float(base - lad))
    assert d.event_shape == (3,) and d.batch_shape == ()
    assert d.expand((4,)).sample().shape == (4, 3)
