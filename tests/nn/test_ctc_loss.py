"""CTC loss, bicubic / trilinear / antialiased / 3-D interpolation, bicubic grid_sample, embedding
max_norm and scale_grad_by_freq, fractional max pooling, adaptive log-softmax, SyncBatchNorm,
DataParallel and the deprecated aliases: values by hand or from plain numpy, gradcheck (and
gradgradcheck where PyTorch has double backward) in float64, PyTorch's messages, and PyTorch as
an extra oracle (skipped without it)."""
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


def _raises(kind, message):
    return pytest.raises(kind, match="^" + __import__("re").escape(message) + "$")


# -- ctc_loss -------------------------------------------------------------------------------------
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


# -- interpolate ----------------------------------------------------------------------------------
def test_interpolate_bicubic_values_by_hand(device):
    # upsampling [0, 1, 2, 3] (a line) by 2, align_corners: a cubic kernel reproduces lines
    # away from the border; at the border the clamped taps bend it
    x = tensor([[[[0.0, 1.0, 2.0, 3.0]]]], device)
    y = F.interpolate(x, size=(1, 7), mode="bicubic", align_corners=True)
    np.testing.assert_allclose(to_numpy(y)[0, 0, 0, 2:5], [1.0, 1.5, 2.0], rtol=1e-14)
    # a constant stays constant, and equal sizes are the identity
    c = F.interpolate(gpugrad.full((1, 1, 3, 4), 2.5, dtype=gpugrad.float64, device=device),
                      scale_factor=1.7, mode="bicubic")
    np.testing.assert_allclose(to_numpy(c), 2.5, rtol=1e-14)
    r = tensor(np.random.default_rng(0).standard_normal((1, 2, 3, 4)), device)
    np.testing.assert_array_equal(to_numpy(F.interpolate(r, (3, 4), mode="bicubic")),
                                  to_numpy(r))


def test_interpolate_new_modes_gradients(device):
    rng = np.random.default_rng(4)
    x4 = tensor(rng.standard_normal((1, 2, 4, 3)), device, requires_grad=True)
    x5 = tensor(rng.standard_normal((1, 1, 2, 3, 3)), device, requires_grad=True)
    for f, x in [(lambda v: F.interpolate(v, (5, 2), mode="bicubic", align_corners=True), x4),
                 (lambda v: F.interpolate(v, (2, 5), mode="bilinear", antialias=True), x4),
                 (lambda v: F.interpolate(v, (3, 2), mode="bicubic", antialias=True), x4),
                 (lambda v: F.interpolate(v, scale_factor=1.5, mode="trilinear"), x5),
                 (lambda v: F.interpolate(v, (3, 2, 4), mode="area"), x5),
                 (lambda v: F.interpolate(v, (3, 2, 4), mode="nearest-exact"), x5)]:
        assert gradcheck(f, [x])
        assert gradgradcheck(f, [x])


def test_interpolate_mode_errors():
    z = gpugrad.zeros
    with _raises(NotImplementedError, "Got 4D input, but trilinear mode needs 5D input"):
        F.interpolate(z(1, 2, 3, 4), scale_factor=2, mode="trilinear")
    with _raises(NotImplementedError, "Got 5D input, but bilinear mode needs 4D input"):
        F.interpolate(z(1, 2, 3, 4, 5), scale_factor=2, mode="bilinear")
    with _raises(ValueError, "Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                 "modes and requires a 4-D tensor as input"):
        F.interpolate(z(1, 2, 3, 4, 5), size=(1, 2, 3), mode="trilinear", antialias=True)


def test_interpolate_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    cases = [((2, 3, 4, 5), dict(size=(7, 3), mode="bicubic")),
             ((2, 3, 6, 9), dict(scale_factor=0.6, mode="bicubic", align_corners=True)),
             ((2, 3, 6, 9), dict(scale_factor=0.4, mode="bilinear", antialias=True)),
             ((2, 3, 6, 9), dict(size=(4, 11), mode="bicubic", antialias=True)),
             ((2, 3, 6, 9), dict(size=(2, 3), mode="bilinear", antialias=True,
                                 align_corners=True)),
             ((1, 2, 3, 4, 5), dict(scale_factor=1.7, mode="trilinear")),
             ((1, 2, 3, 4, 5), dict(size=(5, 2, 7), mode="trilinear", align_corners=True)),
             ((1, 2, 3, 4, 5), dict(size=(5, 2, 7), mode="nearest")),
             ((1, 2, 3, 4, 5), dict(size=(6, 3, 4), mode="nearest-exact")),
             ((1, 2, 3, 4, 5), dict(size=(2, 3, 3), mode="area"))]
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        for shape, kw in cases:
            x = rng.standard_normal(shape).astype(dtype)
            xt, xg = torch.tensor(x, requires_grad=True), gpugrad.tensor(x, requires_grad=True)
            yt, yg = torch.nn.functional.interpolate(xt, **kw), F.interpolate(xg, **kw)
            g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
            yt.backward(torch.tensor(g))
            yg.backward(gpugrad.tensor(g))
            np.testing.assert_allclose(to_numpy(yg), yt.detach().numpy(), rtol=tol, atol=tol)
            np.testing.assert_allclose(to_numpy(xg.grad), xt.grad.numpy(), rtol=tol, atol=tol)
            if kw["mode"] != "area":
                assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__
    up = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False)
    x = rng.standard_normal((1, 1, 3, 3))
    np.testing.assert_allclose(to_numpy(up(gpugrad.tensor(x))), torch.nn.Upsample(
        scale_factor=2, mode="bicubic")(torch.tensor(x)).numpy(), rtol=1e-12)


