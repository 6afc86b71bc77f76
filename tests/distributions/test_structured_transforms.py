"""The newer transforms, constraints, ``biject_to`` / ``transform_to``, package exports, the
KL divergences of the newer distributions and their shapes under expand; PyTorch as an extra
oracle where it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import distributions as D
from gpugrad.distributions import constraints as C
from gpugrad.distributions import transforms as T

F64 = gpugrad.float64


@pytest.fixture(autouse=True)
def _default_validation():
    saved = D.Distribution._validate_args
    yield
    D.Distribution._validate_args = saved


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


# ---- constraints and the registry ----------------------------------------------------------

def test_new_constraints():
    assert C.multinomial(3).check(tensor([[1.0, 2.0], [2.0, 2.0]])).tolist() == [True, False]
    assert bool(C.positive_semidefinite.check(tensor([[1.0, 1.0], [1.0, 1.0]])))
    assert not bool(C.positive_definite.check(tensor([[1.0, 1.0], [1.0, 1.0]])))
    c = C.cat([C.positive, C.real], dim=0, lengths=[1, 2])
    assert c.check(tensor([-1.0, -1.0, 5.0])).tolist() == [False, True, True]
    s = C.stack([C.positive, C.real], dim=-1)
    assert s.check(tensor([[1.0, -1.0], [-1.0, 1.0]])).tolist() == [[True, True], [False, True]]
    m = C.MixtureSameFamilyConstraint(C.positive)
    assert repr(m) == "MixtureSameFamilyConstraint(GreaterThan(lower_bound=0.0))"
    assert repr(C.corr_cholesky) == "CorrCholesky()"


@pytest.mark.parametrize("constraint, event_dim", [
    (C.real, 0), (C.positive, 0), (C.greater_than(2.0), 0), (C.less_than(-1.0), 0),
    (C.unit_interval, 0), (C.interval(-2.0, 5.0), 0), (C.simplex, 1), (C.real_vector, 1),
    (C.corr_cholesky, 2), (C.independent(C.positive, 1), 1),
])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_registry_lands_in_constraint(constraint, event_dim, registry):
    t = getattr(D, registry)(constraint)
    n = 6 if constraint is C.corr_cholesky else 3
    gpugrad.manual_seed(0)
    y = t(gpugrad.randn(4, n, dtype=F64) * 2)
    ok = constraint.check(y)
    assert bool(ok.all())
    assert t.codomain.event_dim >= event_dim
    x = t.inv(y) if t.bijective else None
    if registry == "biject_to":
        assert t.bijective
        close(t(x), to_numpy(y), rtol=1e-8)


def test_registry_types_and_errors():
    assert isinstance(D.biject_to(C.simplex), T.StickBreakingTransform)
    assert isinstance(D.transform_to(C.simplex), T.SoftmaxTransform)
    assert isinstance(D.transform_to(C.lower_cholesky), T.LowerCholeskyTransform)
    assert isinstance(D.transform_to(C.positive_definite), T.PositiveDefiniteTransform)
    assert isinstance(D.biject_to(C.unit_interval), T.SigmoidTransform)
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        D.biject_to(C.lower_cholesky)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
        D.biject_to.register(3, lambda c: None)


def test_package_exports():
    names = ["AbsTransform", "CatTransform", "CorrCholeskyTransform", "ContinuousBernoulli",
             "CumulativeDistributionTransform", "ExponentialFamily", "FisherSnedecor",
             "GeneralizedPareto", "HalfCauchy", "IndependentTransform", "InverseGamma",
             "Kumaraswamy", "LogisticNormal", "LowRankMultivariateNormal",
             "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial", "NegativeBinomial",
             "Pareto", "PositiveDefiniteTransform", "PowerTransform", "ReshapeTransform",
             "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
             "VonMises", "Weibull", "biject_to", "transform_to", "constraint_registry",
             "chi2", "kl", "transforms", "constraints", "identity_transform"]
    missing = [n for n in names if not hasattr(D, n)]
    assert not missing
    assert set(D.__all__) <= set(dir(D))


def test_torch_exports_covered():
    torch = pytest.importorskip("torch")
    absent = {n for n in dir(torch.distributions) if not n.startswith("_")} - set(dir(D))
    assert absent <= {"LKJCholesky", "Wishart", "lkj_cholesky", "wishart"}, absent


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
    # to ~1e-8; the exact values are checked against integrals in test_distributions_new.py
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
