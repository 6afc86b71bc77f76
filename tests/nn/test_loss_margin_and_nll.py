"""Margin, embedding, triplet and Gaussian/Poisson NLL losses: values worked out by hand,
reductions, modules, shapes, gradcheck, errors and reprs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck

f64 = gpugrad.float64


X4 = [[0.1, 0.2, 0.4, 0.8]]


LOSS_CASES = [
    # name, call on tensors, input arrays (first ones differentiable), per-element 'none' values
    ("margin_ranking", lambda a, b, t: F.margin_ranking_loss(a, b, t, 0.5, reduction="none"),
     ([1.0, 2, 3], [2.0, 2, 1], [1.0, -1, 1]), [1.5, 0.5, 0]),
    ("hinge_embedding", lambda x, t: F.hinge_embedding_loss(x, t, reduction="none"),
     ([0.3, 2.0, -0.5, 0.3], [1.0, -1, -1, 0]), [0.3, 0, 1.5, 1.0]),
    ("cosine_embedding", lambda a, b, t: F.cosine_embedding_loss(a, b, t, -0.5, reduction="none"),
     ([[1.0, 0], [1, 1]], [[0.0, 1], [1, 0]], [-1.0, 1]), [0.5, 1 - 1 / math.sqrt(2)]),
    ("soft_margin", lambda x, t: F.soft_margin_loss(x, t, reduction="none"),
     ([2.0, -1, 0], [1.0, 1, -1]), [math.log1p(math.exp(-2)), math.log1p(math.e), math.log(2)]),
    ("multilabel_soft_margin", lambda x, t: F.multilabel_soft_margin_loss(x, t, reduction="none"),
     ([[0.0, 2.0]], [[1.0, 0.0]]), [(math.log(2) + math.log1p(math.exp(2))) / 2]),
    ("multi_margin", lambda x: F.multi_margin_loss(x, gpugrad.tensor([3], device=x.device),
                                                   reduction="none"),
     (X4,), [(0.3 + 0.4 + 0.6) / 4]),
    ("multi_margin_p2_weight", lambda x: F.multi_margin_loss(
        x, gpugrad.tensor([3], device=x.device), p=2,
        weight=gpugrad.tensor([1.0, 1, 1, 2], dtype=f64, device=x.device),
        reduction="none"), (X4,), [2 * (0.09 + 0.16 + 0.36) / 4]),
    ("multilabel_margin", lambda x: F.multilabel_margin_loss(
        x, gpugrad.tensor([[3, 0, -1, 1]], device=x.device), reduction="none"), (X4,),
     [(1.0 + 2.4) / 4]),
    ("multilabel_margin_repeat", lambda x: F.multilabel_margin_loss(
        x, gpugrad.tensor([[3, 3, -1, 1]], device=x.device), reduction="none"), (X4,),
     [2 * 1.3 / 4]),
    ("triplet_margin", lambda a, p, n: F.triplet_margin_loss(a, p, n, 2.0, eps=0.0,
                                                             reduction="none"),
     ([[0.0, 0], [0, 0]], [[3.0, 4], [1, 0]], [[1.0, 0], [0, 6]]), [6.0, 0]),
    ("triplet_margin_swap", lambda a, p, n: F.triplet_margin_loss(a, p, n, 1.0, p=1, eps=0.0,
                                                                  swap=True, reduction="none"),
     ([[0.0, 0]], [[3.0, 0]], [[4.0, 0]]), [3.0]),   # d(p, n) = 1 replaces d(a, n) = 4
    ("triplet_with_distance", lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: ((u - v) ** 2).sum(-1), margin=0.5,
        reduction="none"), ([[0.0, 0]], [[1.0, 1]], [[1.0, 0]]), [1.5]),
    ("gaussian_nll", lambda x, t, v: F.gaussian_nll_loss(x, t, v, full=True, reduction="none"),
     ([0.5, 2.0], [0.0, 3.0], [1.0, 4.0]),
     [0.125 + 0.5 * math.log(2 * math.pi), 0.5 * (math.log(4) + 0.25 + math.log(2 * math.pi))]),
    ("poisson_nll", lambda x, t: F.poisson_nll_loss(x, t, reduction="none"),
     ([0.0, 1.0], [2.0, 3.0]), [1.0, math.e - 3]),
    ("poisson_nll_full", lambda x, t: F.poisson_nll_loss(x, t, log_input=False, full=True,
                                                         eps=0.0, reduction="none"),
     ([0.5, 2.0], [0.0, 3.0]),
     [0.5, 2 - 3 * math.log(2) + 3 * math.log(3) - 3 + 0.5 * math.log(6 * math.pi)]),
]


@pytest.mark.parametrize("name,fn,arrays,want", LOSS_CASES, ids=[c[0] for c in LOSS_CASES])
def test_loss_values(name, fn, arrays, want, device):
    args = [tensor(a, device) for a in arrays]
    np.testing.assert_allclose(to_numpy(fn(*args)), want, rtol=1e-10, atol=1e-15)


LOSS_FNS = {
    "margin_ranking": (F.margin_ranking_loss, nn.MarginRankingLoss, 3),
    "hinge_embedding": (F.hinge_embedding_loss, nn.HingeEmbeddingLoss, 2),
    "cosine_embedding": (F.cosine_embedding_loss, nn.CosineEmbeddingLoss, 3),
    "soft_margin": (F.soft_margin_loss, nn.SoftMarginLoss, 2),
    "multilabel_soft_margin": (F.multilabel_soft_margin_loss, nn.MultiLabelSoftMarginLoss, 2),
    "triplet_margin": (F.triplet_margin_loss, nn.TripletMarginLoss, 3),
    "poisson_nll": (F.poisson_nll_loss, nn.PoissonNLLLoss, 2),
}


@pytest.mark.parametrize("name", sorted(LOSS_FNS))
def test_loss_reductions_and_modules(name, device, rng):
    fn, module, n = LOSS_FNS[name]
    shapes = {"cosine_embedding": [(4, 3), (4, 3), (4,)], "triplet_margin": [(4, 3)] * 3}.get(
        name, [(4, 3)] * n)
    arrays = [rng.standard_normal(s) for s in shapes]
    if name in ("margin_ranking", "hinge_embedding", "cosine_embedding", "soft_margin"):
        arrays[-1] = np.sign(arrays[-1])
    args = [tensor(a, device) for a in arrays]
    none = to_numpy(fn(*args, reduction="none"))
    np.testing.assert_allclose(to_numpy(fn(*args)), none.mean(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(fn(*args, reduction="sum")), none.sum(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(module(reduction="sum")(*args)), none.sum(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(module(size_average=False)(*args)), none.sum(),
                               rtol=1e-12)
    np.testing.assert_allclose(to_numpy(module(reduce=False)(*args)), none, rtol=1e-12)
    msg = "" if name == "multilabel_soft_margin" else " a valid value for reduction"
    with pytest.raises(ValueError, match=f"^bad is not{msg} valid$" if not msg else
                       f"^bad is not{msg}$"):
        fn(*args, reduction="bad")
    assert repr(module()) == f"{module.__name__}()"


@pytest.mark.parametrize("name", ["margin_ranking", "hinge_embedding", "cosine_embedding",
                                  "soft_margin", "multilabel_soft_margin", "multi_margin",
                                  "multilabel_margin", "triplet_margin", "triplet_distance",
                                  "gaussian_nll", "poisson_nll"])
def test_loss_gradcheck(name, device, rng):
    r = lambda *s: tensor(rng.standard_normal(s), device, requires_grad=True)   # noqa: E731
    sign = tensor(np.array([1.0, -1, 1, -1]), device)
    labels = tensor(np.array([0, 2, 1, 2]), device, dtype=gpugrad.int64)
    cases = {   # (function, differentiable inputs, smooth: also gradgradcheck)
        "margin_ranking": (lambda a, b: F.margin_ranking_loss(a, b, sign, 0.1), (r(4), r(4)),
                           False),
        "hinge_embedding": (lambda a: F.hinge_embedding_loss(a, sign, 0.5, reduction="sum"),
                            (r(4),), False),
        "cosine_embedding": (lambda a, b: F.cosine_embedding_loss(a, b, sign, -0.9),
                             (r(4, 3), r(4, 3)), True),
        "soft_margin": (lambda a, t: F.soft_margin_loss(a, t), (r(4), r(4)), True),
        "multilabel_soft_margin": (lambda a, t, w: F.multilabel_soft_margin_loss(a, t, w),
                                   (r(4, 3), r(4, 3), r(3)), True),
        "multi_margin": (lambda a, w: F.multi_margin_loss(a, labels, 2, 0.7, w),
                         (r(4, 3), r(3)), False),
        "multilabel_margin": (lambda a: F.multilabel_margin_loss(a, tensor(
            np.array([[0, 2, -1], [1, -1, 0], [2, 1, 0], [-1, 0, 0]]), device,
            dtype=gpugrad.int64)), (r(4, 3),), False),
        "triplet_margin": (lambda a, p, n: F.triplet_margin_loss(a, p, n, 3.0, p=1.5, swap=True),
                           (r(4, 3), r(4, 3), r(4, 3)), False),
        "triplet_distance": (lambda a, p, n: F.triplet_margin_with_distance_loss(
            a, p, n, distance_function=nn.PairwiseDistance(), margin=5.0, reduction="sum"),
            (r(4, 3), r(4, 3), r(4, 3)), False),
        "gaussian_nll": (lambda a, t, v: F.gaussian_nll_loss(a, t, v * v + 0.5, full=True),
                         (r(4, 3), r(4, 3), r(4, 1)), True),
        "poisson_nll": (lambda a, t: F.poisson_nll_loss(a, t * t + 2, full=True),
                        (r(4, 3), r(4, 3)), True),
    }
    fn, args, smooth = cases[name]
    assert gradcheck(fn, args)
    if smooth:
        assert gradgradcheck(fn, args)


def test_loss_shapes():
    x = tensor(np.array([0.1, 0.2, 0.4]))
    assert F.multi_margin_loss(x, gpugrad.tensor(2), reduction="none").shape == ()
    assert F.multi_margin_loss(x, gpugrad.tensor([2]), reduction="none").shape == (1,)
    assert F.multilabel_margin_loss(x, gpugrad.tensor([2, -1, 0]), reduction="none").shape == ()
    g = F.gaussian_nll_loss(tensor(np.zeros((2, 3))), tensor(np.ones((2, 3))),
                            tensor(np.array([1.0, 4.0])), reduction="none")   # one var per row
    np.testing.assert_allclose(to_numpy(g), np.array([[0.5], [0.5 * (math.log(4) + 0.25)]])
                               * np.ones((2, 3)), rtol=1e-12)
    g = F.gaussian_nll_loss(tensor(np.zeros(2)), tensor(np.ones(2)), 0.0, reduction="none")
    np.testing.assert_allclose(to_numpy(g), 0.5 * (math.log(1e-6) + 1e6), rtol=1e-12)


LOSS_ERRORS = [
    (lambda: F.margin_ranking_loss(tensor([1.0]), tensor([[1.0]]), tensor([1.0])), RuntimeError,
     r"^margin_ranking_loss : All input tensors should have same dimension but got sizes: "),
    (lambda: F.cosine_embedding_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                     tensor(1.0)), RuntimeError,
     r"^0D target tensor expects 1D input tensors, but found inputs with sizes \[2, 3\] and "
     r"\[2, 3\].$"),
    (lambda: F.cosine_embedding_loss(tensor(np.ones(3)), tensor(np.ones((2, 3))),
                                     tensor(np.ones(2))), RuntimeError,
     r"^1D target tensor expects 2D input tensors, but found inputs with sizes \[3\] and "
     r"\[2, 3\].$"),
    (lambda: F.cosine_embedding_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                     tensor(np.ones((2, 2)))), RuntimeError,
     "^0D or 1D target tensor expected, multi-target not supported$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 1]), p=3),
     ValueError, "^only p == 1 and p == 2 supported$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 1, 2])),
     RuntimeError, r"^multi_margin_loss: target tensor should be 1-D with size equal to the "
     r"number of input samples \(batch size\). Expected target size \[2\], but got \[3\]. Input "
     r"has shape \[2, 3\].$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3, 4))), gpugrad.tensor([0, 1])),
     RuntimeError, r"^Expected non-empty vector or matrix with optional 0-dim batch size, but "
     r"got: \[2, 3, 4\]$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 5])),
     RuntimeError, "^target out of range$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([0, 1]),
                                 weight=tensor(np.ones(2))), RuntimeError,
     r"^inconsistent weight size, expected 3 but got \[2\]$"),
    (lambda: F.multi_margin_loss(tensor(np.ones((2, 3))), tensor([0.0, 1.0])), RuntimeError,
     "^expected scalar type Long but found Double$"),
    (lambda: nn.MultiMarginLoss(weight=tensor(np.ones((2, 2)))), ValueError,
     "^MultiMarginLoss: expected weight to be None or 1D tensor, got 2D instead$"),
    (lambda: F.multilabel_margin_loss(tensor(np.ones((2, 3))), gpugrad.tensor([[0, 1, -1]])),
     RuntimeError, r"^inconsistent target size: \[1, 3\] for input of size: \[2, 3\]$"),
    (lambda: F.multilabel_margin_loss(tensor(np.ones((1, 4))), gpugrad.tensor([[3, -1, 5, 1]])),
     RuntimeError, "^argument #2 'target' is out of range$"),
    (lambda: F.triplet_margin_loss(tensor(np.ones((2, 3))), tensor(np.ones(3)),
                                   tensor(np.ones((2, 3)))), RuntimeError,
     "^The anchor, positive, and negative tensors are expected to have the same number of "
     "dimensions, but got: anchor 2D, positive 1D, and negative 2D inputs$"),
    (lambda: F.triplet_margin_loss(tensor([1.0]), tensor([1.0]), tensor([1.0]), margin=-1),
     ValueError, "^margin must be greater than 0, got -1$"),
    (lambda: nn.TripletMarginLoss(margin=0), ValueError,
     "^TripletMarginLoss: expected margin to be greater than 0, got 0 instead$"),
    (lambda: F.triplet_margin_with_distance_loss(tensor([1.0]), tensor([1.0]), tensor([1.0]),
                                                 margin=0), ValueError,
     "^margin must be greater than 0, got 0$"),
    (lambda: nn.TripletMarginWithDistanceLoss(margin=-1), ValueError,
     "^TripletMarginWithDistanceLoss: expected margin to be greater than 0, got -1 instead$"),
    (lambda: F.gaussian_nll_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                 tensor(-np.ones((2, 3)))), ValueError,
     "^var has negative entry/entries$"),
    (lambda: F.gaussian_nll_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                 tensor(np.ones((2, 2)))), ValueError,
     "^var is of incorrect size$"),
    (lambda: F.gaussian_nll_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                 tensor(np.ones((2, 3))), reduction="x"), ValueError,
     "^x is not valid$"),
    (lambda: F.multilabel_soft_margin_loss(tensor(np.ones((2, 3))), tensor(np.ones((2, 3))),
                                           reduction="x"), ValueError, "^x is not valid$"),
    (lambda: F.hinge_embedding_loss(tensor(np.ones(3)), tensor(np.ones(4))), RuntimeError,
     r"^The size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton "
     r"dimension 0$"),
]


@pytest.mark.parametrize("call,exc,msg", LOSS_ERRORS)
def test_loss_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


def test_loss_module_reprs():
    assert repr(nn.TripletMarginWithDistanceLoss()) == (
        "TripletMarginWithDistanceLoss(\n  (distance_function): PairwiseDistance()\n)")
    m = nn.MultiMarginLoss(weight=tensor(np.ones(3)))
    assert list(dict(m.named_buffers())) == ["weight"] and m.p == 1 and m.margin == 1.0
    assert nn.HingeEmbeddingLoss().margin == 1.0 and nn.MarginRankingLoss().margin == 0.0
    assert nn.PoissonNLLLoss().eps == 1e-8 and nn.GaussianNLLLoss().eps == 1e-6
