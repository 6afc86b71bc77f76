"""gpugrad.special's incomplete gamma, Hurwitz zeta, erfcx, scaled and unscaled Bessel functions,
Airy's Ai and the orthogonal polynomials. Exact values where closed forms exist, identities and
recurrences, mpmath and PyTorch as oracles when installed, gradients (gradcheck, double
backward), PyTorch's missing derivatives, dtypes and error messages. The series gpugrad sums
itself (lgamma, digamma, erfinv ...): test_special.py."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck
from gpugrad.ops import special

S = gpugrad.special
GRID = np.array([-50.0, -20.0, -7.5, -3.0, -1.0, -0.5, -1e-8, 0.0, 1e-8, 0.25, 0.5, 1.0, 1.9,
                 2.0, 2.1, 4.99, 5.0, 7.0, 10.0, 24.9, 25.1, 40.0, 300.0, 750.0])
UNARY = ["erfcx", "i0e", "i1e", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
         "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
         "airy_ai"]
POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]


def _v(fn, *args, device="cpu"):
    return to_numpy(fn(*[tensor(a, device) if isinstance(a, (list, np.ndarray)) else a
                         for a in args]))


def test_every_name_is_on_gpugrad_special():
    for name in special.__all__:
        assert getattr(S, name) is getattr(special, name)
    assert set(UNARY + POLYS + ["gammainc", "gammaincc", "zeta"]) <= set(special.__all__)


# -- closed forms ---------------------------------------------------------------------------------
def test_closed_form_values(device):
    pi = math.pi
    np.testing.assert_allclose(_v(S.zeta, [2.0, 4.0, 3.0], [1.0, 1.0, 2.0], device=device),
                               [pi ** 2 / 6, pi ** 4 / 90, 1.2020569031595942 - 1], rtol=1e-14)
    # zeta(2, 1/2) = (2^2 - 1) zeta(2)
    np.testing.assert_allclose(_v(S.zeta, [2.0], [0.5], device=device), [pi ** 2 / 2],
                               rtol=1e-14)
    x = np.array([0.1, 1.0, 3.0, 30.0])
    # P(1, x) = 1 - e^-x, P(1/2, x) = erf(sqrt x), Q(1, x) = e^-x
    np.testing.assert_allclose(_v(S.gammainc, np.ones(4), x, device=device), -np.expm1(-x),
                               rtol=1e-14)
    np.testing.assert_allclose(_v(S.gammaincc, np.ones(4), x, device=device), np.exp(-x),
                               rtol=1e-13)
    erf = np.vectorize(math.erf)(np.sqrt(x))
    np.testing.assert_allclose(_v(S.gammainc, np.full(4, 0.5), x, device=device), erf,
                               rtol=1e-14)
    np.testing.assert_allclose(_v(S.bessel_j0, [0.0], device=device), [1.0])
    np.testing.assert_allclose(_v(S.bessel_j1, [0.0], device=device), [0.0])
    np.testing.assert_allclose(_v(S.i0e, [0.0], device=device), [1.0])
    np.testing.assert_allclose(_v(S.erfcx, [0.0], device=device), [1.0])
    np.testing.assert_allclose(_v(S.spherical_bessel_j0, [0.0, pi / 2], device=device),
                               [1.0, 2 / pi], rtol=1e-15)
    # Ai(0) = 3^(-2/3) / Gamma(2/3)
    np.testing.assert_allclose(_v(S.airy_ai, [0.0], device=device),
                               [3 ** (-2 / 3) / math.gamma(2 / 3)], rtol=1e-15)
    # K_1/2 is elementary, and so is I_1/2: checked through K0 + ... is not; use the
    # Wronskian I0 K1 + I1 K0 = 1 / x instead
    z = np.array([0.3, 1.5, 2.5, 9.0, 40.0])
    i0, i1 = _v(S.modified_bessel_i0, z), _v(S.modified_bessel_i1, z)
    k0, k1 = _v(S.modified_bessel_k0, z), _v(S.modified_bessel_k1, z)
    np.testing.assert_allclose(i0 * k1 + i1 * k0, 1 / z, rtol=1e-13)
    # the Wronskian of J and Y: J1 Y0 - J0 Y1 = 2 / (pi x)
    z = np.array([0.3, 3.0, 4.9, 5.1, 12.0, 24.0, 26.0, 80.0])
    j0, j1 = _v(S.bessel_j0, z, device=device), _v(S.bessel_j1, z, device=device)
    y0, y1 = _v(S.bessel_y0, z, device=device), _v(S.bessel_y1, z, device=device)
    np.testing.assert_allclose(j1 * y0 - j0 * y1, 2 / (pi * z), rtol=1e-12)


def test_polynomial_closed_forms(device):
    x = np.array([-2.0, -0.7, 0.0, 0.3, 1.0, 1.5])
    c = {
        ("hermite_polynomial_h", 3): 8 * x ** 3 - 12 * x,
        ("hermite_polynomial_he", 4): x ** 4 - 6 * x ** 2 + 3,
        ("chebyshev_polynomial_t", 3): 4 * x ** 3 - 3 * x,
        ("chebyshev_polynomial_u", 2): 4 * x ** 2 - 1,
        ("chebyshev_polynomial_v", 2): 4 * x ** 2 - 2 * x - 1,
        ("chebyshev_polynomial_w", 2): 4 * x ** 2 + 2 * x - 1,
        ("laguerre_polynomial_l", 2): (x ** 2 - 4 * x + 2) / 2,
        ("legendre_polynomial_p", 3): (5 * x ** 3 - 3 * x) / 2,
        ("shifted_chebyshev_polynomial_t", 2): 2 * (2 * x - 1) ** 2 - 1,
    }
    for (name, n), want in c.items():
        np.testing.assert_allclose(_v(getattr(S, name), x, n, device=device), want, rtol=1e-13,
                                   atol=1e-13, err_msg=name)
    # T_n(cos t) = cos(n t) for the high degrees on the trigonometric path too
    t = np.array([0.3, 1.1, 2.5])
    np.testing.assert_allclose(_v(S.chebyshev_polynomial_t, np.cos(t), 20, device=device),
                               np.cos(20 * t), atol=1e-13)
    # negative degrees give 0; a tensor of degrees broadcasts against x
    assert not _v(S.legendre_polynomial_p, x, -1).any()
    got = _v(S.hermite_polynomial_h, [[0.5], [2.0]], [0, 1, 2, 3], device=device)
    xs = np.array([[0.5], [2.0]])
    np.testing.assert_allclose(got, np.hstack([np.ones((2, 1)), 2 * xs, 4 * xs ** 2 - 2,
                                               8 * xs ** 3 - 12 * xs]), rtol=1e-14)


@pytest.mark.parametrize("name, step", [
    ("hermite_polynomial_h", lambda n, x, p, q: 2 * x * q - 2 * n * p),
    ("hermite_polynomial_he", lambda n, x, p, q: x * q - n * p),
    ("legendre_polynomial_p", lambda n, x, p, q: ((2 * n + 1) * x * q - n * p) / (n + 1)),
    ("laguerre_polynomial_l", lambda n, x, p, q: ((2 * n + 1 - x) * q - n * p) / (n + 1)),
    ("chebyshev_polynomial_u", lambda n, x, p, q: 2 * x * q - p),
])
def test_polynomial_three_term_recurrences(name, step, device):
    x = np.array([-0.9, -0.2, 0.4, 0.95, 1.7])
    fn = getattr(S, name)
    vals = [_v(fn, x, n, device=device) for n in range(12)]
    for n in range(1, 11):
        np.testing.assert_allclose(vals[n + 1], step(n, x, vals[n - 1], vals[n]), rtol=1e-10,
                                   atol=1e-10)


# -- identities -----------------------------------------------------------------------------------
def test_identities(device):
    rng = np.random.default_rng(0)
    a, x = 10 ** rng.uniform(-2, 3, 200), 10 ** rng.uniform(-2, 3, 200)
    p, q = _v(S.gammainc, a, x, device=device), _v(S.gammaincc, a, x, device=device)
    np.testing.assert_allclose(p + q, 1.0, rtol=1e-13)
    # P(a + 1, x) = P(a, x) - x^a e^-x / Gamma(a + 1)
    a, x = rng.uniform(0.5, 20, 50), rng.uniform(0.5, 20, 50)
    lg = np.vectorize(math.lgamma)(a + 1)
    np.testing.assert_allclose(_v(S.gammainc, a + 1, x), _v(S.gammainc, a, x)
                               - np.exp(a * np.log(x) - x - lg), rtol=1e-11, atol=1e-15)
    # zeta(s, q) = zeta(s, q + 1) + q^-s
    s, q = rng.uniform(1.1, 6, 50), rng.uniform(0.05, 8, 50)
    np.testing.assert_allclose(_v(S.zeta, s, q, device=device),
                               _v(S.zeta, s, q + 1, device=device) + q ** -s, rtol=1e-12)
    z = np.concatenate([GRID, -GRID])
    ez = np.exp(-np.minimum(np.abs(z), 700))
    np.testing.assert_allclose(_v(S.i0e, z, device=device)[np.abs(z) < 700],
                               (ez * _v(S.modified_bessel_i0, z, device=device))[np.abs(z) < 700],
                               rtol=1e-13)
    zp = GRID[(GRID > 0) & (GRID < 700)]
    np.testing.assert_allclose(_v(S.scaled_modified_bessel_k1, zp, device=device),
                               np.exp(zp) * _v(S.modified_bessel_k1, zp, device=device),
                               rtol=1e-13)
    # erfcx(x) = exp(x^2) erfc(x) where neither overflows
    w = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(_v(S.erfcx, w, device=device),
                               np.exp(w * w) * np.vectorize(math.erfc)(w), rtol=1e-13)


def test_against_mpmath(device):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    cases = {
        "bessel_j0": lambda v: mp.besselj(0, v), "bessel_j1": lambda v: mp.besselj(1, v),
        "bessel_y0": lambda v: mp.bessely(0, v), "bessel_y1": lambda v: mp.bessely(1, v),
        "modified_bessel_k0": lambda v: mp.besselk(0, v),
        "scaled_modified_bessel_k1": lambda v: mp.besselk(1, v) * mp.exp(v),
        "i1e": lambda v: mp.besseli(1, v) * mp.exp(-abs(v)), "airy_ai": mp.airyai,
        "erfcx": lambda v: mp.erfc(v) * mp.exp(v * v),
    }
    pts = np.array([-35.0, -12.0, -9.99, -4.0, -0.3, 0.01, 0.7, 1.99, 2.01, 3.3, 4.99, 5.01,
                    9.5, 17.0, 24.99, 25.01, 60.0])
    for name, ref in cases.items():
        ok = pts > 0 if name in ("bessel_y0", "bessel_y1", "modified_bessel_k0",
                                 "scaled_modified_bessel_k1") else np.ones(len(pts), bool)
        x = pts[ok]
        want = np.array([float(ref(mp.mpf(v))) for v in x])
        np.testing.assert_allclose(_v(getattr(S, name), x, device=device), want, rtol=2e-12,
                                   atol=1e-15, err_msg=name)
    a = np.array([0.05, 0.7, 3.0, 30.0, 250.0, 1e4])
    x = np.array([0.01, 2.0, 2.5, 35.0, 240.0, 1.002e4])
    want = [float(mp.gammainc(u, 0, v, regularized=True)) for u, v in zip(a, x)]
    np.testing.assert_allclose(_v(S.gammainc, a, x, device=device), want, rtol=1e-11)
    want = [float(mp.gammainc(u, v, mp.inf, regularized=True)) for u, v in zip(a, x)]
    np.testing.assert_allclose(_v(S.gammaincc, a, x, device=device), want, rtol=1e-11)
    s, q = np.array([1.5, 2.2, 7.0, 30.0]), np.array([0.2, 3.0, -1.5, 1.5])
    want = [float(mp.zeta(u, v)) for u, v in zip(s, q)]
    np.testing.assert_allclose(_v(S.zeta, s, q, device=device), want, rtol=1e-11)
    # Q stays accurate where it is tiny: Q(a, x) ~ a (-log x - euler_gamma) for tiny a, x
    np.testing.assert_allclose(_v(S.gammaincc, [1e-300], [1e-300]),
                               [float(mp.gammainc(mp.mpf(1e-300), mp.mpf(1e-300), mp.inf,
                                                  regularized=True))], rtol=1e-13)


# -- gradients ------------------------------------------------------------------------------------
def test_gradients_gradcheck(device):
    a = tensor([0.7, 2.5, 6.0], device)
    x = tensor([0.4, 3.0, 5.0], device, requires_grad=True)
    for f in (S.gammainc, S.gammaincc):
        assert gradcheck(lambda v, f=f: f(a, v), [x])
        assert gradgradcheck(lambda v, f=f: f(a, v), [x])
    q = tensor([0.6, 1.5, 4.0], device, requires_grad=True)
    assert gradcheck(lambda v: S.zeta(3.5, v), [q])
    assert gradgradcheck(lambda v: S.zeta(tensor([2.5, 3.0, 5.0], device), v), [q])
    z = tensor([-2.5, -0.3, 0.7, 4.0], device, requires_grad=True)
    for f in (S.erfcx, S.i0e, S.i1e):
        assert gradcheck(f, [z])
        assert gradgradcheck(f, [z])


def test_gradient_values(device):
    a = tensor([2.0], device)
    x = tensor([1.5], device, requires_grad=True)
    g, = gpugrad.autograd.grad(S.gammainc(a, x), x)
    np.testing.assert_allclose(to_numpy(g), [1.5 * math.exp(-1.5)], rtol=1e-14)
    q = tensor([1.0], device, requires_grad=True)
    g, = gpugrad.autograd.grad(S.zeta(2.0, q), q)
    np.testing.assert_allclose(to_numpy(g), [-2 * 1.2020569031595942], rtol=1e-13)
    z = tensor([0.0], device, requires_grad=True)
    g, = gpugrad.autograd.grad(S.i1e(z), z)
    np.testing.assert_allclose(to_numpy(g), [0.5])
    g, = gpugrad.autograd.grad(S.erfcx(z), z)
    np.testing.assert_allclose(to_numpy(g), [-2 / math.sqrt(math.pi)], rtol=1e-15)


def test_missing_derivatives_raise_as_pytorch(device):
    a = tensor([1.5], device, requires_grad=True)
    x = tensor([0.5], device, requires_grad=True)
    for f, what in ((S.gammainc, "igamma: input"), (S.gammaincc, "igammac: input")):
        y = f(a, x)
        with pytest.raises(NotImplementedError,
                           match=f"^the derivative for '{what}' is not implemented.$"):
            y.sum().backward()
    s = tensor([2.5], device, requires_grad=True)
    for y in (S.zeta(s, x), S.zeta(s, 2.0)):
        with pytest.raises(NotImplementedError,
                           match="^the derivative for 'zeta' is not implemented.$"):
            y.sum().backward()
    assert type(S.zeta(s, 2.0).grad_fn).__name__ == "SpecialZetaBackward2"
    for name in UNARY[3:]:
        assert not getattr(S, name)(x).requires_grad
    for name in POLYS:
        assert not getattr(S, name)(x, 3).requires_grad


# -- dtypes and errors ----------------------------------------------------------------------------
def test_dtypes_and_broadcasting():
    f32 = gpugrad.tensor([0.5, 1.5])
    i64 = gpugrad.tensor([1, 2])
    assert S.zeta(f32 + 2, i64).dtype == gpugrad.float32
    assert S.zeta(i64 + 1, 2.5).dtype == gpugrad.float32
    assert S.gammainc(f32, f32.double()).dtype == gpugrad.float64
    assert S.chebyshev_polynomial_t(i64, i64).dtype == gpugrad.float32
    assert S.chebyshev_polynomial_t(f32, 3.7).dtype == gpugrad.float32
    np.testing.assert_allclose(to_numpy(S.chebyshev_polynomial_t(f32, 3.7)),
                               to_numpy(S.chebyshev_polynomial_t(f32, 3)))
    assert S.bessel_j0(i64).dtype == gpugrad.float32
    assert S.i0e(f32.half()).dtype == gpugrad.float16
    assert S.legendre_polynomial_p(gpugrad.ones(2, 1), gpugrad.ones(3)).shape == (2, 3)


def test_errors_match_pytorch():
    f32 = gpugrad.tensor([0.5, 1.5])
    with pytest.raises(RuntimeError, match=r"^The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(4\) at non-singleton dimension 1$"):
        S.zeta(gpugrad.ones(2, 3), gpugrad.ones(4))
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match"):
        S.hermite_polynomial_h(gpugrad.ones(2, 3), gpugrad.ones(4))
    with pytest.raises(NotImplementedError, match="^\"igamma_cpu\" not implemented for 'Long'$"):
        S.gammainc(gpugrad.tensor([1, 2]), gpugrad.tensor([1, 2]))
    with pytest.raises(NotImplementedError, match="\"bessel_j0_cpu\" not implemented for 'Half'"):
        S.bessel_j0(f32.half())
    with pytest.raises(NotImplementedError, match="\"zeta_cpu\" not implemented for 'Half'"):
        S.zeta(f32.half(), f32.half())
    with pytest.raises(TypeError, match=r"^special_gammainc\(\): argument 'other' \(position 2\) "
                                        r"must be Tensor, not float$"):
        S.gammainc(f32, 1.0)
    with pytest.raises(TypeError, match=r"special_zeta\(\) received an invalid combination of "
                                        r"arguments - got \(float, float\)"):
        S.zeta(2.0, 1.0)
    with pytest.raises(TypeError, match=r"special_chebyshev_polynomial_t\(\) received an invalid "
                                        r"combination of arguments - got \(int, int\)"):
        S.chebyshev_polynomial_t(2, 3)
    with pytest.raises(TypeError, match=r"^special_airy_ai\(\): argument 'input' \(position 1\) "
                                        r"must be Tensor, not float$"):
        S.airy_ai(1.0)


def test_edge_values():
    inf, nan = math.inf, math.nan
    got = _v(S.gammainc, [0.0, 0.0, 1.0, -1.0, inf, 1.0], [0.0, 1.0, 0.0, 1.0, 1.0, inf])
    np.testing.assert_array_equal(got, [nan, 1.0, 0.0, nan, 0.0, 1.0])
    got = _v(S.zeta, [1.0, 0.5, 2.0, 2.0], [1.0, 1.0, 0.0, -2.0])
    np.testing.assert_array_equal(got, [inf, nan, inf, inf])
    e = np.array([0.0, -1.0, inf, -inf, nan])
    np.testing.assert_array_equal(_v(S.bessel_y0, e), [-inf, nan, nan, nan, nan])
    np.testing.assert_array_equal(_v(S.modified_bessel_k0, e), [inf, nan, 0.0, nan, nan])
    np.testing.assert_array_equal(_v(S.bessel_j0, e)[2:4], [nan, nan])
    np.testing.assert_array_equal(_v(S.erfcx, e)[2:4], [0.0, inf])
    np.testing.assert_array_equal(_v(S.i0e, e)[2:4], [0.0, 0.0])


# -- PyTorch as the oracle ------------------------------------------------------------------------
def test_against_torch():
    torch = pytest.importorskip("torch")
    ts = torch.special
    x = np.concatenate([GRID, [math.inf, -math.inf, math.nan]])
    for name in UNARY:
        want = getattr(ts, name)(torch.tensor(x)).numpy()
        got = _v(getattr(S, name), x)
        # PyTorch's float64 J, Y and Ai are accurate to about 3e-8 in places (mpmath agrees
        # with gpugrad to 1e-12 there: test_against_mpmath)
        tol = dict(rtol=1e-7, atol=1e-7) if name.startswith(("bessel_", "airy")) else \
            dict(rtol=1e-9, atol=1e-14)
        np.testing.assert_allclose(got, want, err_msg=name, **tol)
    xp_ = np.array([-2.0, -1.0, -0.999, -0.5, 0.0, 0.25, 0.5, 0.999, 1.0, 1.5, 3.0])
    for name in POLYS:
        for n in (-1, 0, 1, 2, 5, 7, 9, 12):
            want = getattr(ts, name)(torch.tensor(xp_), n).numpy()
            got = _v(getattr(S, name), xp_, n)
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9, err_msg=f"{name} {n}")
        nt = np.array([0.0, 1.0, 2.9, 4.0, 10.0, -3.0, 8.0, 6.0, 11.0, 3.0, 2.0])
        want = getattr(ts, name)(torch.tensor(xp_), torch.tensor(nt)).numpy()
        np.testing.assert_allclose(_v(getattr(S, name), xp_, nt), want, rtol=1e-9, atol=1e-9)
    a = np.array([0.0, 0.0, 1.0, 1.0, 0.5, 3.0, 40.0, 200.0, 1e-3, 7.0, math.inf, math.nan])
    v = np.array([0.0, 2.0, 0.0, -1.0, 0.2, 3.5, 39.0, 205.0, 0.3, 1e-5, 1.0, 1.0])
    for name in ("gammainc", "gammaincc"):
        want = getattr(ts, name)(torch.tensor(a), torch.tensor(v)).numpy()
        np.testing.assert_allclose(_v(getattr(S, name), a, v), want, rtol=1e-8, atol=1e-300,
                                   err_msg=name)
    s = np.array([1.0, 0.5, 2.0, 2.0, 2.0, 3.0, 1.5, 12.0, math.inf])
    q = np.array([1.0, 1.0, 0.0, -1.0, -1.5, -2.5, 1e3, 0.25, 1.0])
    want = ts.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    np.testing.assert_allclose(_v(S.zeta, s, q), want, rtol=1e-12)
    for f, tf in ((S.erfcx, ts.erfcx), (S.i0e, ts.i0e), (S.i1e, ts.i1e)):
        xt = torch.tensor([-2.0, 0.3, 1.7], dtype=torch.float64, requires_grad=True)
        want, = torch.autograd.grad(tf(xt).sum(), xt)
        xg = tensor([-2.0, 0.3, 1.7], requires_grad=True)
        got, = gpugrad.autograd.grad(f(xg).sum(), xg)
        np.testing.assert_allclose(to_numpy(got), want.numpy(), rtol=1e-12)
