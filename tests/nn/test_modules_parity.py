"""nn modules against PyTorch over tables of modules: values and gradients."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
from tests.nn._parity import _grads

MODULES = [
    ("Conv3d", (2, 4, 3), dict(stride=2, padding=1, padding_mode="circular"), (1, 2, 4, 5, 4)),
    ("ConvTranspose3d", (2, 4, 2), dict(stride=2, groups=2), (1, 2, 2, 3, 2)),
    ("BatchNorm3d", (2,), dict(), (3, 2, 2, 2, 3)),
    ("MaxPool3d", (2,), dict(stride=1), (1, 2, 3, 4, 3)),
    ("AvgPool3d", (2,), dict(padding=1), (1, 2, 3, 4, 3)),
    ("LPPool3d", (2, 2), dict(), (1, 2, 4, 4, 2)),
    ("LazyConv2d", (3, 2), dict(), (1, 2, 4, 4)),
]


@pytest.mark.parametrize("name, args, kw, x_shape", MODULES, ids=[m[0] for m in MODULES])
def test_modules_against_pytorch(name, args, kw, x_shape, rng):
    torch = pytest.importorskip("torch")
    x = rng.standard_normal(x_shape)
    theirs = getattr(torch.nn, name)(*args, **kw).double()
    ours = getattr(nn, name)(*args, **kw).double()
    if name.startswith("Lazy"):
        theirs(torch.tensor(x)), ours(gpugrad.tensor(x))
    assert repr(ours) == repr(theirs)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        p.data = gpugrad.tensor(q.detach().numpy())
    want, want_grads = _grads(torch, lambda x: theirs(x), [x])
    got, got_grads = _grads(gpugrad, lambda x: ours(x), [x])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_grads[0], want_grads[0], rtol=1e-10, atol=1e-12)


f64 = gpugrad.float64


def _sign(a):
    return np.where(a >= 0, 1.0, -1.0)


ORACLE = [
    # name, module factory (given the nn namespace), input shapes and, for losses, what turns
    # the last random array into a target (which then gets no gradient)
    ("Hardsigmoid", lambda m: m.Hardsigmoid(), [(3, 4)]),
    ("Hardswish", lambda m: m.Hardswish(), [(3, 4)]),
    ("Hardshrink", lambda m: m.Hardshrink(0.3), [(3, 4)]),
    ("Softshrink", lambda m: m.Softshrink(0.3), [(3, 4)]),
    ("Softsign", lambda m: m.Softsign(), [(3, 4)]),
    ("Tanhshrink", lambda m: m.Tanhshrink(), [(3, 4)]),
    ("Threshold", lambda m: m.Threshold(0.1, -2.0), [(3, 4)]),
    ("RReLU_eval", lambda m: m.RReLU(0.1, 0.4).eval(), [(3, 4)]),
    ("Softmax2d", lambda m: m.Softmax2d(), [(2, 3, 2, 2)]),
    ("InstanceNorm1d", lambda m: m.InstanceNorm1d(3, affine=True), [(2, 3, 5)]),
    ("InstanceNorm2d_stats", lambda m: m.InstanceNorm2d(3, track_running_stats=True),
     [(2, 3, 2, 3)]),
    ("RMSNorm", lambda m: m.RMSNorm(4), [(3, 4)]),
    ("LocalResponseNorm", lambda m: m.LocalResponseNorm(3, 0.5, 0.75, 2.0), [(2, 5, 3, 2)]),
    ("Bilinear", lambda m: m.Bilinear(3, 4, 5), [(2, 3), (2, 4)]),
    ("ChannelShuffle", lambda m: m.ChannelShuffle(3), [(2, 6, 2)]),
    ("MarginRankingLoss", lambda m: m.MarginRankingLoss(0.2), [(5,), (5,), (5,)], _sign),
    ("HingeEmbeddingLoss", lambda m: m.HingeEmbeddingLoss(0.7, reduction="sum"), [(5,), (5,)],
     _sign),
    ("CosineEmbeddingLoss", lambda m: m.CosineEmbeddingLoss(0.1), [(4, 3), (4, 3), (4,)], _sign),
    ("SoftMarginLoss", lambda m: m.SoftMarginLoss(), [(3, 4), (3, 4)], _sign),
    ("MultiLabelSoftMarginLoss", lambda m: m.MultiLabelSoftMarginLoss(), [(3, 4), (3, 4)],
     lambda a: (a > 0).astype(float)),
    ("MultiMarginLoss", lambda m: m.MultiMarginLoss(p=2, margin=0.7), [(3, 4), (3,)],
     lambda a: np.array([0, 3, 1])),
    ("MultiLabelMarginLoss", lambda m: m.MultiLabelMarginLoss(reduction="none"), [(3, 4), (3, 4)],
     lambda a: np.array([[0, 3, -1, 2], [1, -1, 0, 0], [3, 2, 1, 0]])),
    ("TripletMarginLoss", lambda m: m.TripletMarginLoss(p=1.5, swap=True),
     [(4, 3), (4, 3), (4, 3)]),
    ("TripletMarginWithDistanceLoss", lambda m: m.TripletMarginWithDistanceLoss(swap=True),
     [(4, 3), (4, 3), (4, 3)]),
    ("GaussianNLLLoss", lambda m: m.GaussianNLLLoss(full=True), [(4, 3), (4, 3), (4, 1)],
     np.abs),
    ("PoissonNLLLoss", lambda m: m.PoissonNLLLoss(full=True), [(4, 3), (4, 3)],
     lambda a: np.abs(a) * 3),
    ("PoissonNLLLoss_prob", lambda m: m.PoissonNLLLoss(log_input=False), [(4, 3), (4, 3)],
     lambda a: np.abs(a) * 3),
]


@pytest.mark.parametrize("case", ORACLE, ids=[c[0] for c in ORACLE])
def test_matches_pytorch(case, rng):
    torch = pytest.importorskip("torch")
    name, factory, shapes = case[:3]
    target = case[3] if len(case) > 3 else None
    arrays = [rng.standard_normal(s) for s in shapes]
    if name == "PoissonNLLLoss_prob":
        arrays[0] = np.abs(arrays[0]) + 0.1
    if target is not None:   # the last input is a target: no gradient
        arrays[-1] = target(arrays[-1])
    n_diff = len(arrays) - (target is not None)
    ours, theirs = factory(nn).double(), factory(torch.nn).double()
    theirs.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    mine = [tensor(a, dtype=gpugrad.int64 if a.dtype.kind == "i" else f64,
                   requires_grad=i < n_diff) for i, a in enumerate(arrays)]
    ref = [torch.tensor(a, requires_grad=i < n_diff) for i, a in enumerate(arrays)]
    y, ty = ours(*mine), theirs(*ref)
    np.testing.assert_allclose(to_numpy(y), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = rng.standard_normal(tuple(ty.shape))
    (y * tensor(w)).sum().backward()
    (ty * torch.tensor(w)).sum().backward()
    # NOTE: PyTorch's hardsigmoid backward multiplies by a float32 1/6, even in float64
    tol = 1e-7 if name == "Hardsigmoid" else 1e-10
    for a, b in zip(mine[:n_diff], ref[:n_diff]):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=tol, atol=1e-12)
    for (k, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(to_numpy(p.grad), tp.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=k)
    for (k, b), (_, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        np.testing.assert_allclose(to_numpy(b), tb.numpy(), rtol=1e-10, err_msg=k)