# -- grid_sample bicubic --------------------------------------------------------------------------
def test_grid_sample_bicubic_identity_and_gradients(device):
    rng = np.random.default_rng(6)
    x = tensor(rng.standard_normal((1, 2, 3, 4)), device, requires_grad=True)
    theta = tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]], device)
    grid = F.affine_grid(theta, (1, 2, 3, 4), align_corners=False)
    y = F.grid_sample(x, grid, mode="bicubic", align_corners=False)
    np.testing.assert_allclose(to_numpy(y), to_numpy(x), rtol=1e-12, atol=1e-14)
    g = tensor(rng.uniform(-1.2, 1.2, (1, 2, 3, 2)), device, requires_grad=True)
    for pm in ("zeros", "border", "reflection"):
        def f(a, b, pm=pm):
            return F.grid_sample(a, b, mode="bicubic", padding_mode=pm,
                                 align_corners=pm == "border")
        assert gradcheck(f, [x, g])
        assert gradgradcheck(f, [x, g])
    with _raises(RuntimeError, "grid_sampler(): bicubic interpolation only supports 4D input"):
        F.grid_sample(gpugrad.zeros(1, 1, 2, 2, 2), gpugrad.zeros(1, 1, 1, 1, 3), mode="bicubic",
                      align_corners=False)


def test_grid_sample_bicubic_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    for pm, ac in itertools.product(("zeros", "border", "reflection"), (False, True)):
        x, g = rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.3, 1.3, (2, 6, 7, 2))
        xt, gt = torch.tensor(x, requires_grad=True), torch.tensor(g, requires_grad=True)
        xg, gg = gpugrad.tensor(x, requires_grad=True), gpugrad.tensor(g, requires_grad=True)
        kw = dict(mode="bicubic", padding_mode=pm, align_corners=ac)
        yt, yg = torch.nn.functional.grid_sample(xt, gt, **kw), F.grid_sample(xg, gg, **kw)
        w = rng.standard_normal(tuple(yt.shape))
        yt.backward(torch.tensor(w))
        yg.backward(gpugrad.tensor(w))
        for a, b in ((yg, yt), (xg.grad, xt.grad), (gg.grad, gt.grad)):
            np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-10, atol=1e-12)


# -- embedding ------------------------------------------------------------------------------------
def test_embedding_max_norm_renormalises_read_rows_in_place(device):
    w = tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]], device, requires_grad=True)
    version = w._version
    y = F.embedding(tensor([[0, 1], [0, 3]], device, gpugrad.int64), w, max_norm=2.0)
    s = 2.0 / (5.0 + 1e-7)
    expect = np.array([[3 * s, 4 * s], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]])
    np.testing.assert_allclose(to_numpy(w), expect, rtol=1e-15)   # row 2 is not read
    np.testing.assert_allclose(to_numpy(y), expect[[[0, 1], [0, 3]]], rtol=1e-15)
    assert w._version > version
    emb = nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0)
    emb(gpugrad.tensor([1, 2]))
    norms = to_numpy(emb.weight).__abs__().sum(1)
    assert np.all(norms[1:3] <= 1.0 + 1e-6)


