"""nn.functional against PyTorch over tables of functions: values and gradients."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn.functional as F
from tests.nn._parity import _grads

ORACLE = [
    ("conv3d", lambda F_, x, w, b: F_.conv3d(x, w, b, 2, 1, (1, 2, 1), 2),
     [(1, 4, 5, 4, 5), (2, 2, 2, 3, 2), (2,)]),
    ("conv_transpose3d", lambda F_, x, w, b: F_.conv_transpose3d(x, w, b, 2, 1, 1, 1, 1),
     [(1, 3, 2, 3, 2), (3, 2, 2, 3, 2), (2,)]),
    ("max_pool3d", lambda F_, x: F_.max_pool3d(x, 3, 2, 1, ceil_mode=True), [(1, 2, 5, 4, 5)]),
    ("avg_pool3d", lambda F_, x: F_.avg_pool3d(x, 3, 2, 1, True, False), [(1, 2, 5, 4, 5)]),
    ("adaptive_max_pool3d", lambda F_, x: F_.adaptive_max_pool3d(x, (2, 3, 2)),
     [(1, 2, 5, 4, 5)]),
    ("adaptive_avg_pool3d", lambda F_, x: F_.adaptive_avg_pool3d(x, (2, 3, 2)),
     [(1, 2, 5, 4, 5)]),
    ("lp_pool2d", lambda F_, x: F_.lp_pool2d(x.abs() + 0.5, 2.5, (2, 3), 1), [(1, 2, 4, 5)]),
    ("affine_grid", lambda F_, t: F_.affine_grid(t, (1, 2, 3, 2, 4), False), [(1, 3, 4)]),
    ("grid_sample", lambda F_, x, g: F_.grid_sample(x, g.tanh() * 1.3, "bilinear", "reflection",
                                                     True), [(1, 2, 3, 4), (1, 3, 2, 2)]),
    ("grid_sample_3d", lambda F_, x, g: F_.grid_sample(x, g, "bilinear", "border", False),
     [(1, 2, 3, 2, 4), (1, 2, 2, 1, 3)]),
]


@pytest.mark.parametrize("name, fn, shapes", ORACLE, ids=[o[0] for o in ORACLE])
def test_functions_against_pytorch(name, fn, shapes, rng):
    torch = pytest.importorskip("torch")
    arrays = [rng.standard_normal(s) for s in shapes]
    want, want_grads = _grads(torch, lambda *a: fn(torch.nn.functional, *a), arrays)
    got, got_grads = _grads(gpugrad, lambda *a: fn(F, *a), arrays)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for g, w in zip(got_grads, want_grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_further_functions_match_pytorch(rng):
    torch = pytest.importorskip("torch")
    tf = torch.nn.functional
    r = lambda *s: rng.standard_normal(s)   # noqa: E731
    tgt = rng.random((3, 4))
    tgt[0, 0] = 0
    cases = [
        ("group_norm", lambda m, x, w, b: m.group_norm(x, 2, w, b), [r(2, 4, 3), r(4), r(4)]),
        ("prelu", lambda m, x, w: m.prelu(x, w), [r(2, 3, 4), np.array([0.1, 0.2, 0.3])]),
        ("selu", lambda m, x: m.selu(x), [r(3, 4) * 3]),
        ("celu", lambda m, x: m.celu(x), [r(3, 4) * 3]),
        ("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 3), [r(2, 3, 7)]),
        ("adaptive_avg_pool2d", lambda m, x: m.adaptive_avg_pool2d(x, (3, None)), [r(2, 7, 5)]),
        ("normalize", lambda m, x: m.normalize(x, 3.0, 0), [r(3, 4)]),
        ("cosine_similarity", lambda m, a, b: m.cosine_similarity(a, b, 1), [r(3, 4), r(1, 4)]),
        ("pairwise_distance", lambda m, a, b: m.pairwise_distance(a, b), [r(3, 4), r(3, 4)]),
        ("logsigmoid", lambda m, x: m.logsigmoid(x), [r(12) * 10]),
        ("softmin", lambda m, x: m.softmin(x, 0), [r(3, 4)]),
        ("glu", lambda m, x: m.glu(x, 1), [r(3, 4)]),
        ("kl_div", lambda m, x: m.kl_div(x, tgt_of(m), reduction="batchmean"), [r(3, 4)]),
    ]
    tgt_of = lambda m: (torch.tensor(tgt) if m is tf else tensor(tgt))   # noqa: E731
    for name, fn, arrays in cases:
        mine = [tensor(a, requires_grad=True) for a in arrays]
        ref = [torch.tensor(a, requires_grad=True) for a in arrays]
        go, to = fn(F, *mine), fn(tf, *ref)
        np.testing.assert_allclose(to_numpy(go), to.detach().numpy(), rtol=1e-12, atol=1e-14,
                                   err_msg=name)
        w = r(*to.shape)
        (go * tensor(w)).sum().backward()
        (to * torch.tensor(w)).sum().backward()
        for a, b in zip(mine, ref):
            # NOTE: PyTorch's celu backward rounds 1/alpha to float32 (1e-8 relative)
            np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-12, atol=1e-14,
                                       err_msg=name)
