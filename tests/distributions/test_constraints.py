"""gpugrad.distributions.constraints and the constraint registry (``biject_to`` /
``transform_to``): what the constraints accept, and that each registered transform lands in
its constraint."""
from __future__ import annotations

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