def test_embedding_scale_grad_by_freq(device):
    w = tensor(np.arange(8.0).reshape(4, 2), device, requires_grad=True)
    idx = tensor([[0, 2], [2, 2]], device, gpugrad.int64)
    F.embedding(idx, w, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(to_numpy(w.grad), [[1, 1], [0, 0], [1, 1], [0, 0]])
    w.grad = None
    F.embedding(idx, w, padding_idx=0, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(to_numpy(w.grad), [[0, 0], [0, 0], [1, 1], [0, 0]])
    # not the derivative (gradcheck cannot hold): the differentiable backward gives the same
    y = F.embedding(idx, w, scale_grad_by_freq=True) ** 2
    g, = gpugrad.autograd.grad(y.sum(), w, create_graph=True)
    assert g.requires_grad
    np.testing.assert_allclose(to_numpy(g), [[0, 2], [0, 0], [8, 10], [0, 0]])


def test_embedding_bag_max_norm(device):
    w = tensor([[3.0, 4.0], [0.3, 0.4]], device, requires_grad=True)
    y = F.embedding_bag(tensor([0, 1], device, gpugrad.int64), w,
                        tensor([0], device, gpugrad.int64), max_norm=1.0, mode="sum")
    s = 1.0 / (5.0 + 1e-7)
    np.testing.assert_allclose(to_numpy(y), [[3 * s + 0.3, 4 * s + 0.4]], rtol=1e-14)


# -- fractional max pooling -----------------------------------------------------------------------
def test_fractional_max_pool2d_windows_and_gradients(device):
    x = tensor(np.arange(25.0).reshape(1, 1, 5, 5), device, requires_grad=True)
    u = tensor([[[0.5, 0.5]]], device)
    # starts: alpha = (5 - 2) / (3 - 1) = 1.5; int((i + .5) 1.5) - int(.75) = 0, 2; last 3
    y, idx = F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True,
                                     _random_samples=u)
    rows = [0, 2, 3]
    expect = [[(r + 1) * 5 + c + 1 for c in rows] for r in rows]
    assert to_numpy(y)[0, 0].tolist() == expect and to_numpy(idx)[0, 0].tolist() == expect
    assert not idx.requires_grad and idx.dtype == gpugrad.int64
    r = tensor(np.random.default_rng(8).permutation(48).reshape(1, 3, 4, 4) / 7.0, device,
               requires_grad=True)
    f = lambda v: F.fractional_max_pool2d(v, (2, 2), output_ratio=(0.5, 0.75),  # noqa: E731
                                          _random_samples=tensor([[[0.2, 0.7]] * 3], device))
    assert f(r).shape == (1, 3, 2, 3)
    assert gradcheck(f, [r])
    assert gradgradcheck(f, [r])
    m = nn.FractionalMaxPool2d(3, output_ratio=0.5)
    assert m(gpugrad.randn(2, 9, 9)).shape == (2, 4, 4) and repr(m) == "FractionalMaxPool2d()"


def test_fractional_max_pool2d_errors():
    with _raises(ValueError, "FractionalMaxPool2d requires specifying either an output size, or "
                 "a pooling ratio"):
        nn.FractionalMaxPool2d(2)
    with _raises(ValueError, "only one of output_size and output_ratio may be specified"):
        nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)
    with _raises(ValueError, "output_ratio must be between 0 and 1 (got 1.5)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with _raises(RuntimeError, "fractional_max_pool2d(): pool height 2 too large relative to "
                 "input height 5"):
        F.fractional_max_pool2d(gpugrad.randn(1, 1, 5, 9), (2, 3), output_size=(5, 8))


def test_fractional_max_pool2d_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    for shape, k, size in (((2, 3, 9, 11), (2, 3), (4, 5)), ((3, 7, 8), 2, (3, 6))):
        x = rng.standard_normal(shape)
        u = rng.uniform(size=(shape[0] if len(shape) == 4 else 1, shape[-3], 2))
        xt, xg = torch.tensor(x, requires_grad=True), gpugrad.tensor(x, requires_grad=True)
        yt, it = torch.nn.functional.fractional_max_pool2d(xt, k, size, None, True,
                                                           torch.tensor(u))
        yg, ig = F.fractional_max_pool2d(xg, k, size, None, True, gpugrad.tensor(u))
        w = rng.standard_normal(tuple(yt.shape))
        yt.backward(torch.tensor(w))
        yg.backward(gpugrad.tensor(w))
        np.testing.assert_array_equal(to_numpy(yg), yt.detach().numpy())
        np.testing.assert_array_equal(to_numpy(ig), it.numpy())
        np.testing.assert_allclose(to_numpy(xg.grad), xt.grad.numpy(), rtol=1e-15)
        assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__


# -- adaptive log-softmax -------------------------------------------------------------------------
def test_adaptive_log_softmax_probabilities_and_errors():
    gpugrad.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(6, 9, [2, 5], div_value=2.0, dtype=gpugrad.float64)
    x = gpugrad.randn(5, 6, dtype=gpugrad.float64, requires_grad=True)
    target = gpugrad.tensor([0, 3, 8, 1, 5])
    logp = m.log_prob(x)
    np.testing.assert_allclose(to_numpy(logp.exp().sum(1)), 1.0, rtol=1e-12)
    out, loss = m(x, target)
    np.testing.assert_allclose(to_numpy(out), to_numpy(logp)[np.arange(5), [0, 3, 8, 1, 5]],
                               rtol=1e-12)
    assert loss.item() == pytest.approx(-to_numpy(out).mean(), rel=1e-12)
    assert to_numpy(m.predict(x)).tolist() == to_numpy(logp).argmax(1).tolist()
    assert gradcheck(lambda v: m(v, target).loss, [x])
    assert [len(t) for t in m.tail] == [2, 2] and m.tail[1][0].out_features == 1
    with _raises(ValueError, "cutoffs should be a sequence of unique, positive integers sorted "
                 "in an increasing order, where each value is between 1 and n_classes-1"):
        nn.AdaptiveLogSoftmaxWithLoss(6, 9, [5, 2])
    with _raises(RuntimeError, "Target values should be in [0, 8], but values in range [0, 9] "
                 "were found. "):
        m(x, gpugrad.tensor([0, 3, 9, 1, 5]))
    with _raises(RuntimeError, "0D or 1D target tensor expected, multi-target not supported"):
        m(x, gpugrad.zeros(5, 1, dtype=gpugrad.int64))


