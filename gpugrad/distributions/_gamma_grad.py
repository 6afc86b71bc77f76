"""The reparameterised gradient of Gamma(a, 1) draws (implicit reparameterisation): a draw is
x = F^-1(u; a) for a uniform u, so at fixed u, dx/da = -(dF/da) / (dF/dx) with F(x; a) the
regularised lower incomplete gamma function P(a, x) and dF/dx = x^(a-1) e^-x / Gamma(a).

dF/da has no closed form: it is the central difference of P in a, taken on whichever of P
(a series, for x < a + 1) or Q = 1 - P (a continued fraction, otherwise) is the smaller, so
the difference never cancels two numbers near 1. The arithmetic is float64 throughout and
works on numpy and CuPy arrays alike."""
from __future__ import annotations

from ..ops.special import lgamma_array

_EPS = 1e-15
_TINY = 1e-300
_MAX_TERMS = 4000
_CHECK_EVERY = 32


def _p_series(xp, a, x):
    """P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n))"""
    term = xp.ones_like(x)
    total = xp.ones_like(x)
    for n in range(1, _MAX_TERMS):
        term = term * x / (a + n)
        total = total + term
        if n % _CHECK_EVERY == 0 and not bool((term > _EPS * total).any()):
            break
    return total * xp.exp(a * xp.log(x) - x - lgamma_array(xp, a + 1))


def _q_fraction(xp, a, x):
    """Q(a, x) = x^a e^-x / Gamma(a) times the continued fraction
    1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))), evaluated by
    the modified Lentz method"""
    b = x + 1 - a
    c = xp.full_like(x, 1 / _TINY)
    d = 1 / xp.where(xp.abs(b) < _TINY, _TINY, b)
    h = d
    for i in range(1, _MAX_TERMS):
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / xp.where(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = xp.where(xp.abs(c) < _TINY, _TINY, c)
        delta = d * c
        h = h * delta
        if i % _CHECK_EVERY == 0 and not bool((xp.abs(delta - 1) > _EPS).any()):
            break
    return h * xp.exp(a * xp.log(x) - x - lgamma_array(xp, a))


def standard_gamma_grad(xp, a, x):
    """dx/da for x ~ Gamma(a, 1) held at its quantile: arrays of one shape, any float dtype;
    the result has x's dtype."""
    dtype = x.dtype
    a, x = a.astype("float64"), x.astype("float64")
    h = 1e-5 * a
    low = x < a + 1
    # each element through the cheaper, better-conditioned branch; the other branch sees a
    # harmless stand-in so it converges at once
    xs, xq = xp.where(low, x, 0.5 * a), xp.where(low, 2 * a + 2, x)
    dp = (_p_series(xp, a + h, xs) - _p_series(xp, a - h, xs)) / (2 * h)
    dq = (_q_fraction(xp, a + h, xq) - _q_fraction(xp, a - h, xq)) / (2 * h)
    dfda = xp.where(low, dp, -dq)
    density = xp.exp((a - 1) * xp.log(x) - x - lgamma_array(xp, a))
    return (-dfda / density).astype(dtype)
