"""Special functions (gpugrad.special and the top-level names): the series gpugrad sums itself
(SciPy's fast path switched off) against the math module and written-out references, exact values
at known points, PyTorch's edge values and errors, double backward through the derivative chain,
and PyTorch itself as an oracle when it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_numpy
from op_db import _ERF, _bisect, _digamma_reflected, _i1_ref, _ndtr_ref, _polygamma_ref, _vec

import gpugrad
from gpugrad.ops import special as sp


@pytest.fixture
def own_series(monkeypatch):
    """The xp-generic numerics, with SciPy's fast path off (as on a machine without SciPy)."""
    monkeypatch.setattr(sp, "_fast", lambda xp, name: None)


def _t(a, device, grad=False):
    return gpugrad.tensor(np.asarray(a, dtype=np.float64), device=device, requires_grad=grad)


def _rel_close(got, want, rtol):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-13)


def test_lgamma_series_matches_math(own_series, device, rng):
    x = np.concatenate([rng.uniform(-20, 30, 400), 10 ** rng.uniform(-200, 200, 100)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    got = to_numpy(gpugrad.lgamma(_t(x, device)))
    _rel_close(got, _vec(math.lgamma)(x), 1e-11)


def test_lgamma_known_values_and_poles(own_series, device):
    got = to_numpy(gpugrad.lgamma(_t([0.5, 1.0, 2.0, 0.0, -1.0, -0.5, np.inf, -np.inf], device)))
    np.testing.assert_allclose(got[:3], [math.log(math.sqrt(math.pi)), 0.0, 0.0], atol=1e-15)
    assert np.isposinf(got[3:5]).all() and np.isposinf(got[6:]).all()
    np.testing.assert_allclose(got[5], math.log(2 * math.sqrt(math.pi)), rtol=1e-14)


def test_digamma_series_and_known_values(own_series, device, rng):
    x = np.concatenate([rng.uniform(0.05, 30, 300), rng.uniform(-4.9, 0, 100)])
    x = x[np.abs(x - np.round(x)) > 1e-2]
    _rel_close(to_numpy(gpugrad.digamma(_t(x, device))), _digamma_reflected(x), 1e-10)
    got = to_numpy(gpugrad.special.psi(_t([1.0, 0.5, 0.0, -1.0, -2.0], device)))
    np.testing.assert_allclose(got[:2], [-np.euler_gamma, -np.euler_gamma - 2 * math.log(2)],
                               rtol=1e-14)
    assert np.isneginf(got[2]) and np.isnan(got[3:]).all()   # PyTorch's values at the poles


@pytest.mark.parametrize("n", [1, 2, 4])
def test_polygamma_series(own_series, device, rng, n):
    x = rng.uniform(0.05, 25, 200)
    _rel_close(to_numpy(gpugrad.polygamma(n, _t(x, device))), _polygamma_ref(n, x), 1e-10)
    # trigamma(1) = pi^2 / 6; the reflection below 1/2: psi1(x) + psi1(1 - x) = pi^2 / sin^2
    np.testing.assert_allclose(to_numpy(gpugrad.polygamma(1, _t([1.0], device))),
                               [math.pi ** 2 / 6], rtol=1e-14)
    if n == 1:
        neg = np.array([-0.3, -1.7, -3.25])
        got = to_numpy(gpugrad.polygamma(1, _t(neg, device)))
        _rel_close(got, (math.pi / np.sin(math.pi * neg)) ** 2 - _polygamma_ref(1, 1 - neg), 1e-11)


def test_polygamma_zero_is_digamma_and_negative_n_raises(device):
    x = _t([0.7, 2.5], device, grad=True)
    y = gpugrad.polygamma(0, x)
    assert type(y.grad_fn).__name__ == "DigammaBackward0"
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n\."):
        gpugrad.polygamma(-1, x)


def test_erfinv_inverts_erf(own_series, device, rng):
    x = np.concatenate([rng.uniform(-5.5, 5.5, 400), 10 ** rng.uniform(-300, -1, 50)])
    back = to_numpy(gpugrad.erfinv(gpugrad.special.erf(_t(x, device))))
    near_one = np.abs(x) > 3   # erf(x) rounds to within an ulp of 1: conditioning, not error
    _rel_close(back[~near_one], x[~near_one], 1e-13)
    u = rng.uniform(-0.5, 0.5, 300)
    _rel_close(to_numpy(gpugrad.erfinv(_t(u, device))), _bisect(_ERF, u, -7.0, 7.0), 1e-12)
    # near 1, through erfc: the x with erfc(x) = 1 - u
    u = np.concatenate([rng.uniform(0.5, 1, 100), 1 - 10 ** rng.uniform(-16, -1, 50)])
    erfc = _vec(math.erfc)
    want = _bisect(lambda t: -erfc(t), -(1 - u), 0.0, 7.0)
    _rel_close(to_numpy(gpugrad.erfinv(_t(u, device))), want, 1e-12)


def test_erfinv_edges(own_series, device):
    got = to_numpy(gpugrad.erfinv(_t([1.0, -1.0, 2.0, 0.0, -0.0], device)))
    assert np.isposinf(got[0]) and np.isneginf(got[1]) and np.isnan(got[2]) and got[3] == 0


def test_erfc_tail_keeps_relative_accuracy(own_series, device):
    x = np.array([5.0, 10.0, 26.0, -3.0])
    _rel_close(to_numpy(gpugrad.erfc(_t(x, device))), _vec(math.erfc)(x), 1e-13)


def test_ndtri_and_log_ndtr_tails(own_series, device, rng):
    p = np.concatenate([rng.uniform(0, 1, 200), 10 ** rng.uniform(-250, -2, 50)])
    got = to_numpy(gpugrad.special.ndtri(_t(p, device)))
    _rel_close(got, _bisect(_ndtr_ref, p, -40.0, 40.0), 1e-12)
    edges = to_numpy(gpugrad.special.ndtri(_t([0.0, 1.0, 0.5, 1.5], device)))
    assert np.isneginf(edges[0]) and np.isposinf(edges[1]) and edges[2] == 0
    assert np.isnan(edges[3])
    x = np.array([-30.0, -5.0, 0.0, 3.0, 9.0])
    _rel_close(to_numpy(gpugrad.special.log_ndtr(_t(x, device))), np.log(_ndtr_ref(x)), 1e-12)


def test_bessel_series_and_asymptotics(own_series, device, rng):
    x = np.concatenate([rng.uniform(-40, 40, 300), rng.uniform(-700, 700, 50)])
    _rel_close(to_numpy(gpugrad.i0(_t(x, device))), np.i0(x), 1e-12)
    small = x[np.abs(x) < 30]
    _rel_close(to_numpy(gpugrad.special.i1(_t(small, device))), _i1_ref(small), 1e-12)
    # large |x|: I1 / I0 = 1 - 1 / (2x) - 1 / (8x^2) + O(x^-3)
    big = np.array([200.0, 400.0])
    ratio = to_numpy(gpugrad.special.i1(_t(big, device))) / to_numpy(gpugrad.i0(_t(big, device)))
    np.testing.assert_allclose(ratio, 1 - 1 / (2 * big) - 1 / (8 * big ** 2), rtol=1e-7)


def test_special_aliases_and_compositions(device):
    x = _t([0.2, 0.5, 1.5], device)
    S = gpugrad.special
    np.testing.assert_allclose(to_numpy(S.gammaln(x)), _vec(math.lgamma)(to_numpy(x)))
    np.testing.assert_allclose(to_numpy(S.expit(x)), 1 / (1 + np.exp(-to_numpy(x))))
    np.testing.assert_allclose(to_numpy(S.exp2(x)), 2 ** to_numpy(x))
    np.testing.assert_allclose(to_numpy(S.xlogy(x, x)), to_numpy(x) * np.log(to_numpy(x)))
    np.testing.assert_allclose(to_numpy(S.entr(_t([0.0, -1.0, 0.5], device))),
                               [0.0, -np.inf, 0.5 * math.log(2)])
    np.testing.assert_allclose(to_numpy(S.softmax(x, 0)), np.exp(to_numpy(x)) / np.exp(
        to_numpy(x)).sum())
    np.testing.assert_allclose(to_numpy(S.logsumexp(x, 0)), np.log(np.exp(to_numpy(x)).sum()))
    np.testing.assert_allclose(to_numpy(S.round(_t([0.5, 1.5, 2.4], device))), [0.0, 2.0, 2.0])
    np.testing.assert_allclose(to_numpy(S.multigammaln(_t([2.0], device), 2)),
                               [math.lgamma(2.0) + math.lgamma(1.5) + 0.5 * math.log(math.pi)])
    assert S.ndtr(_t([0.0], device)).item() == 0.5


def test_xlog1py_zero_conventions(device):
    x, y = _t([0.0, 0.0, 2.0], device, grad=True), _t([np.nan, -1.0, 1.0], device, grad=True)
    out = gpugrad.special.xlog1py(x, y)
    got = to_numpy(out)
    assert np.isnan(got[0]) and got[1] == 0 and got[2] == pytest.approx(2 * math.log(2))
    out[1:].sum().backward()
    assert to_numpy(x.grad)[1] == 0   # x == 0 and other <= -1: the gradient is 0, not -inf


def test_logit_int_input_and_eps_gradient(device):
    assert gpugrad.logit(gpugrad.tensor([0, 1], device=device)).dtype == gpugrad.float32
    x = _t([0.1, 0.5, 0.95], device, grad=True)
    gpugrad.logit(x, eps=0.2).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [0.0, 4.0, 0.0])


@pytest.mark.parametrize("name, n", [("lgamma", 3), ("digamma", 3), ("i0", 3), ("erfinv", 2)])
def test_higher_derivatives_chain_through_special_ops(own_series, device, name, n):
    # d/dx lgamma = digamma, then polygamma(1), polygamma(2); i0 -> i1 -> (i0 - i1 / x)
    x = _t([0.3, 0.7], device, grad=True)
    y = getattr(gpugrad, name)(x)
    for _ in range(n):
        y, = gpugrad.autograd.grad(y.sum(), x, create_graph=True)
    xs = to_numpy(x)
    h = 1e-4   # central difference of the (n-1)-th derivative, computed the same way
    z = _t(np.concatenate([xs + h, xs - h]), device, grad=True)
    w = getattr(gpugrad, name)(z)
    for _ in range(n - 1):
        w, = gpugrad.autograd.grad(w.sum(), z, create_graph=True)
    w = to_numpy(w)
    np.testing.assert_allclose(to_numpy(y), (w[:2] - w[2:]) / (2 * h), rtol=1e-6)


def test_inplace_and_method_forms(device):
    x = _t([0.5, 2.5], device)
    want = to_numpy(gpugrad.digamma(x))
    assert x.clone().digamma_().allclose(gpugrad.tensor(want, device=device))
    np.testing.assert_allclose(to_numpy(x.clone().polygamma_(1)),
                               to_numpy(gpugrad.polygamma(1, x)))
    np.testing.assert_allclose(to_numpy(x.polygamma(2)), to_numpy(gpugrad.polygamma(2, x)))


def test_float32_keeps_dtype(device):
    x = gpugrad.tensor([0.5, 1.5], device=device)
    for fn in (gpugrad.lgamma, gpugrad.digamma, gpugrad.erfinv, gpugrad.i0, gpugrad.sinc):
        assert fn(x).dtype == gpugrad.float32


# -- PyTorch as an oracle (skipped without it) ----------------------------------------------------
@pytest.mark.parametrize("name, args, lo, hi", [
    ("lgamma", (), -4.5, 6.0), ("digamma", (), -4.5, 6.0), ("erfinv", (), -0.99, 0.99),
    ("erfc", (), -4.0, 4.0), ("sinc", (), -3.0, 3.0), ("i0", (), -8.0, 8.0),
    ("special.i1", (), -8.0, 8.0), ("special.ndtri", (), 0.01, 0.99),
    ("special.log_ndtr", (), -8.0, 4.0), ("special.entr", (), 0.05, 2.0),
    ("logit", (), 0.05, 0.95)])
def test_against_pytorch(own_series, rng, name, args, lo, hi):
    torch = pytest.importorskip("torch")
    x = rng.uniform(lo, hi, 64)
    mine = _t(x, "cpu", grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    f_mine, f_theirs = gpugrad, torch
    for part in name.split("."):
        f_mine, f_theirs = getattr(f_mine, part), getattr(f_theirs, part)
    y_mine, y_theirs = f_mine(mine, *args), f_theirs(theirs, *args)
    np.testing.assert_allclose(to_numpy(y_mine), y_theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    assert type(y_mine.grad_fn).__name__ == y_theirs.grad_fn.name()
    y_mine.sum().backward()
    y_theirs.sum().backward()
    np.testing.assert_allclose(to_numpy(mine.grad), theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_and_mvlgamma_against_pytorch(own_series, rng, n):
    torch = pytest.importorskip("torch")
    x = rng.uniform(0.1, 8.0, 32)
    # PyTorch's trigamma sums a short series (relative error ~1e-9); gpugrad's matches
    # _polygamma_ref to 1e-10 (test_polygamma_series)
    np.testing.assert_allclose(to_numpy(gpugrad.polygamma(n, _t(x, "cpu"))),
                               torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-8)
    x = x + n
    np.testing.assert_allclose(to_numpy(gpugrad.mvlgamma(_t(x, "cpu"), n + 1)),
                               torch.mvlgamma(torch.tensor(x), n + 1).numpy(), rtol=1e-10)


# -- more Tensor methods (gpugrad.ops.methods_more) ---------------------------------------------
def test_unfold_is_a_view_and_checks_its_arguments(device):
    x = gpugrad.arange(6.0, device=device)
    w = x.unfold(0, 3, 2)
    assert w.tolist() == [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]]
    x[2] = 10.0   # written through the base: both windows see it
    assert w[:, 0].tolist() == [0.0, 10.0] and w[0, 2].item() == 10.0
    assert gpugrad.tensor(1.0, device=device).unfold(0, 1, 1).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 6 but "
                                           "size is 7"):
        x.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(0, 2, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unfold(1, 2, 1)


def test_kthvalue_mode_aminmax(device):
    x = gpugrad.tensor([[3.0, 1.0, 2.0, 1.0, 3.0], [5.0, 4.0, 4.0, 5.0, 1.0]], device=device)
    k = x.kthvalue(3, dim=1, keepdim=True)
    assert k.values.tolist() == [[2.0], [4.0]] and k.indices.tolist() == [[2], [2]]
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for "
                                           r"dimension 1"):
        x.kthvalue(6, 1)
    m = x.mode(1)   # the smallest most frequent value, at its last occurrence
    assert m.values.tolist() == [1.0, 4.0] and m.indices.tolist() == [3, 2]
    lo, hi = x.aminmax()
    assert (lo.item(), hi.item()) == (1.0, 5.0)
    assert gpugrad.aminmax(x, dim=1).max.tolist() == [3.0, 5.0]
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        gpugrad.zeros(0, device=device).aminmax()


def test_repeat_interleave_forms_and_errors(device):
    x = gpugrad.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    assert x.repeat_interleave(2).tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    reps = gpugrad.tensor([1, 3], device=device)
    y = gpugrad.repeat_interleave(x, reps, dim=0)
    assert y.tolist() == [[1.0, 2.0]] + [[3.0, 4.0]] * 3
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [3.0, 3.0]]
    assert gpugrad.repeat_interleave(reps).tolist() == [0, 1, 1, 1]
    with pytest.raises(RuntimeError, match="Repeats must be non-negative"):
        x.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match=r"repeats must have the same size as input along "
                                           r"dim, but got repeats.size\(0\) = 3 and "
                                           r"input.size\(0\) = 2"):
        x.repeat_interleave(gpugrad.tensor([1, 2, 3], device=device), dim=0)


