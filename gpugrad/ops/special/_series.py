"""Array-level numerics of the regularised incomplete gamma functions, the Hurwitz zeta function
and erfcx, written once against the array module (numpy or CuPy), in float64.

P(a, x) and Q(a, x) = 1 - P(a, x) are each summed by whichever of three expansions converges
fast and without cancellation there (the choice Cephes makes): P's power series, Q's continued
fraction (x > 1.1 and x >= a), or Q's own series for small a and x. The one that is not wanted
is taken as 1 minus the other only where the result is at least about 1/2. Iterations stop when
every element has converged (checked every few steps); their count grows like sqrt(a) near
x = a, so very large a (beyond about 1e7) near the transition is not converged.
"""
from __future__ import annotations

import math

import numpy as np

from ._numerics import erfc_array, lgamma_array

_EPS = 1e-16
_TINY = 1e-300
_CHECK_EVERY = 32
_EULER = 0.5772156649015329


def _f64(xp, x):
    return xp.asarray(x, dtype=np.float64)


def _max_terms(xp, a):
    """Iterations the series and the fraction may need: about sqrt(a) near x = a."""
    top = float(xp.max(xp.where(xp.isfinite(a), a, 0.0))) if a.size else 0.0
    return int(min(200000, 200 + 40 * math.sqrt(max(top, 0.0))))


def _log_prefactor(xp, a, x):
    """log(x^a e^-x / Gamma(a + 1)); for large a through d = (x - a) / a and Stirling's series,
    which keeps the exponent accurate where its terms are each of size a."""
    direct = a * xp.log(x) - x - lgamma_array(xp, a + 1)
    big = a > 10
    ab = xp.where(big, a, 20.0)
    d = (xp.where(big, x, 20.0) - ab) / ab
    inv2 = 1 / (ab * ab)
    stirling = (1 / 12 + inv2 * (-1 / 360 + inv2 * (1 / 1260 + inv2 * (-1 / 1680 + inv2
                                                                       / 1188)))) / ab
    wide = ab * (xp.log1p(d) - d) - 0.5 * xp.log(2 * math.pi * ab) - stirling
    return xp.where(big, wide, direct)


def p_series(xp, a, x, max_terms=None):
    """P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n))"""
    n_max = max_terms or _max_terms(xp, a)
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for n in range(1, n_max):
        term = term * x / (a + n)
        total = total + term
        if n % _CHECK_EVERY == 0 and not bool((term > _EPS * total).any()):
            break
    return total * xp.exp(_log_prefactor(xp, a, x))


def q_fraction(xp, a, x, max_terms=None):
    """Q(a, x) = x^a e^-x / Gamma(a) times the continued fraction
    1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))), evaluated by
    the modified Lentz method"""
    n_max = max_terms or _max_terms(xp, a)
    b = x + 1 - a
    c = xp.full_like(x, 1 / _TINY)
    d = 1 / xp.where(xp.abs(b) < _TINY, _TINY, b)
    h = d
    for i in range(1, n_max):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        delta = d * c
        h = h * delta
        if i % _CHECK_EVERY == 0 and not bool((xp.abs(delta - 1) > 4 * _EPS).any()):
            break
    return h * a * xp.exp(_log_prefactor(xp, a, x))


_ZETA_INT: list = []


def _lgam1p_taylor(xp, a):
    """log Gamma(1 + a) = -gamma a + sum_k (-1)^k zeta(k) / k a^k for |a| <= 1/2"""
    if not _ZETA_INT:
        ks = np.arange(2.0, 43.0)
        _ZETA_INT.extend(zeta_array(np, ks, np.ones_like(ks)).tolist())
    total = xp.zeros_like(a)
    for k in range(42, 1, -1):
        total = (total + (-1) ** k * _ZETA_INT[k - 2] / k) * a
    return (total - _EULER) * a


def lgam1p_array(xp, a):
    """log Gamma(1 + a), accurate for small a."""
    small = xp.abs(a) <= 0.5
    near1 = xp.abs(a - 1) < 0.5
    t = _lgam1p_taylor(xp, xp.where(small, a, xp.where(near1, a - 1, 0.0)))
    return xp.where(small, t, xp.where(near1, xp.log(xp.where(near1, a, 1.0)) + t,
                                       lgamma_array(xp, a + 1)))


def q_series(xp, a, x):
    """Q(a, x) for x <= 1.1 and small a: 1 - x^a / Gamma(a + 1) + x^a / Gamma(a)
    sum_n (-x)^n / (n! (a + n)), its leading part through expm1 (accurate when Q is tiny)."""
    fac = xp.ones_like(x)
    total = xp.zeros_like(x)
    for n in range(1, 60):
        fac = fac * (-x / n)
        total = total + fac / (a + n)
    logx = xp.log(x)
    lead = -xp.expm1(a * logx - lgam1p_array(xp, a))
    return lead - xp.exp(a * logx - lgamma_array(xp, a)) * total


