"""Special functions (gpugrad.special and the top-level names): the values gpugrad takes from
scipy.special / cupyx.scipy.special against the math module and written-out references, exact
values at known points, PyTorch's edge values and errors, double backward through the derivative
chain, and PyTorch itself as an oracle when it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import to_numpy
from op_db import _ERF, _bisect, _digamma_reflected, _i1_ref, _ndtr_ref, _polygamma_ref, _vec

import gpugrad


def _t(a, device, grad=False):
    return gpugrad.tensor(np.asarray(a, dtype=np.float64), device=device, requires_grad=grad)


def _rel_close(got, want, rtol):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-13)


def test_lgamma_matches_math(device, rng):
    x = np.concatenate([rng.uniform(-20, 30, 400), 10 ** rng.uniform(-200, 200, 100)])
    x = x[np.abs(x - np.round(x)) > 1e-3]
    got = to_numpy(gpugrad.lgamma(_t(x, device)))
    _rel_close(got, _vec(math.lgamma)(x), 1e-11)


def test_lgamma_known_values_and_poles(device):
    got = to_numpy(gpugrad.lgamma(_t([0.5, 1.0, 2.0, 0.0, -1.0, -0.5, np.inf, -np.inf], device)))
    np.testing.assert_allclose(got[:3], [math.log(math.sqrt(math.pi)), 0.0, 0.0], atol=1e-15)
    assert np.isposinf(got[3:5]).all() and np.isposinf(got[6:]).all()
    np.testing.assert_allclose(got[5], math.log(2 * math.sqrt(math.pi)), rtol=1e-14)


def test_digamma_against_series_and_known_values(device, rng):
    x = np.concatenate([rng.uniform(0.05, 30, 300), rng.uniform(-4.9, 0, 100)])
    x = x[np.abs(x - np.round(x)) > 1e-2]
    _rel_close(to_numpy(gpugrad.digamma(_t(x, device))), _digamma_reflected(x), 1e-10)
    got = to_numpy(gpugrad.special.psi(_t([1.0, 0.5, 0.0, -1.0, -2.0], device)))
    np.testing.assert_allclose(got[:2], [-np.euler_gamma, -np.euler_gamma - 2 * math.log(2)],
                               rtol=1e-14)
    assert np.isneginf(got[2]) and np.isnan(got[3:]).all()   # PyTorch's values at the poles


@pytest.mark.parametrize("n", [1, 2, 4])
def test_polygamma_series(device, rng, n):
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


def test_erfinv_inverts_erf(device, rng):
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


def test_erfinv_edges(device):
    got = to_numpy(gpugrad.erfinv(_t([1.0, -1.0, 2.0, 0.0, -0.0], device)))
    assert np.isposinf(got[0]) and np.isneginf(got[1]) and np.isnan(got[2]) and got[3] == 0


def test_erfc_tail_keeps_relative_accuracy(device):
    x = np.array([5.0, 10.0, 26.0, -3.0])
    _rel_close(to_numpy(gpugrad.erfc(_t(x, device))), _vec(math.erfc)(x), 1e-13)


def test_ndtri_and_log_ndtr_tails(device, rng):
    p = np.concatenate([rng.uniform(0, 1, 200), 10 ** rng.uniform(-250, -2, 50)])
    got = to_numpy(gpugrad.special.ndtri(_t(p, device)))
    _rel_close(got, _bisect(_ndtr_ref, p, -40.0, 40.0), 1e-12)
    edges = to_numpy(gpugrad.special.ndtri(_t([0.0, 1.0, 0.5, 1.5], device)))
    assert np.isneginf(edges[0]) and np.isposinf(edges[1]) and edges[2] == 0
    assert np.isnan(edges[3])
    x = np.array([-30.0, -5.0, 0.0, 3.0, 9.0])
    _rel_close(to_numpy(gpugrad.special.log_ndtr(_t(x, device))), np.log(_ndtr_ref(x)), 1e-12)


def test_bessel_i_against_series_and_asymptotics(device, rng):
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
def test_higher_derivatives_chain_through_special_ops(device, name, n):
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
def test_against_pytorch(rng, name, args, lo, hi):
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
def test_polygamma_and_mvlgamma_against_pytorch(rng, n):
    torch = pytest.importorskip("torch")
    x = rng.uniform(0.1, 8.0, 32)
    # PyTorch's trigamma sums a short series (relative error ~1e-9); gpugrad's matches
    # _polygamma_ref to 1e-10 (test_polygamma_series)
    np.testing.assert_allclose(to_numpy(gpugrad.polygamma(n, _t(x, "cpu"))),
                               torch.polygamma(n, torch.tensor(x)).numpy(), rtol=1e-8)
    x = x + n
    np.testing.assert_allclose(to_numpy(gpugrad.mvlgamma(_t(x, "cpu"), n + 1)),
                               torch.mvlgamma(torch.tensor(x), n + 1).numpy(), rtol=1e-10)
