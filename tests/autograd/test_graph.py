"""autograd.graph.get_gradient_edge: a GradientEdge stands for its tensor in autograd.grad."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd.graph import GradientEdge, get_gradient_edge


# -- GradientEdge ---------------------------------------------------------------------------------
def test_gradient_edge_stands_for_its_tensor_in_autograd_grad(device):
    x = tensor([1.0, 2.0, 3.0], device, requires_grad=True)
    y = x * x
    out = (y * 3).sum()
    ex, ey = get_gradient_edge(x), get_gradient_edge(y)
    assert isinstance(ex, GradientEdge) and ex.output_nr == 0 and ex.ownership_token is None
    assert ex.node.variable is x and ey.node is y.grad_fn
    gx, gy = gpugrad.autograd.grad(out, [ex, ey], retain_graph=True)
    np.testing.assert_allclose(to_numpy(gx), [6.0, 12.0, 18.0])
    np.testing.assert_allclose(to_numpy(gy), [3.0, 3.0, 3.0])
    (g,) = gpugrad.autograd.grad(get_gradient_edge(y), x, grad_outputs=tensor([1.0, 0.0, 2.0],
                                                                               device))
    np.testing.assert_allclose(to_numpy(g), [2.0, 0.0, 12.0])


def test_gradient_edge_errors():
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a "
                                           "Tensor that does not require gradients"):
        get_gradient_edge(gpugrad.zeros(2))
    x = tensor([1.0, 2.0], requires_grad=True)
    unused = get_gradient_edge(tensor([1.0], requires_grad=True))
    out = (x * 2).sum()
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                           "not have been used in the graph"):
        gpugrad.autograd.grad(out, [x, unused], retain_graph=True)
    assert gpugrad.autograd.grad(out, [x, unused], retain_graph=True, allow_unused=True)[1] \
        is None
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given "
                                           "input is a GradientEdge"):
        gpugrad.autograd.grad(out, [x, unused], retain_graph=True, materialize_grads=True)
    with pytest.raises(RuntimeError, match="needs its grad_outputs"):
        gpugrad.autograd.grad(get_gradient_edge(x * 2), x)


def test_gradient_edge_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([0.5, -1.0, 2.0])
    results = []
    for lib in (gpugrad, torch):
        x = lib.tensor(a, requires_grad=True)
        h = x.sin()
        loss = (h * h).sum()
        edge = lib.autograd.graph.get_gradient_edge(h)
        results.append([to_numpy(g) if lib is gpugrad else g.numpy()
                        for g in lib.autograd.grad(loss, (edge, x))])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-14)
