"""nn.utils.skip_init and nn.utils.stateless.functional_call."""
from __future__ import annotations

import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn


def test_skip_init_and_stateless_call():
    m = nn.utils.skip_init(nn.Linear, 3, 2, dtype=gpugrad.float64)
    assert m.weight.shape == (2, 3) and m.weight.dtype == gpugrad.float64
    with pytest.raises(RuntimeError, match="^Module must support a 'device' arg to skip "
                                           "initialization$"):
        nn.utils.skip_init(nn.ReLU)
    lin = nn.Linear(2, 1).double()
    params = {"weight": tensor([[1.0, 2.0]]), "bias": tensor([0.5])}
    with pytest.warns(FutureWarning):
        y = nn.utils.stateless.functional_call(lin, params, (tensor([[3.0, 4.0]]),))
    assert to_numpy(y).tolist() == [[11.5]]