def test_bincount_unique_floor_divide_sgn(device):
    a = gpugrad.tensor([0, 1, 1, 4], device=device)
    assert gpugrad.bincount(a).tolist() == [1, 2, 0, 0, 1]
    assert a.bincount(minlength=7).tolist() == [1, 2, 0, 0, 1, 0, 0]
    w = gpugrad.tensor([0.5, 1.0, 2.0, 0.25], device=device)
    assert a.bincount(w).tolist() == [0.5, 3.0, 0.0, 0.0, 0.25]
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral"):
        gpugrad.bincount(gpugrad.tensor([-1], device=device))
    u, inv, counts = gpugrad.tensor([[3, 1], [1, 2]], device=device).unique(
        return_inverse=True, return_counts=True)
    assert u.tolist() == [1, 2, 3] and inv.tolist() == [[2, 0], [0, 1]]
    assert counts.tolist() == [2, 1, 1]
    x = gpugrad.tensor([7.0, -7.0], device=device, requires_grad=True)
    q = gpugrad.floor_divide(x, 2)
    assert q.tolist() == [3.0, -4.0] and not q.requires_grad
    assert gpugrad.sgn(gpugrad.tensor([-2.0, 0.0, 3.0], device=device)).tolist() == [-1, 0, 1]
    t = gpugrad.tensor([-2.0, 3.0], device=device)
    assert t.abs_() is t and t.tolist() == [2.0, 3.0]


