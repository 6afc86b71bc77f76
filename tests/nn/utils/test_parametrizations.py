"""nn.utils.parametrizations: weight_norm, spectral_norm and orthogonal."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.autograd import gradcheck
from gpugrad.nn.utils import parametrizations
from tests.nn.utils._layers import _linear


def test_parametrizations_weight_norm_and_spectral_norm_state(device, rng):
    m = _linear(device, rng)
    w0 = to_numpy(m.weight)
    parametrizations.weight_norm(m)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                    "parametrizations.weight.original1"]
    np.testing.assert_allclose(to_numpy(m.weight), w0, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(m.parametrizations.weight.original0),
                               np.linalg.norm(w0, axis=1, keepdims=True))
    s = _linear(device, rng)
    w1 = to_numpy(s.weight)
    parametrizations.spectral_norm(s)   # 15 power-method steps at registration
    assert list(s.state_dict()) == ["bias", "parametrizations.weight.original",
                                    "parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    for _ in range(20):
        s.weight
    np.testing.assert_allclose(to_numpy(s.weight), w1 / np.linalg.svd(w1, compute_uv=False)[0],
                               rtol=1e-8)


@pytest.mark.parametrize("shape,omap", [((3, 3), None), ((4, 2), None), ((2, 4), "cayley"),
                                        ((3, 3), "householder"), ((4, 3), "matrix_exp")])
def test_orthogonal_stays_orthogonal_and_differentiable(shape, omap, rng):
    m = nn.Linear(shape[1], shape[0]).double()
    parametrizations.orthogonal(m, orthogonal_map=omap)
    n, k = shape

    def gram(w):
        return w.T @ w if n >= k else w @ w.T
    np.testing.assert_allclose(gram(to_numpy(m.weight)), np.eye(min(n, k)), atol=1e-12)
    original = m.parametrizations.weight.original
    with gpugrad.no_grad():   # off the diagonal: householder keeps its +-1 diagonal
        original.add_(tensor(np.tril(rng.standard_normal(shape), -1) * 0.3))
    np.testing.assert_allclose(gram(to_numpy(m.weight)), np.eye(min(n, k)), atol=1e-12)
    orth = m.parametrizations.weight[0]
    x = tensor(np.tril(rng.standard_normal(shape), -1) * 0.3, requires_grad=True)
    assert gradcheck(orth, (x,))


@pytest.mark.parametrize("kind", ["weight_norm", "spectral_norm"])
def test_weight_and_spectral_norm_match_pytorch(kind):
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn.utils.parametrizations, kind)(torch.nn.Conv2d(2, 3, 2).double())
    ours = getattr(parametrizations, kind)(nn.Conv2d(2, 3, 2).double())
    mine = dict(ours.named_parameters()) | dict(ours.named_buffers())
    assert sorted(mine) == sorted(theirs.state_dict())
    for k, v in theirs.state_dict().items():   # same keys: copy every tensor across
        mine[k].data = gpugrad.tensor(v.numpy())
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 4))
    theirs.eval(), ours.eval()
    ty, gy = theirs(torch.tensor(x)), ours(tensor(x))
    np.testing.assert_allclose(to_numpy(gy), ty.detach().numpy(), atol=1e-12)
    (ty ** 2).sum().backward()
    (gy ** 2).sum().backward()
    for (k, a), b in zip(ours.named_parameters(), theirs.parameters()):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), atol=1e-12, err_msg=k)
