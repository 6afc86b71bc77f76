"""PyTorch as the oracle (skipped without torch) over PyTorch's top-level functions and Tensor
methods (pointwise, logic, shape, scatter, creation, windows), and the top-level aliases of
nn.functional and of Tensor methods."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad

# -- PyTorch as an oracle -----------------------------------------------------------------------
ORACLE = [
    ("acosh", lambda m, x, y: m.acosh(x.abs() + 1)),
    ("asinh", lambda m, x, y: m.asinh(x)),
    ("atanh", lambda m, x, y: m.atanh(x.clamp(-0.9, 0.9))),
    ("exp2", lambda m, x, y: m.exp2(x)),
    ("logaddexp2", lambda m, x, y: m.logaddexp2(x, y)),
    ("deg2rad", lambda m, x, y: m.deg2rad(x)),
    ("rad2deg", lambda m, x, y: m.rad2deg(x)),
    ("copysign", lambda m, x, y: m.copysign(x, y)),
    ("ldexp", lambda m, x, y: m.ldexp(x.reshape(4, 3), m.tensor([1, -2, 3], dtype=m.int64))),
    ("frexp", lambda m, x, y: tuple(m.frexp(x))),
    ("heaviside", lambda m, x, y: m.heaviside(x.round(), y)),
    ("signbit", lambda m, x, y: m.signbit(x)),
    ("gcd", lambda m, x, y: m.gcd((x * 10).to(m.int64), (y * 10).to(m.int64))),
    ("lcm", lambda m, x, y: m.lcm((x * 10).to(m.int64), (y * 10).to(m.int64))),
    ("nextafter", lambda m, x, y: m.nextafter(x, y)),
    ("isin", lambda m, x, y: m.isin(x.round(), y.round())),
    ("greater_equal", lambda m, x, y: m.greater_equal(x, y)),
    ("logical_xor", lambda m, x, y: m.logical_xor((x * 2).to(m.int64), (y * 2).to(m.int64))),
    ("tril_indices", lambda m, x, y: m.tril_indices(4, 5, -1)),
    ("triu_indices", lambda m, x, y: m.triu_indices(5, 3, 1)),
    ("unravel_index", lambda m, x, y: m.unravel_index(m.tensor([0, 5, 11, -2]), (3, 4))),
    ("argwhere", lambda m, x, y: m.argwhere(x > 0)),
    ("hsplit", lambda m, x, y: m.hsplit(x.reshape(2, 3, 2), [1])),
    ("diagflat", lambda m, x, y: m.diagflat(x.reshape(2, 6), -1)),
    ("inner", lambda m, x, y: m.inner(x.reshape(4, 3), y.reshape(2, 2, 3))),
    ("dist", lambda m, x, y: m.dist(x, y, 1.5)),
    ("msort", lambda m, x, y: m.msort(x.reshape(3, 4))),
    ("select_scatter", lambda m, x, y: m.select_scatter(x.reshape(3, 4), y[:3], 1, 1)),
    ("slice_scatter", lambda m, x, y: m.slice_scatter(x.reshape(3, 4), y.reshape(3, 4)[:, :2],
                                                       1, 1, None, 2)),
    ("diagonal_scatter", lambda m, x, y: m.diagonal_scatter(x.reshape(3, 4), y[:3], 1)),
    ("as_strided", lambda m, x, y: m.as_strided(x, (3, 3), (3, 1), 2)),
    ("masked_scatter", lambda m, x, y: m.masked_scatter(x, x > 0, y)),
    ("index_reduce", lambda m, x, y: m.index_reduce(x.reshape(3, 4), 1, m.tensor([0, 3, 0]),
                                                     y[:9].reshape(3, 3), "amin",
                                                     include_self=False)),
    ("addbmm", lambda m, x, y: m.addbmm(x[:4].reshape(2, 2), x.reshape(3, 2, 2),
                                        y.reshape(3, 2, 2), beta=0.5)),
    ("addr", lambda m, x, y: m.addr(x.reshape(3, 4), y[:3], y[4:8], alpha=2)),
    ("vander", lambda m, x, y: m.vander(x[:4], 3)),
    ("trapezoid", lambda m, x, y: m.trapezoid(x.reshape(3, 4), y[:3].sort().values, dim=0)),
    ("cumulative_trapezoid", lambda m, x, y: m.cumulative_trapezoid(x.reshape(3, 4), dx=0.5)),
    ("histogram", lambda m, x, y: tuple(m.histogram(x, 5, range=(-1.0, 1.0)))),
    ("scalar_tensor", lambda m, x, y: m.scalar_tensor(2.5)),
    ("hann_window", lambda m, x, y: m.hann_window(8, dtype=m.float64)),
    ("kaiser_window", lambda m, x, y: m.kaiser_window(8, True, 5.0, dtype=m.float64)),
    ("blackman_window", lambda m, x, y: m.blackman_window(5, False, dtype=m.float64)),
    ("split_with_sizes", lambda m, x, y: m.split_with_sizes(x, [5, 7])),
    ("gradient", lambda m, x, y: m.gradient(x.reshape(3, 4), spacing=2.0)),
    ("gradient_coordinates", lambda m, x, y: m.gradient(
        x.reshape(3, 4), spacing=(y[:4].sort().values + m.arange(4.0, dtype=m.float64),),
        dim=1, edge_order=2)),
]


@pytest.mark.parametrize("name, fn", ORACLE, ids=[n for n, _ in ORACLE])
def test_matches_pytorch(name, fn, rng):
    torch = pytest.importorskip("torch")
    a, b = rng.uniform(-1.5, 1.5, 12), rng.uniform(-1.5, 1.5, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # PyTorch's "index_reduce() is in beta"
        want = fn(torch, torch.tensor(a), torch.tensor(b))
    got = fn(gpugrad, gpugrad.tensor(a), gpugrad.tensor(b))
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(to_numpy(g), w.numpy(), rtol=1e-7, atol=1e-12)


def test_top_level_aliases_of_functional_and_of_methods(device):
    import gpugrad.nn.functional as F
    for name in ("conv3d", "conv_transpose3d", "max_pool3d", "max_pool1d_with_indices",
                 "dropout", "alpha_dropout", "feature_alpha_dropout", "bilinear",
                 "channel_shuffle", "hardshrink", "rrelu", "threshold", "pdist", "layer_norm",
                 "rms_norm"):
        assert getattr(gpugrad, name) is getattr(F, name), name
    x = gpugrad.tensor([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], device=device, requires_grad=True)
    filled = gpugrad.fill(x, 2.0)
    assert to_numpy(filled).tolist() == [[2.0] * 3] * 2 and not filled.requires_grad
    assert to_numpy(x).tolist() == [[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]]   # out of place
    d = gpugrad.detach(x)
    assert not d.requires_grad and d._data is x._data
    z = gpugrad.zeros(4, device=device)
    idx = gpugrad.tensor([1, 3], device=device)
    assert to_numpy(gpugrad.put(z, idx, gpugrad.tensor([5.0, 6.0], device=device))).tolist() \
        == [0.0, 5.0, 0.0, 6.0]
    assert to_numpy(gpugrad.index_put(z, (idx,), gpugrad.tensor(7.0, device=device),
                                      accumulate=True)).tolist() == [0.0, 7.0, 0.0, 7.0]
    assert to_numpy(z).tolist() == [0.0] * 4
    assert to_numpy(gpugrad.narrow_copy(x, 1, 1, 2)).tolist() == [[-2.0, 3.0], [0.0, -1.0]]
    r = gpugrad.renorm(x, 2, 0, 1.0)   # rows of norm > 1 scaled to norm 1
    np.testing.assert_allclose(np.linalg.norm(to_numpy(r), axis=1), [1.0, 1.0], rtol=1e-6)
    assert to_numpy(gpugrad.dropout(x, 0.5, False)).tolist() == to_numpy(x).tolist()
    assert to_numpy(gpugrad.threshold(x, 0.6, 9.0)).tolist() == [[1.0, 9.0, 3.0],
                                                                 [9.0, 9.0, 9.0]]


F = np.array([[1.0, 2.0, 4.0, 8.0, 16.0], [10.0, 20.0, 35.0, 80.0, 100.0], [0, 1, 0, 1, 0]])
