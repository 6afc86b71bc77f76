"""Bessel and Airy functions on arrays: J0, J1, Y0, Y1, I0, I1, K0, K1 and their scaled forms from
``scipy.special`` on numpy arrays and ``cupyx.scipy.special`` on CuPy arrays (the libraries that
own them: vectorised, accurate to double precision), with PyTorch's edge values on top (J, Y, I
and Ai are nan at +-inf; K and Y are nan below 0). Ai is SciPy's on numpy; CuPy has no Airy
function, so on CuPy arrays it is computed here: Taylor steps along Ai'' = x Ai from x = 0 on
[-10, 2], (1/pi) sqrt(x/3) K_1/3(2/3 x^3/2) above 2 (K by the trapezoidal rule on its integral),
the oscillatory asymptotic expansion below -10.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _backend

_K_STEP, _K_NODES = 0.15, 74   # the grid in s = t sqrt(z): s in [0, 11]
_AI_C1 = 0.355028053887817239260   # Ai(0)
_AI_C2 = 0.258819403792806798405   # -Ai'(0)


def _f64(xp, x):
    return xp.asarray(x, dtype=np.float64)


def _finite_nan(xp, x, y):
    """PyTorch's value at +-inf and nan for J, Y, I and Ai: nan."""
    return xp.where(xp.isfinite(x), y, xp.nan)


def bessel_j_array(xp, nu, x):
    """J_nu(x), nu in (0, 1)."""
    x = _f64(xp, x)
    lib = _backend.special_functions(xp)
    return _finite_nan(xp, x, (lib.j0 if nu == 0 else lib.j1)(x))


def bessel_y_array(xp, nu, x):
    """Y_nu(x), nu in (0, 1): -inf at 0, nan below."""
    x = _f64(xp, x)
    lib = _backend.special_functions(xp)
    y = (lib.y0 if nu == 0 else lib.y1)(x)
    y = xp.where(x == 0, -xp.inf, y)
    return xp.where(xp.isfinite(x) & (x >= 0), y, xp.nan)


def bessel_i_scaled_array(xp, nu, x):
    """exp(-|x|) I_nu(x), nu in (0, 1)."""
    lib = _backend.special_functions(xp)
    return (lib.i0e if nu == 0 else lib.i1e)(_f64(xp, x))


def bessel_i_array(xp, nu, x):
    """I_nu(x) (overflows to inf past |x| ~ 713; nan at +-inf, as PyTorch)."""
    x = _f64(xp, x)
    lib = _backend.special_functions(xp)
    return _finite_nan(xp, x, (lib.i0 if nu == 0 else lib.i1)(x))


def bessel_k_array(xp, nu, x, scaled=False):
    """K_nu(x), or exp(x) K_nu(x) when scaled, nu in (0, 1): inf at 0, nan below."""
    x = _f64(xp, x)
    lib = _backend.special_functions(xp)
    fn = {(0, False): lib.k0, (1, False): lib.k1, (0, True): lib.k0e, (1, True): lib.k1e}
    y = fn[nu, bool(scaled)](x)
    y = xp.where(x == xp.inf, 0.0, xp.where(x == 0, xp.inf, y))
    return xp.where(x >= 0, y, xp.nan)


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
    if xp is np:
        return _finite_nan(xp, x, _backend.special_functions(xp).airy(x)[0])
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
