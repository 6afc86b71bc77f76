"""nn.utils.weight_norm, the hook form, with agreement with PyTorch."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.autograd import gradcheck
from gpugrad.nn.utils.weight_norm import _weight_norm
from tests.nn.utils._layers import _linear


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_hook_values_and_grads(device, rng, dim):
    m = _linear(device, rng)
    w0 = to_numpy(m.weight)
    with pytest.warns(FutureWarning):
        nn.utils.weight_norm(m, dim=dim)
    assert list(m.state_dict()) == ["bias", "weight_g", "weight_v"]
    axes = None if dim is None else tuple(d for d in range(2) if d != dim)
    np.testing.assert_allclose(to_numpy(m.weight_g),
                               np.sqrt((w0 ** 2).sum(axis=axes, keepdims=dim is not None)))
    with gpugrad.no_grad():
        m.weight_g.mul_(2.0)
    x = tensor(rng.standard_normal((2, 4)), device)
    np.testing.assert_allclose(to_numpy(m(x)), to_numpy(x) @ (2 * w0).T + to_numpy(m.bias))
    g, v = m.weight_g.detach().requires_grad_(), m.weight_v.detach().requires_grad_()
    assert gradcheck(lambda g, v: _weight_norm(v, g, -1 if dim is None else dim), (g, v))
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"]   # re-registered last, as in PyTorch
    np.testing.assert_allclose(to_numpy(m.weight), 2 * w0)
    with pytest.raises(ValueError, match="^weight_norm of 'weight' not found in Linear"):
        nn.utils.remove_weight_norm(m)


def test_hook_weight_norm_matches_pytorch():
    torch = pytest.importorskip("torch")
    theirs, ours = torch.nn.Linear(4, 3).double(), nn.Linear(4, 3).double()
    for k, v in theirs.state_dict().items():
        getattr(ours, k).data = gpugrad.tensor(v.numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(theirs, dim=1)
        nn.utils.weight_norm(ours, dim=1)
    x = np.random.default_rng(0).standard_normal((2, 4))
    ty, gy = theirs(torch.tensor(x)), ours(tensor(x))
    np.testing.assert_allclose(to_numpy(gy), ty.detach().numpy(), atol=1e-12)
    (ty ** 2).sum().backward()
    (gy ** 2).sum().backward()
    np.testing.assert_allclose(to_numpy(ours.weight_g.grad), theirs.weight_g.grad.numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(to_numpy(ours.weight_v.grad), theirs.weight_v.grad.numpy(),
                               atol=1e-12)
