"""``gpugrad.gradient``: numpy.gradient's estimates, as recorded ops: values, dtypes,
gradients and errors."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck

# -- gradient: numpy.gradient's estimates, as recorded ops ---------------------------------------
F = np.array([[1.0, 2.0, 4.0, 8.0, 16.0], [10.0, 20.0, 35.0, 80.0, 100.0], [0, 1, 0, 1, 0]])


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_matches_numpy(device, edge_order):
    got = gpugrad.gradient(tensor(F, device), edge_order=edge_order)
    want = np.gradient(F, edge_order=edge_order)
    assert len(got) == 2
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-12)
    coords = np.array([0.0, 1.0, 1.5, 3.5, 4.0])
    [got] = gpugrad.gradient(tensor(F, device), spacing=(tensor(coords, device),), dim=-1,
                             edge_order=edge_order)
    np.testing.assert_allclose(to_numpy(got), np.gradient(F, coords, axis=-1,
                                                          edge_order=edge_order), rtol=1e-12)
    got = gpugrad.gradient(tensor(F, device), spacing=[0.5, 3], edge_order=edge_order)
    for g, w in zip(got, np.gradient(F, 0.5, 3, edge_order=edge_order)):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-12)


def test_gradient_exact_values_and_dtypes(device):
    x = gpugrad.tensor([1.0, 4.0, 9.0, 16.0, 25.0], device=device)
    [g] = gpugrad.gradient(x)
    assert g.dtype == gpugrad.float32 and g.tolist() == [3.0, 4.0, 6.0, 8.0, 9.0]
    [g] = gpugrad.gradient(gpugrad.tensor([1, 2, 4], device=device))
    assert g.dtype == gpugrad.float32 and g.tolist() == [1.0, 1.5, 2.0]
    [g] = gpugrad.gradient(x, spacing=gpugrad.tensor(2.0, device=device), edge_order=2)
    assert g.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]   # exact for a parabola
    assert gpugrad.gradient(tensor(np.array(3.0), device)) == ()


@pytest.mark.parametrize("order", [1, 2])
def test_gradient_gradients(device, order):
    x = tensor(np.array([1.0, 3.0, 2.0, 5.0, 4.0]), device, requires_grad=True)
    c = tensor(np.array([0.0, 1.0, 3.0, 4.0, 7.0]), device, requires_grad=True)
    assert type(gpugrad.gradient(x)[0].grad_fn).__name__ == "CatBackward0"
    assert gradcheck(lambda x, c: gpugrad.gradient(x, spacing=(c,), edge_order=order)[0], (x, c))
    assert gradgradcheck(lambda x: gpugrad.gradient(x, spacing=0.5, edge_order=order)[0], (x,))


@pytest.mark.parametrize("kw, message", [
    ({"edge_order": 3}, "torch.gradient only supports edge_order=1 and edge_order=2."),
    ({"dim": 0, "edge_order": 2}, "torch.gradient expected each dimension size to be at least "
                                  "edge_order+1"),
    ({"spacing": [1.0, 2.0, 3.0]}, "torch.gradient expected spacing to be unspecified, a "
     "scalar, or a list of length equal to 'self.dim() = 2', since dim argument was not given, "
     "but got a list of length 3"),
    ({"dim": 1, "spacing": [1.0, 2.0]}, "torch.gradient expected spacing to be unspecified, a "
     "scalar or it's spacing and dim arguments to have the same length, but got a spacing "
     "argument of length 2 and a dim argument of length 1."),
    ({"dim": 1, "spacing": [np.ones((2, 2))]}, "torch.gradient expected each element of "
     "spacing to have one dimension, but got an element with 2 dimensions!"),
    ({"dim": 1, "spacing": [np.arange(3.0)]}, "torch.gradient expected the coordinates along "
     "dimension 1 to have one entry per element (4), but got 3"),
])
def test_gradient_errors(device, kw, message):
    x = tensor(np.arange(8.0).reshape(2, 4), device)
    if "spacing" in kw and isinstance(kw["spacing"][0], np.ndarray):
        kw = dict(kw, spacing=[tensor(kw["spacing"][0], device)])
    with pytest.raises(RuntimeError) as e:
        gpugrad.gradient(x, **kw)
    assert str(e.value) == message
    with pytest.raises(IndexError, match=r"^Dimension out of range"):
        gpugrad.gradient(x, dim=2)
