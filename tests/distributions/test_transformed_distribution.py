"""TransformedDistribution and the relaxed (Concrete) distributions built on it: numpy closed
forms, reparameterised gradients, sample statistics, validation, and PyTorch as an oracle where
it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.autograd import gradcheck
from gpugrad.distributions import transforms as T
from tests.distributions._special import LOG_SQRT_2PI
from tests.distributions._tensors import grad_tensor
from tests.distributions._validation import _default_validation  # noqa: F401 (autouse)


def close(a, b, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=rtol, atol=atol)


def normal_logpdf(x, loc, scale):
    return -(x - loc) ** 2 / (2 * scale ** 2) - np.log(scale) - LOG_SQRT_2PI


# -- TransformedDistribution --------------------------------------------------------------------
def test_exp_of_normal_is_lognormal(device):
    loc, scale = np.array([0.3, -1.0]), np.array([0.8, 1.7])
    x = np.array([[0.4, 2.5], [1.0, 0.05]])
    base = D.Normal(tensor(loc, device), tensor(scale, device))
    d = D.TransformedDistribution(base, T.ExpTransform())
    xt = tensor(x, device)
    lp = d.log_prob(xt)
    assert lp.device.type == device
    close(lp, normal_logpdf(np.log(x), loc, scale) - np.log(x))
    ref = D.LogNormal(tensor(loc, device), tensor(scale, device))
    close(lp, ref.log_prob(xt))
    close(d.cdf(xt), ref.cdf(xt))
    p = tensor([[0.1, 0.6], [0.5, 0.99]], device)
    close(d.icdf(p), ref.icdf(p), rtol=1e-10)
    assert d.batch_shape == (2,) and d.event_shape == ()
    assert d.has_rsample
    assert d.support is T.ExpTransform.codomain


def test_sigmoid_of_normal_is_logit_normal(device):
    loc, scale = np.array([0.0, 1.0, -0.5]), np.array([1.0, 0.5, 2.0])
    x = np.array([0.2, 0.7, 0.999])
    d = D.TransformedDistribution(D.Normal(tensor(loc, device), tensor(scale, device)),
                                  [T.SigmoidTransform()])
    logit = np.log(x / (1 - x))
    expected = normal_logpdf(logit, loc, scale) - np.log(x * (1 - x))
    close(d.log_prob(tensor(x, device)), expected, rtol=1e-10)
    s = d.sample((500,))
    assert s.shape == (500, 3) and bool(((s > 0) & (s < 1)).all())


def test_decreasing_affine_of_normal(device):
    """y = 1 - 2x, x ~ N(0.5, 1): y ~ N(0, 2); the cdf is flipped by the negative sign."""
    d = D.TransformedDistribution(D.Normal(tensor(0.5, device), tensor(1.0, device)),
                                  [T.AffineTransform(1.0, -2.0)])
    ref = D.Normal(tensor(0.0, device), tensor(2.0, device))
    y = tensor([-3.0, 0.0, 1.2], device)
    close(d.log_prob(y), ref.log_prob(y))
    close(d.cdf(y), ref.cdf(y))
    close(d.icdf(tensor([0.1, 0.5, 0.8], device)), ref.icdf(tensor([0.1, 0.5, 0.8], device)),
          rtol=1e-10)


def test_event_dim_transform_makes_event_shape():
    """A transform over one event dim reinterprets the base's last batch dim."""
    base = D.Normal(tensor(np.zeros((2, 3))), tensor(np.ones((2, 3))))
    scale = np.array([1.0, 2.0, 0.5])
    d = D.TransformedDistribution(base, T.AffineTransform(0.0, tensor(scale), event_dim=1))
    assert d.batch_shape == (2,) and d.event_shape == (3,)
    y = np.array([[0.3, -1.0, 0.2], [1.0, 2.0, 0.0]])
    expected = (normal_logpdf(y / scale, 0.0, 1.0) - np.log(scale)).sum(-1)
    close(d.log_prob(tensor(y)), expected)
    assert d.sample((4,)).shape == (4, 2, 3)
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.log_prob(tensor(y)).shape == (5, 2)


