"""nn.utils.parametrize: registering, caching and removing parametrizations."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

from gpugrad import nn
from gpugrad.nn.utils import parametrize
from tests.nn.utils._layers import _linear


class Symmetric(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x.triu() + x.triu(1).mT

    def right_inverse(self, a):
        return a.triu()


def test_parametrize_register_cache_and_remove(device, rng):
    m = _linear(device, rng, 3, 3)
    orig = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert m.parametrizations.weight.original is orig   # same Parameter object, new value
    w = to_numpy(m.weight)
    np.testing.assert_array_equal(w, w.T)
    sym = m.parametrizations.weight[0]
    sym.calls = 0
    with parametrize.cached():
        a, b = m.weight, m.weight
    assert a is b and sym.calls == 1
    m.weight.sum().backward()   # d/dX of sum(triu(X) + triu(X, 1)^T): 2 above the diagonal
    np.testing.assert_array_equal(to_numpy(orig.grad), np.triu(np.ones((3, 3))) +
                                  np.triu(np.ones((3, 3)), 1))
    m.weight = tensor(np.full((3, 3), 2.0), device)   # stored through right_inverse
    np.testing.assert_array_equal(to_numpy(orig), np.triu(np.full((3, 3), 2.0)))
    parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert type(m) is nn.Linear and m.weight is orig
    assert list(m.state_dict()) == ["bias", "weight"]
    assert "parametrizations" not in m._modules


def test_parametrize_leave_parametrized_and_errors(rng):
    m = _linear("cpu", rng, 3, 3)
    parametrize.register_parametrization(m, "weight", Symmetric())
    w = to_numpy(m.weight)
    parametrize.remove_parametrizations(m, "weight")
    np.testing.assert_array_equal(to_numpy(m.weight), w)
    with pytest.raises(ValueError, match="^Module Linear.* does not have a parametrization on "
                                         "weight$"):
        parametrize.remove_parametrizations(m, "weight")
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                         "parametrized element with name 'foo'"):
        parametrize.register_parametrization(m, "foo", Symmetric())

    class Shrink(nn.Module):
        def forward(self, x):
            return x[:2]
    with pytest.raises(ValueError, match="^Registering a parametrization may not change the "
                                         "shape of the tensor, unless `unsafe` flag is enabled"):
        parametrize.register_parametrization(m, "weight", Shrink())