def _igamma_parts(xp, a, x):
    """(P, Q) of the valid finite elements, each from its better-conditioned expansion."""
    ok = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    cf = ok & (x > 1.1) & (x >= a)
    small = ok & ~cf & xp.where(x <= 0.5, -0.4 / xp.log(xp.where(x <= 0.5, x, 0.5)) >= a,
                                x * 1.1 >= a) & (x <= 1.1)
    ser = ok & ~cf & ~small
    # every element goes through each expansion; those not wanted see stand-ins that converge
    # at once
    p = p_series(xp, xp.where(ser, a, 1.0), xp.where(ser, x, 0.5))
    q_cf = q_fraction(xp, xp.where(cf, a, 1.0), xp.where(cf, x, 3.0))
    q_sm = q_series(xp, xp.where(small, a, 1.0), xp.where(small, x, 0.5))
    q = xp.where(cf, q_cf, q_sm)
    return xp.where(ser, p, 1 - q), xp.where(ser, 1 - p, q)


def _igamma_edges(xp, a, x, y, lower):
    """PyTorch's (Cephes') values off the interior: nan for negative arguments, a = 0 or
    x = 0, and the infinities."""
    one, zero = (1.0, 0.0) if lower else (0.0, 1.0)
    y = xp.where(xp.isinf(x), one, y)
    y = xp.where(xp.isinf(a), xp.where(xp.isinf(x), xp.nan, zero), y)
    y = xp.where(x == 0, zero, y)
    y = xp.where(a == 0, xp.where(x > 0, one, xp.nan), y)
    return xp.where((a < 0) | (x < 0) | xp.isnan(a) | xp.isnan(x), xp.nan, y)


def igamma_array(xp, a, x):
    """P(a, x), the regularised lower incomplete gamma function."""
    a, x = xp.broadcast_arrays(_f64(xp, a), _f64(xp, x))
    return _igamma_edges(xp, a, x, _igamma_parts(xp, a, x)[0], True)


def igammac_array(xp, a, x):
    """Q(a, x) = 1 - P(a, x), the regularised upper incomplete gamma function."""
    a, x = xp.broadcast_arrays(_f64(xp, a), _f64(xp, x))
    return _igamma_edges(xp, a, x, _igamma_parts(xp, a, x)[1], False)


# (2k)! / B_2k, k = 1..12: the Euler-Maclaurin tail of the Hurwitz zeta function
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
        -174611 / 330, 854513 / 138, -236364091 / 2730)
_EM = tuple(math.factorial(2 * k + 2) / b for k, b in enumerate(_B2K))


def zeta_array(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s (s > 1): the first terms directly until
    q + k > 9 and at least ten terms, then the Euler-Maclaurin tail."""
    s, q = xp.broadcast_arrays(_f64(xp, s), _f64(xp, q))
    s, q = s.copy(), q.copy()
    total = q ** -s
    a = q
    b = xp.zeros_like(q)
    done = xp.zeros(q.shape, dtype=bool)
    i = 0
    while i < 200000:
        active = ~done & ((i < 9) | (a <= 9))
        if i >= 9 and not bool(active.any()):
            break
        i += 1
        a = xp.where(active, a + 1, a)
        term = a ** -s
        total = xp.where(active, total + term, total)
        b = xp.where(active, term, b)
        done = done | (active & (xp.abs(b / total) < _EPS))
    w = a
    total = xp.where(done, total, total + b * w / (s - 1) - 0.5 * b)
    coef = xp.ones_like(s)
    k = 0.0
    for c in _EM:
        coef = coef * (s + k)
        b = b / w
        t = coef * b / c
        total = xp.where(done, total, total + t)
        done = done | (xp.abs(t / total) < _EPS)
        k += 1
        coef = coef * (s + k)
        b = b / w
        k += 1
    pole = (q <= 0) & (q == xp.floor(q))
    total = xp.where(pole, xp.inf, total)
    total = xp.where((q < 0) & ~pole & (s != xp.floor(s)), xp.nan, total)
    total = xp.where(s < 1, xp.nan, total)
    return xp.where(s == 1, xp.inf, total)


def erfcx_array(xp, x):
    """exp(x^2) erfc(x): the product below 2, the continued fraction
    1 / sqrt(pi) / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))) above; for x < 0 the
    reflection 2 exp(x^2) - erfcx(-x)."""
    x = _f64(xp, x)
    a = xp.abs(x)
    small = xp.minimum(a, 2.0)
    near = xp.exp(small * small) * erfc_array(xp, small)
    big = xp.where(xp.isnan(a), 2.0, xp.maximum(a, 2.0))
    f = big
    for k in range(60, 0, -1):
        f = big + (k / 2) / f
    y = xp.where(a < 2, near, 1 / (math.sqrt(math.pi) * f))
    neg = 2 * xp.exp(xp.minimum(x * x, 1e3)) - y
    return xp.where(xp.isnan(x), xp.nan, xp.where(x < 0, neg, y))


OPS: list = []