def test_transformed_rsample_gradcheck():
    def draw(m, s):
        gpugrad.manual_seed(3)
        d = D.TransformedDistribution(D.Normal(m, s), [T.AffineTransform(0.5, 2.0),
                                                        T.TanhTransform()])
        return d.rsample((4,))
    loc, scale = grad_tensor([0.1, -0.3]), grad_tensor([0.7, 1.2])
    assert gradcheck(draw, (loc, scale))
    assert gradcheck(lambda m, s: D.TransformedDistribution(
        D.Normal(m, s), T.ExpTransform()).log_prob(tensor([0.5, 3.0])), (loc, scale))


def test_transformed_sample_statistics():
    gpugrad.manual_seed(0)
    d = D.TransformedDistribution(D.Normal(tensor(0.2), tensor(0.5)), T.ExpTransform())
    s = to_numpy(d.sample((20000,)))
    mean, var = math.exp(0.2 + 0.125), (math.exp(0.25) - 1) * math.exp(0.4 + 0.25)
    assert abs(s.mean() - mean) < 6 * math.sqrt(var / 20000)


def test_transformed_validation():
    with pytest.raises(ValueError, match="transforms must be"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), T.ExpTransform)
    d = D.TransformedDistribution(D.Normal(0.0, 1.0), T.ExpTransform(), validate_args=True)
    with pytest.raises(ValueError, match="support"):
        d.log_prob(tensor([-1.0]))
    with pytest.raises(ValueError, match="at least"):
        D.TransformedDistribution(D.Normal(0.0, 1.0), T.SoftmaxTransform())


# -- relaxed distributions ----------------------------------------------------------------------
def test_relaxed_bernoulli_log_prob_closed_form(device):
    t, p = 0.7, np.array([0.2, 0.5, 0.9])
    x = np.array([0.1, 0.5, 0.95])
    d = D.RelaxedBernoulli(tensor(t, device), probs=tensor(p, device))
    # density of the binary Concrete: t a x^(-t-1) (1-x)^(-t-1) / (a x^-t + (1-x)^-t)^2
    a = p / (1 - p)
    dens = t * a * x ** (-t - 1) * (1 - x) ** (-t - 1) / (a * x ** -t + (1 - x) ** -t) ** 2
    close(d.log_prob(tensor(x, device)), np.log(dens), rtol=1e-10)
    close(d.probs, p)
    s = d.rsample((1000,))
    assert s.shape == (1000, 3) and bool(((s > 0) & (s < 1)).all())
    assert d.batch_shape == (3,) and d.support is D.constraints.unit_interval


def test_relaxed_bernoulli_low_temperature_frequencies():
    gpugrad.manual_seed(1)
    p = np.array([0.2, 0.7])
    s = to_numpy(D.RelaxedBernoulli(tensor(0.05), logits=tensor(np.log(p / (1 - p))))
                 .sample((20000,)))
    assert ((s < 0.01) | (s > 0.99)).mean() > 0.9
    np.testing.assert_allclose((s > 0.5).mean(0), p, atol=6 * math.sqrt(0.25 / 20000))


def test_relaxed_one_hot_log_prob_closed_form(device):
    t = 0.6
    probs = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    x = np.array([[0.1, 0.2, 0.7], [0.5, 0.45, 0.05]])
    d = D.RelaxedOneHotCategorical(tensor(t, device), probs=tensor(probs, device))
    k = 3
    # Concrete density: (k-1)! t^(k-1) prod(p x^(-t-1)) / (sum p x^-t)^k
    dens = (math.factorial(k - 1) * t ** (k - 1) * np.prod(probs * x ** (-t - 1), -1)
            / (probs * x ** -t).sum(-1) ** k)
    close(d.log_prob(tensor(x, device)), np.log(dens), rtol=1e-10)
    s = d.rsample((50,))
    assert s.shape == (50, 2, 3) and s.device.type == device
    close(s.sum(-1), np.ones((50, 2)))
    assert d.event_shape == (3,) and d.batch_shape == (2,)


