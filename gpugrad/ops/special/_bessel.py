"""Bessel and Airy functions on arrays, written once against the array module (numpy or CuPy)
in float64:

- J0, J1: the power series up to |x| = 2, then up to 25 the trapezoidal rule on
  J_n(x) = 1/pi int_0^pi cos(n t - x sin t) dt, whose integrand is even and periodic, so the
  rule converges geometrically;
- Y0, Y1: the power series below 5, Neumann's series over J_2k (J_k from Miller's downward
  recurrence) up to 25;
- all four above 25: Hankel's asymptotic expansion;
- I0, I1 scaled by exp(-|x|): the power series up to 30, the asymptotic series above;
- K0, K1: the power series up to 2; above, the trapezoidal rule on
  exp(z) K_nu(z) = int_0^inf exp(-z (cosh t - 1)) cosh(nu t) dt, in t = s / sqrt(z) so that one
  fixed grid in s serves every z;
- Ai: Taylor steps along Ai'' = x Ai from x = 0 on [-10, 2], (1/pi) sqrt(x/3) K_1/3(2/3 x^3/2)
  above 2, the oscillatory asymptotic expansion below -10.

Edge values follow PyTorch (J, Y, I and Ai are nan at +-inf; K and Y are nan below 0).
"""
from __future__ import annotations

import math

import numpy as np

_EULER = 0.5772156649015329
_SPLIT_JY = 25.0
_J_NODES = 40            # intervals of the trapezoidal rule on [0, pi]
_MILLER_START = 80
_K_STEP, _K_NODES = 0.15, 74   # the grid in s = t sqrt(z): s in [0, 11]
_AI_C1 = 0.355028053887817239260   # Ai(0)
_AI_C2 = 0.258819403792806798405   # -Ai'(0)


def _f64(xp, x):
    return xp.asarray(x, dtype=np.float64)


def _hankel_coeffs(nu, n):
    """a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), k < n"""
    mu, a = 4.0 * nu * nu, [1.0]
    for k in range(1, n):
        a.append(a[-1] * (mu - (2 * k - 1) ** 2) / (8 * k))
    return a


_HANKEL = {nu: _hankel_coeffs(nu, 40) for nu in (0, 1)}


