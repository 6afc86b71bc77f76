"""Double backward (create_graph=True) through convolutions, transposed convolutions and
pooling: finite-difference gradgradcheck over every option, closed-form second derivatives,
agreement of the graph-building backward with the plain one, and a gradient penalty through a
small CNN against PyTorch (skipped without it)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradgradcheck
from tests.nn._tensors import T

CONVS = [
    ("conv2d", (4, 3, 2), dict()),
    ("conv2d", (4, 3, 3), dict(stride=2, padding=1)),
    ("conv2d", (4, 2, 3), dict(stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2)),
    ("conv2d", (6, 1, 2), dict(stride=3, dilation=2, groups=3)),
    ("conv1d", (4, 3, 3), dict(stride=2, padding=2, dilation=2)),
    ("conv_transpose2d", (3, 2, 3), dict(stride=2, padding=1, output_padding=1)),
    ("conv_transpose2d", (3, 1, 2), dict(stride=(1, 2), padding=(0, 1), dilation=(2, 1),
                                         groups=3)),
    ("conv_transpose1d", (3, 2, 3), dict(stride=3, padding=1, output_padding=2)),
]


def _conv_args(name, w_shape, kw, device, rng):
    dims = 1 if name.endswith("1d") else 2
    cin = w_shape[0] if "transpose" in name else w_shape[1] * kw.get("groups", 1)
    cout = w_shape[1] * kw.get("groups", 1) if "transpose" in name else w_shape[0]
    w_full = w_shape + (w_shape[2] - 1,) if dims == 2 else w_shape
    x = T(rng.standard_normal((2, cin) + (7, 6)[:dims]), device, True)
    w = T(rng.standard_normal(w_full), device, True)
    b = T(rng.standard_normal(cout), device, True)
    return x, w, b


@pytest.mark.parametrize("name, w_shape, kw", CONVS)
def test_conv_gradgradcheck(name, w_shape, kw, device, rng):
    x, w, b = _conv_args(name, w_shape, kw, device, rng)
    f = getattr(F, name)
    assert gradgradcheck(lambda x, w, b: f(x, w, b, **kw), (x, w, b))


@pytest.mark.parametrize("name, w_shape, kw", CONVS)
def test_graph_backward_agrees_with_the_plain_one(name, w_shape, kw, device, rng):
    x, w, b = _conv_args(name, w_shape, kw, device, rng)
    y = getattr(F, name)(x, w, b, **kw)
    gy = T(rng.standard_normal(tuple(y.shape)), device)
    plain = gpugrad.autograd.grad(y, (x, w, b), gy, retain_graph=True)
    graph = gpugrad.autograd.grad(y, (x, w, b), gy, create_graph=True)
    # gx reads w and gw reads x, so both are differentiable; gb = sum(gy) reads no input
    assert [g.requires_grad for g in graph] == [True, True, False]
    for p, g in zip(plain, graph):
        np.testing.assert_allclose(to_numpy(g), to_numpy(p), rtol=1e-12, atol=1e-12)


def test_gradient_penalty_of_a_1x1_convolution_in_closed_form(device, rng):
    # y[n, o] = sum_c w[o, c] x[n, c]: the input gradient of sum(y) is s[c] = sum_o w[o, c] at
    # every position, so P = |grad|^2 = N H W sum_c s[c]^2 and dP/dw[o, c] = 2 N H W s[c]
    wv = rng.standard_normal((3, 2, 1, 1))
    x = T(rng.standard_normal((2, 2, 4, 5)), device, True)
    w = T(wv, device, True)
    g, = gpugrad.autograd.grad(F.conv2d(x, w).sum(), x, create_graph=True)
    (g ** 2).sum().backward()
    s = wv[:, :, 0, 0].sum(axis=0)
    expect = np.broadcast_to(2 * 2 * 4 * 5 * s[None, :, None, None], wv.shape)
    np.testing.assert_allclose(to_numpy(w.grad), expect, rtol=1e-12)
    assert x.grad is None   # the gradient of a linear map does not depend on x


def test_double_backward_of_conv_weight_gradient_in_closed_form(device, rng):
    # L = sum(conv(x, w)^2) / 2 with a 1x1 kernel: dL/dw[o, c] = sum_{n,p} y[n, o, p] x[n, c, p],
    # and d/dx of sum(dL/dw * v) = sum_o (w . v)... written out: v^T w-contraction below
    xv, wv, vv = (rng.standard_normal(s) for s in ((2, 3, 2, 2), (4, 3, 1, 1), (4, 3, 1, 1)))
    x, w = T(xv, device, True), T(wv, device, True)
    y = F.conv2d(x, w)
    gw, = gpugrad.autograd.grad((y ** 2).sum() / 2, w, create_graph=True)
    (gw * T(vv, device)).sum().backward()
    W, V = wv[:, :, 0, 0], vv[:, :, 0, 0]
    # sum_{o,c} V[o,c] sum_{n,p} (W x)[n,o,p] x[n,c,p]  ->  d/dx = W^T V x + V^T W x
    expect = np.einsum("oc,od,ndhw->nchw", W, V, xv) + np.einsum("oc,od,ndhw->nchw", V, W, xv)
    np.testing.assert_allclose(to_numpy(x.grad), expect, rtol=1e-12)


POOLS = [
    ("max_pool2d", (2,), {}),
    ("max_pool2d", (3,), dict(stride=2, padding=1, dilation=(1, 2), ceil_mode=True)),
    ("avg_pool2d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", ((2, 3),), dict(stride=1, divisor_override=4)),
    ("max_pool1d", (3,), dict(stride=2, padding=1)),
    ("avg_pool1d", (3,), dict(stride=2, padding=1, ceil_mode=True)),
]


@pytest.mark.parametrize("name, args, kw", POOLS)
@pytest.mark.parametrize("batched", [True, False])
def test_pool_gradgradcheck_and_both_backwards_agree(name, args, kw, batched, device, rng):
    shape = ((2, 3, 9) if name.endswith("1d") else (2, 3, 7, 8))[0 if batched else 1:]
    x = T(rng.standard_normal(shape), device, True)
    f = getattr(F, name)
    assert gradgradcheck(lambda x: f(x, *args, **kw), (x,))
    y = f(x, *args, **kw)
    gy = T(rng.standard_normal(tuple(y.shape)), device)
    plain, = gpugrad.autograd.grad(y, x, gy, retain_graph=True)
    graph, = gpugrad.autograd.grad(y, x, gy, create_graph=True)
    np.testing.assert_allclose(to_numpy(graph), to_numpy(plain), rtol=1e-12, atol=1e-15)


def test_max_pool_second_derivative_in_closed_form(device):
    # g = d sum(y^2)/dx = 2 y at each window's maximum; sum(g) = 2 sum(y), whose x-gradient is 2
    # at every maximum, once per window it wins
    x = T([[[[1, 5, 2, 0], [3, 4, 8, 1], [0, 9, 7, 6], [2, 2, 3, 1]]]], device, True)
    g, = gpugrad.autograd.grad((F.max_pool2d(x, 2) ** 2).sum(), x, create_graph=True)
    assert to_numpy(g).tolist() == [[[[0, 10, 0, 0], [0, 0, 16, 0], [0, 18, 14, 0],
                                       [0, 0, 0, 0]]]]
    h, = gpugrad.autograd.grad(g.sum(), x)
    assert to_numpy(h).tolist() == [[[[0, 2, 0, 0], [0, 0, 2, 0], [0, 2, 2, 0], [0, 0, 0, 0]]]]


def test_avg_pool_second_derivative_in_closed_form(device, rng):
    # L = |A x|^2 with A the 2x2 mean: g = 2 A^T A x; d<g, v>/dx = 2 A^T A v, which for
    # disjoint windows is each window's sum of v / 8, spread over the window
    xv, vv = rng.standard_normal((1, 1, 4, 4)), rng.standard_normal((1, 1, 4, 4))
    x = T(xv, device, True)
    g, = gpugrad.autograd.grad((F.avg_pool2d(x, 2) ** 2).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "AvgPool2DBackwardBackward0"
    h, = gpugrad.autograd.grad(g, x, T(vv, device), create_graph=True)
    sums = vv.reshape(2, 2, 2, 2).sum(axis=(1, 3))
    np.testing.assert_allclose(to_numpy(h)[0, 0], np.kron(sums, np.ones((2, 2))) / 8, rtol=1e-12)
    assert h.grad_fn is None   # v is a constant and g is linear in x


def test_a_gradient_penalty_step_trains_a_small_cnn(device):
    # a WGAN-GP style critic: the penalty on the input gradient's norm reaches every parameter
    gpugrad.manual_seed(0)
    critic = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Tanh(), nn.AvgPool2d(2),
                           nn.Conv2d(4, 2, 3, stride=2), nn.Flatten(), nn.Linear(2, 1)).to(device)
    opt = gpugrad.optim.SGD(critic.parameters(), lr=0.05)
    x = gpugrad.randn(8, 1, 6, 6, device=device, requires_grad=True)

    def penalty():
        g, = gpugrad.autograd.grad(critic(x).sum(), x, create_graph=True)
        return ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()

    before = penalty().item()
    for _ in range(30):
        opt.zero_grad()
        loss = penalty()
        loss.backward()
        assert all(p.grad is not None and bool(p.grad.abs().sum() > 0)
                   for p in critic.parameters() if p.ndim > 1)
        opt.step()
    assert penalty().item() < 0.5 * before


def test_gradient_penalty_matches_torch(device, rng):
    torch = pytest.importorskip("torch")

    def build(lib, F_):
        def critic(x, p):
            h = F_.conv2d(x, p[0], p[1], stride=1, padding=1)
            h = F_.max_pool2d(lib.tanh(h), 2, stride=1)
            h = F_.conv_transpose2d(h, p[2], None, stride=2, padding=1, output_padding=1)
            h = F_.avg_pool2d(F_.softplus(h), 3, stride=2, padding=1, count_include_pad=False)
            return F_.conv1d(h.flatten(2), p[3], stride=2, groups=2).pow(2).sum()

        def penalty(x, p):
            g, = lib.autograd.grad(critic(x, p), x, create_graph=True)
            return ((g.flatten(1).norm(dim=1) - 1) ** 2).mean()
        return penalty

    shapes = [(4, 2, 3, 3), (4,), (4, 2, 2, 2), (2, 1, 3)]
    xv = rng.standard_normal((3, 2, 5, 5))
    pv = [rng.standard_normal(s) * 0.5 for s in shapes]
    x, p = T(xv, device, True), [T(a, device, True) for a in pv]
    xt, pt = torch.tensor(xv, requires_grad=True), [torch.tensor(a, requires_grad=True)
                                                   for a in pv]
    ours, theirs = build(gpugrad, F)(x, p), build(torch, torch.nn.functional)(xt, pt)
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-10)
    ours.backward()
    theirs.backward()
    for a, b in zip([x] + p, [xt] + pt):
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-12)