def test_relaxed_one_hot_low_temperature_frequencies():
    gpugrad.manual_seed(2)
    probs = np.array([0.1, 0.6, 0.3])
    s = to_numpy(D.RelaxedOneHotCategorical(tensor(0.02), probs=tensor(probs))
                 .sample((20000,)))
    assert (s.max(-1) > 0.99).mean() > 0.9
    np.testing.assert_allclose(np.bincount(s.argmax(-1), minlength=3) / 20000, probs,
                               atol=6 * math.sqrt(0.25 / 20000))


def test_relaxed_rsample_gradcheck():
    def bern(z, t):
        gpugrad.manual_seed(5)
        return D.RelaxedBernoulli(t, logits=z).rsample((3,))

    def cat(z, t):
        gpugrad.manual_seed(5)
        return D.RelaxedOneHotCategorical(t, logits=z).rsample((3,))
    t = grad_tensor(0.8)
    assert gradcheck(bern, (grad_tensor([-0.5, 1.0]), t))
    assert gradcheck(cat, (grad_tensor([[0.1, -0.4, 1.2]]), t))
    assert gradcheck(lambda z, s: D.RelaxedOneHotCategorical(s, logits=z).log_prob(
        tensor([0.2, 0.3, 0.5])), (grad_tensor([0.1, -0.4, 1.2]), t))


def test_relaxed_validation_and_expand():
    with pytest.raises(ValueError):
        D.RelaxedBernoulli(tensor(0.5))
    with pytest.raises(ValueError):
        D.RelaxedBernoulli(tensor(0.5), probs=tensor([1.5]), validate_args=True)
    d = D.RelaxedOneHotCategorical(tensor(0.5), logits=tensor([0.0, 1.0])).expand((4,))
    assert isinstance(d, D.RelaxedOneHotCategorical) and d.batch_shape == (4,)
    assert d.rsample().shape == (4, 2)


# -- PyTorch as the oracle ----------------------------------------------------------------------
def _dist_cases(mod):
    A = lambda a: mod.tensor(np.asarray(a, dtype=np.float64))   # noqa: E731
    dist, tr = mod.distributions, mod.distributions.transforms
    return {
        "logit_normal": (dist.TransformedDistribution(
            dist.Normal(A([0.0, 1.0]), A([1.0, 0.3])), [tr.SigmoidTransform()]),
            A([0.3, 0.8])),
        "tanh_affine": (dist.TransformedDistribution(
            dist.Normal(A([0.5]), A([2.0])), [tr.AffineTransform(0.1, -0.5),
                                              tr.TanhTransform()]), A([-0.2])),
        "relaxed_bernoulli": (dist.RelaxedBernoulli(A(0.4), probs=A([0.3, 0.8])),
                              A([0.05, 0.6])),
        "relaxed_one_hot": (dist.RelaxedOneHotCategorical(A(1.5), logits=A([0.2, -1.0, 0.4])),
                            A([0.3, 0.3, 0.4])),
    }


@pytest.mark.parametrize("name", list(_dist_cases(gpugrad)))
def test_distributions_match_torch(name):
    torch = pytest.importorskip("torch")
    ours, value = _dist_cases(gpugrad)[name]
    theirs, tvalue = _dist_cases(torch)[name]
    close(ours.log_prob(value), theirs.log_prob(tvalue).numpy(), rtol=1e-11)
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert ours.event_shape == tuple(theirs.event_shape)
    assert repr(ours).replace("gpugrad.", "torch.") == repr(theirs)
    if name in ("logit_normal", "tanh_affine"):
        close(ours.cdf(value), theirs.cdf(tvalue).numpy(), rtol=1e-11)
