"""CTC loss: values against brute-force enumeration of alignments, unbatched and impossible
targets, zero_infinity, gradients, errors and agreement with PyTorch."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._exact_errors import _raises


def _ctc_brute(lp, target, length):
    """-log of the summed probability of every path of ``length`` frames collapsing to target."""
    total = 0.0
    for path in itertools.product(range(lp.shape[1]), repeat=length):
        out, prev = [], None
        for c in path:
            if c != prev and c != 0:
                out.append(c)
            prev = c
        if out == list(target):
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


def test_ctc_loss_concatenated_targets_match_enumeration(device):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 3))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    targets, il, tl = [1, 2, 2, 2, 1], [5, 4, 3], [2, 1, 2]
    expect = [_ctc_brute(lp[:, 0], [1, 2], 5), _ctc_brute(lp[:, 1], [2], 4),
              _ctc_brute(lp[:, 2], [2, 1], 3)]
    t = tensor(lp, device)
    none = F.ctc_loss(t, tensor(targets, device, gpugrad.int64), il, tl, reduction="none")
    np.testing.assert_allclose(to_numpy(none), expect, rtol=1e-12)
    mean = F.ctc_loss(t, tensor(targets, device, gpugrad.int64), il, tl)
    np.testing.assert_allclose(mean.item(), np.mean(np.array(expect) / np.array(tl)), rtol=1e-12)
    padded = tensor([[1, 2], [2, 0], [2, 1]], device, gpugrad.int64)
    total = nn.CTCLoss(reduction="sum")(t, padded, gpugrad.tensor(il), gpugrad.tensor(tl))
    np.testing.assert_allclose(total.item(), sum(expect), rtol=1e-12)


def test_ctc_loss_unbatched_impossible_and_zero_infinity(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 4))
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    t = tensor(lp, device, requires_grad=True)
    y = F.ctc_loss(t, tensor([3, 3], device, gpugrad.int64), [3], [2], reduction="none")
    assert y.shape == () and y.item() == pytest.approx(_ctc_brute(lp, [3, 3], 3), rel=1e-12)
    # [3, 3] needs a blank between the repeats: 3 frames, not 2
    inf = F.ctc_loss(t, tensor([3, 3], device, gpugrad.int64), [2], [2], reduction="sum")
    assert inf.item() == math.inf
    zero = F.ctc_loss(t, tensor([3, 3], device, gpugrad.int64), [2], [2], reduction="sum",
                      zero_infinity=True)
    zero.backward()
    assert zero.item() == 0 and not to_numpy(t.grad).any()


def test_ctc_loss_gradients(device):
    rng = np.random.default_rng(2)
    x = tensor(rng.standard_normal((5, 2, 4)), device, requires_grad=True)
    tg = tensor([[1, 3], [2, 2]], device, gpugrad.int64)
    for reduction in ("mean", "sum", "none"):
        def f(v, reduction=reduction):
            return F.ctc_loss(F.log_softmax(v, 2), tg, [5, 4], [2, 2], reduction=reduction)
        assert gradcheck(f, [x])
    with pytest.raises(NotImplementedError, match="double backward"):
        gradgradcheck(lambda v: F.ctc_loss(F.log_softmax(v, 2), tg, [5, 4], [2, 2]), [x])


def test_ctc_loss_errors():
    lp = gpugrad.randn(5, 2, 4).log_softmax(2)
    tg = gpugrad.tensor([[1, 2], [3, 3]])
    w = "(while checking arguments for ctc_loss_allocate_outputs)"
    cases = [
        (([6, 4], [2, 1]), {}, f"Expected input_lengths to have value at most 5, but got "
                               f"value 6 {w}"),
        (([5, 4], [3, 1]), {}, "Expected tensor to have size at least 3 at dimension 1, but got "
                               f"size 2 for argument #2 'targets' {w}"),
        (([5], [2, 1]), {}, "input_lengths must be of size batch_size"),
        (([5, 4], [2]), {}, "target_lengths must be of size batch_size"),
        (([5, 4], [2, 1]), {"blank": 4}, "blank must be in label range"),
        (([5, 4], [2, -1]), {}, f"Expected target_lengths to have value at least 0, but got "
                                f"value -1 {w}"),
        (([-1, 4], [2, 1]), {}, f"Expected input_lengths to have value at least 0, but got "
                                f"value -1 {w}"),
    ]
    for (il, tl), kw, message in cases:
        with _raises(RuntimeError, message):
            F.ctc_loss(lp, tg, il, tl, **kw)
    with _raises(RuntimeError, "Expected tensor to have size 4 at dimension 0, but got size 3 "
                 f"for argument #2 'targets' {w}"):
        F.ctc_loss(lp, gpugrad.tensor([1, 2, 3]), [5, 4], [2, 2])
    with _raises(RuntimeError, "input_lengths must be integral"):
        F.ctc_loss(lp, tg, gpugrad.tensor([5.0, 4.0]), gpugrad.tensor([2, 1]))
    with _raises(ValueError, "x is not a valid value for reduction"):
        F.ctc_loss(lp, tg, [5, 4], [2, 1], reduction="x")
    assert repr(nn.CTCLoss(blank=2)) == "CTCLoss()"


def test_ctc_loss_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    T, N, C, S = 14, 5, 6, 5
    x = rng.standard_normal((T, N, C))
    tl, il = rng.integers(0, S + 1, N), rng.integers(11, T + 1, N)
    il[0], tl[0] = 2, 4   # impossible: inf (nan gradient), or 0 with zero_infinity
    tg = rng.integers(1, C, (N, S))
    tg[1, :3] = 2         # repeats
    for reduction, zi in itertools.product(("none", "mean", "sum"), (False, True)):
        lpt = torch.tensor(x).log_softmax(2).requires_grad_()
        yt = torch.nn.functional.ctc_loss(lpt, torch.tensor(tg), torch.tensor(il),
                                          torch.tensor(tl), reduction=reduction, zero_infinity=zi)
        yt.sum().backward()
        lpg = gpugrad.tensor(lpt.detach().numpy(), requires_grad=True)
        yg = F.ctc_loss(lpg, gpugrad.tensor(tg), gpugrad.tensor(il), gpugrad.tensor(tl),
                        reduction=reduction, zero_infinity=zi)
        yg.sum().backward()
        np.testing.assert_allclose(to_numpy(yg), yt.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(to_numpy(lpg.grad), lpt.grad.numpy(), rtol=1e-9, atol=1e-12)
        assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__