def _hankel(xp, nu, x):
    """(J_nu(x), Y_nu(x)) for large x > 0 by Hankel's expansion."""
    a = _HANKEL[nu]
    inv = 1 / x
    p = xp.zeros_like(x)
    q = xp.zeros_like(x)
    for k in range(len(a) // 2 - 1, -1, -1):
        sign = -1.0 if k % 2 else 1.0
        p = p * inv * inv + sign * a[2 * k]
        q = q * inv * inv + sign * a[2 * k + 1]
    q = q * inv
    chi = x - (nu / 2 + 0.25) * math.pi
    amp = xp.sqrt(2 / (math.pi * x))
    c, s = xp.cos(chi), xp.sin(chi)
    return amp * (p * c - q * s), amp * (p * s + q * c)


def _j_trapezoid(xp, nu, x):
    """J_nu(x) = 1/pi int_0^pi cos(nu t - x sin t) dt, x moderate."""
    total = xp.full_like(x, 0.5 * (1 + (-1) ** nu))   # the end points t = 0, pi
    for i in range(1, _J_NODES):
        t = math.pi * i / _J_NODES
        total = total + xp.cos(nu * t - x * math.sin(t))
    return total / _J_NODES


def _j_series(xp, nu, x):
    """J_nu(x) = sum_k (-x^2/4)^k (x/2)^nu / (k! (k + nu)!) for |x| <= 2 (accurate relative to
    J_1's small values near 0)."""
    q = -x * x / 4
    term = (x / 2) ** nu
    total = term
    for k in range(1, 25):
        term = term * q / (k * (k + nu))
        total = total + term
    return total


def _harmonic(n):
    return sum(1.0 / k for k in range(1, n + 1))


def _y_series(xp, x, j0, j1):
    """(Y0, Y1) by their power series (x small)."""
    q = -x * x / 4
    lg = xp.log(x / 2)
    s0 = xp.zeros_like(x)
    s1 = xp.zeros_like(x)
    term0 = xp.ones_like(x)   # q^k / k!^2
    term1 = xp.ones_like(x)   # q^k / (k! (k + 1)!)
    for k in range(0, 40):
        if k:
            term0 = term0 * q / (k * k)
            term1 = term1 * q / (k * (k + 1))
            s0 = s0 + _harmonic(k) * term0
        s1 = s1 + (_harmonic(k) + _harmonic(k + 1) - 2 * _EULER) * term1
    y0 = (2 / math.pi) * ((lg + _EULER) * j0 - s0)
    y1 = -2 / (math.pi * x) + (2 / math.pi) * lg * j1 - (x / (2 * math.pi)) * s1
    return y0, y1


def _y_neumann(xp, x):
    """(Y0, Y1) from Neumann's series Y0 = 2/pi ((log(x/2) + gamma) J0 - 2 sum (-1)^k J_2k / k)
    and its derivative, J_k by Miller's downward recurrence normalised by J0 + 2 sum J_2k = 1."""
    js = [None] * (_MILLER_START + 2)
    js[_MILLER_START + 1] = xp.zeros_like(x)
    js[_MILLER_START] = xp.full_like(x, 1e-30)
    for m in range(_MILLER_START, 0, -1):
        js[m - 1] = (2 * m / x) * js[m] - js[m + 1]
    norm = js[0] + 2 * sum(js[2 * k] for k in range(1, _MILLER_START // 2 + 1))
    s0 = sum((-1) ** k * js[2 * k] / k for k in range(1, _MILLER_START // 2))
    s1 = sum((-1) ** k * (js[2 * k - 1] - js[2 * k + 1]) / k
             for k in range(1, _MILLER_START // 2))
    j0, j1 = js[0] / norm, js[1] / norm
    lg = xp.log(x / 2) + _EULER
    y0 = (2 / math.pi) * (lg * j0 - 2 * s0 / norm)
    y1 = -(2 / math.pi) * (j0 / x - lg * j1 - s1 / norm)
    return y0, y1


def _finite_nan(xp, x, y):
    """PyTorch's value at +-inf and nan for J, Y, I and Ai: nan."""
    return xp.where(xp.isfinite(x), y, xp.nan)


def bessel_j_array(xp, nu, x):
    """J_nu(x), nu in (0, 1)."""
    x = _f64(xp, x)
    a = xp.abs(x)
    small = xp.minimum(a, _SPLIT_JY)
    big = xp.where(xp.isfinite(a), xp.maximum(a, _SPLIT_JY), _SPLIT_JY)
    y = xp.where(a <= _SPLIT_JY, _j_trapezoid(xp, nu, small), _hankel(xp, nu, big)[0])
    y = xp.where(a <= 2, _j_series(xp, nu, xp.minimum(a, 2.0)), y)
    if nu == 1:
        y = xp.where(x < 0, -y, y)
        y = xp.where(x == 0, x, y)   # J1(-0) = -0
    return _finite_nan(xp, x, y)


def bessel_y_array(xp, nu, x):
    """Y_nu(x), nu in (0, 1): -inf at 0, nan below."""
    x = _f64(xp, x)
    ok = xp.isfinite(x) & (x > 0)
    lo = xp.where(ok, xp.clip(x, 1e-300, 5.0), 1.0)
    mid = xp.where(ok, xp.clip(x, 5.0, _SPLIT_JY), 10.0)
    big = xp.where(ok, xp.maximum(x, _SPLIT_JY), _SPLIT_JY)
    y = _y_series(xp, lo, _j_trapezoid(xp, 0, lo), _j_trapezoid(xp, 1, lo))[nu]
    y = xp.where(x < 5, y, _y_neumann(xp, mid)[nu])
    y = xp.where(x <= _SPLIT_JY, y, _hankel(xp, nu, big)[1])
    y = xp.where(x == 0, -xp.inf, y)
    return xp.where(ok | (x == 0), y, xp.nan)


def _hankel_i_coeffs(nu):
    a = _hankel_coeffs(nu, 30)
    return [(-1) ** k * c for k, c in enumerate(a)]


_ASYM_I = {nu: _hankel_i_coeffs(nu) for nu in (0, 1)}
_ASYM_K = {nu: _hankel_coeffs(nu, 30) for nu in (0, 1)}


def bessel_i_scaled_array(xp, nu, x):
    """exp(-|x|) I_nu(x), nu in (0, 1): power series up to |x| = 30, asymptotic above."""
    x = _f64(xp, x)
    a = xp.abs(x)
    small = xp.minimum(a, 30.0)
    q = small * small / 4
    term = (small / 2) ** nu
    total = term
    for k in range(1, 120):
        term = term * q / (k * (k + nu))
        total = total + term
    big = xp.where(xp.isnan(a), 30.0, xp.maximum(a, 30.0))
    asym = xp.zeros_like(big)
    for c in reversed(_ASYM_I[nu]):
        asym = asym / big + c
    asym = asym / xp.sqrt(2 * math.pi * big)
    y = xp.where(a <= 30, total * xp.exp(-small), asym)
    y = xp.where(xp.isnan(x), xp.nan, y)
    return y if nu == 0 else xp.where(x < 0, -y, y)


def bessel_i_array(xp, nu, x):
    """I_nu(x) (overflows to inf past |x| ~ 713; nan at +-inf, as PyTorch)."""
    x = _f64(xp, x)
    a = xp.where(xp.isfinite(x), xp.abs(x), 0.0)
    y = bessel_i_scaled_array(xp, nu, x) * xp.exp(xp.minimum(a, 800.0))
    y = xp.where((a > 700) & (y == 0), 0.0, y)
    return _finite_nan(xp, x, y)


def _k_series(xp, nu, x):
    """K_nu(x) by its power series (0 < x <= 2)."""
    q = x * x / 4
    lg = xp.log(x / 2)
    term = (x / 2) ** nu
    i_sum = term
    s = (_harmonic(0) + _harmonic(nu) - 2 * _EULER) * term if nu else xp.zeros_like(x)
    for k in range(1, 30):
        term = term * q / (k * (k + nu))
        i_sum = i_sum + term
        if nu == 0:
            s = s + _harmonic(k) * term
        else:
            s = s + (_harmonic(k) + _harmonic(k + 1) - 2 * _EULER) * term
    if nu == 0:
        return -(lg + _EULER) * i_sum + s
    return 1 / x + lg * i_sum - s / 2


def k_scaled_integral(xp, nu, z):
    """exp(z) K_nu(z) = int_0^inf exp(-z (cosh t - 1)) cosh(nu t) dt for z >~ 1, by the
    trapezoidal rule in s = t sqrt(z) (a fixed grid serves every z: the integrand tends to
    exp(-s^2 / 2) as z grows)."""
    r = 1 / xp.sqrt(z)
    total = xp.full_like(z, 0.5)
    for i in range(1, _K_NODES + 1):
        t = (_K_STEP * i) * r
        sh = xp.sinh(t / 2)
        total = total + xp.exp(-2 * z * sh * sh) * xp.cosh(nu * t)
    return total * r * _K_STEP


def bessel_k_array(xp, nu, x, scaled=False):
    """K_nu(x), or exp(x) K_nu(x) when scaled, nu in (0, 1): inf at 0, nan below."""
    x = _f64(xp, x)
    ok = x > 0
    lo = xp.where(ok, xp.clip(x, 1e-300, 2.0), 1.0)
    hi = xp.where(ok & xp.isfinite(x), xp.maximum(x, 2.0), 2.0)
    series = _k_series(xp, nu, lo)
    integral = k_scaled_integral(xp, nu, hi)
    if scaled:
        y = xp.where(x <= 2, series * xp.exp(lo), integral)
    else:
        y = xp.where(x <= 2, series, integral * xp.exp(-hi))
    y = xp.where(x == xp.inf, 0.0, xp.where(x == 0, xp.inf, y))
    return xp.where(ok | (x == 0), y, xp.nan)


def _airy_u(n):
    """u_k of the Airy asymptotic expansions, k < n"""
    u = [1.0]
    for k in range(1, n):
        u.append(u[-1] * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216 * k))
    return u


_AIRY_U = _airy_u(30)


def _airy_taylor(xp, x, steps=10, terms=40):
    """Ai(x) for -10 <= x <= 2: Taylor steps along Ai'' = x Ai from Ai(0), Ai'(0)."""
    h = x / steps
    y = xp.full_like(x, _AI_C1)
    dy = xp.full_like(x, -_AI_C2)
    x0 = xp.zeros_like(x)
    for _ in range(steps):
        c3, c2, c1 = xp.zeros_like(x), y, dy    # c_{n-3}, c_{n-2}, c_{n-1} for n = 2
        ny, ndy = y + dy * h, dy
        hp = h                                  # h^(n-1)
        for n in range(2, terms):
            c = (x0 * c2 + c3) / (n * (n - 1))  # n (n - 1) c_n = x0 c_{n-2} + c_{n-3}
            ndy = ndy + n * c * hp
            hp = hp * h
            ny = ny + c * hp
            c3, c2, c1 = c2, c1, c
        y, dy, x0 = ny, ndy, x0 + h
    return y


def _airy_negative(xp, x):
    """Ai(x) for x <= -10 by its oscillatory asymptotic expansion."""
    a = -x
    zeta = (2 / 3) * a * xp.sqrt(a)
    inv = 1 / zeta
    p = xp.zeros_like(a)
    q = xp.zeros_like(a)
    u = _AIRY_U
    for k in range(len(u) // 2 - 1, -1, -1):
        sign = -1.0 if k % 2 else 1.0
        p = p * inv * inv + sign * u[2 * k]
        q = q * inv * inv + sign * u[2 * k + 1]
    q = q * inv
    phase = zeta + math.pi / 4
    return (xp.sin(phase) * p - xp.cos(phase) * q) / (math.sqrt(math.pi) * a ** 0.25)


def airy_ai_array(xp, x):
    """Ai(x), the solution of y'' = x y decaying as x -> +inf."""
    x = _f64(xp, x)
    fin = xp.isfinite(x)
    mid = xp.where(fin, xp.clip(x, -10.0, 2.0), 0.0)
    neg = xp.where(fin, xp.minimum(x, -10.0), -10.0)
    pos = xp.where(fin, xp.maximum(x, 2.0), 2.0)
    zeta = (2 / 3) * pos * xp.sqrt(pos)
    big = xp.sqrt(pos / 3) / math.pi * xp.exp(-zeta) * k_scaled_integral(xp, 1 / 3, zeta)
    y = xp.where(x < -10, _airy_negative(xp, neg), xp.where(x > 2, big, _airy_taylor(xp, mid)))
    return _finite_nan(xp, x, y)


def spherical_j0_array(xp, x):
    """sin(x) / x: 1 at 0, 0 at +-inf."""
    x = _f64(xp, x)
    safe = xp.where((x == 0) | ~xp.isfinite(x), 1.0, x)
    y = xp.where(x == 0, 1.0, xp.sin(safe) / safe)
    return xp.where(xp.isinf(x), 0.0, xp.where(xp.isnan(x), xp.nan, y))


OPS: list = []