def test_adaptive_log_softmax_matches_torch():
    torch = pytest.importorskip("torch")
    a = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True).double()
    b = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True,
                                      dtype=gpugrad.float64)
    assert repr(a) == repr(b)
    with gpugrad.no_grad():
        for (n1, p1), (n2, p2) in zip(a.named_parameters(), b.named_parameters()):
            assert n1 == n2
            p2.copy_(gpugrad.tensor(p1.detach().numpy()))
    x = np.random.default_rng(10).standard_normal((6, 8))
    t = np.array([0, 4, 9, 2, 7, 5])
    xt, xg = torch.tensor(x, requires_grad=True), gpugrad.tensor(x, requires_grad=True)
    ot, og = a(xt, torch.tensor(t)), b(xg, gpugrad.tensor(t))
    np.testing.assert_allclose(to_numpy(og.output), ot.output.detach().numpy(), rtol=1e-12)
    ot.loss.backward()
    og.loss.backward()
    np.testing.assert_allclose(to_numpy(xg.grad), xt.grad.numpy(), rtol=1e-10)
    for p1, p2 in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(to_numpy(p2.grad), p1.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(to_numpy(b.log_prob(xg)), a.log_prob(xt).detach().numpy(),
                               rtol=1e-12)
    assert to_numpy(b.predict(xg)).tolist() == a.predict(xt).tolist()
    o1 = b(xg[1], gpugrad.tensor(4))
    assert o1.output.shape == () and o1.output.item() == pytest.approx(og.output[1].item())


# -- sync batch norm, data parallel, deprecated aliases -------------------------------------------
def test_sync_batch_norm_is_batch_norm_in_one_process(device):
    x = tensor(np.random.default_rng(11).standard_normal((4, 3, 2, 2, 2)), device)
    s = nn.SyncBatchNorm(3).to(device)
    y = s(x)
    mean, var = to_numpy(x).mean((0, 2, 3, 4)), to_numpy(x).var((0, 2, 3, 4))
    ref = (to_numpy(x) - mean[:, None, None, None]) / np.sqrt(var[:, None, None, None] + 1e-5)
    np.testing.assert_allclose(to_numpy(y), ref, rtol=1e-6, atol=1e-6)
    with _raises(ValueError, "expected at least 2D input (got 1D input)"):
        s(tensor([1.0, 2.0, 3.0], device))
    assert repr(s) == ("SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    net = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(3)))
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert isinstance(conv[1], nn.SyncBatchNorm) and isinstance(conv[2][0], nn.SyncBatchNorm)
    assert conv[1].weight is net[1].weight and conv[1].running_mean is net[1].running_mean


def test_data_parallel_without_gpu_calls_the_module():
    lin = nn.Linear(2, 3)
    dp = nn.DataParallel(lin)
    x = gpugrad.randn(4, 2)
    if not gpugrad.cuda.is_available():
        assert dp.device_ids == [] and dp.module is lin
        np.testing.assert_array_equal(to_numpy(dp(x)), to_numpy(lin(x)))
    assert repr(dp) == ("DataParallel(\n  (module): Linear(in_features=2, out_features=3, "
                        "bias=True)\n)")
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]


def test_deprecated_aliases_warn():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        loss = nn.NLLLoss2d()
    x = gpugrad.randn(2, 3, 4, 4).log_softmax(1)
    t = gpugrad.randint(0, 3, (2, 4, 4))
    assert loss(x, t).item() == pytest.approx(F.nll_loss(x, t).item(), rel=1e-12)
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = nn.Container(a=nn.Linear(1, 1))
    assert list(dict(c.named_children())) == ["a"]


def test_embedding_repr_names_every_option_set():
    assert repr(nn.Embedding(10, 3)) == "Embedding(10, 3)"
    assert repr(nn.Embedding(10, 3, max_norm=2)) == "Embedding(10, 3, max_norm=2)"
    assert repr(nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.5,
                             scale_grad_by_freq=True)) == (
        "Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.5, scale_grad_by_freq=True)")