def test_fill_diagonal(device):
    x = gpugrad.zeros(3, 4, device=device)
    assert x.fill_diagonal_(2.0) is x
    assert x.tolist() == [[2.0, 0, 0, 0], [0, 2.0, 0, 0], [0, 0, 2.0, 0]]
    tall = gpugrad.zeros(7, 3, device=device).fill_diagonal_(1.0, wrap=True)
    assert to_numpy(tall).sum(axis=1).tolist() == [1, 1, 1, 0, 1, 1, 1]
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        gpugrad.zeros(2, 3, 4, device=device).fill_diagonal_(1.0)
    # with grad: the diagonal's gradient is cut, the rest passes through
    w = gpugrad.ones(2, 2, device=device, requires_grad=True)
    v = w * 1
    v.fill_diagonal_(0.0)
    v.sum().backward()
    assert w.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_random_fills_follow_the_generator(device):
    def draw(method, *args):
        g = gpugrad.Generator(device=device) if device == "cpu" else None
        if g is None:
            gpugrad.manual_seed(3)
        else:
            g.manual_seed(3)
        return getattr(gpugrad.empty(2000, device=device, dtype=gpugrad.float64), method)(
            *args, generator=g)
    for method, args in (("bernoulli_", (0.25,)), ("exponential_", (2.0,)),
                         ("random_", (3, 9))):
        a, b = draw(method, *args), draw(method, *args)
        assert a.tolist() == b.tolist()
    np.testing.assert_allclose(to_numpy(draw("bernoulli_", 0.25)).mean(), 0.25, atol=0.04)
    np.testing.assert_allclose(to_numpy(draw("exponential_", 2.0)).mean(), 0.5, atol=0.05)
    r = to_numpy(draw("random_", 3, 9))
    assert set(np.unique(r)) == {3.0, 4.0, 5.0, 6.0, 7.0, 8.0}
    ints = gpugrad.empty(500, dtype=gpugrad.int64, device=device).random_(5)
    assert ints.dtype == gpugrad.int64 and set(to_numpy(ints).tolist()) == {0, 1, 2, 3, 4}
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        gpugrad.empty(3, device=device).random_(5, 2)


@pytest.mark.parametrize("call", [
    # kthvalue's index among ties is unspecified in PyTorch: its values only
    lambda m, x: m.kthvalue(x, 2, 0).values, lambda m, x: x.mode(0),
    lambda m, x: m.aminmax(x, dim=1),
    lambda m, x: x.unfold(1, 2, 1), lambda m, x: x.repeat_interleave(3, dim=1),
    lambda m, x: m.unique(x.round(), return_inverse=True, return_counts=True)])
def test_more_methods_against_pytorch(call, rng):
    torch = pytest.importorskip("torch")
    x = rng.integers(0, 4, size=(5, 4)).astype(np.float64)
    mine = call(gpugrad, gpugrad.tensor(x))
    theirs = call(torch, torch.tensor(x))
    mine = mine if isinstance(mine, tuple) else (mine,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(to_numpy(a), b.numpy())
