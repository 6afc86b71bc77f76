"""The reparameterised gradient of Gamma(a, 1) draws (implicit reparameterisation): a draw is
x = F^-1(u; a) for a uniform u, so at fixed u, dx/da = -(dF/da) / (dF/dx) with F(x; a) the
regularised lower incomplete gamma function P(a, x) and dF/dx = x^(a-1) e^-x / Gamma(a).

dF/da has no closed form: it is the central difference of P in a, taken on whichever of P
(a series, for x < a + 1) or Q = 1 - P (a continued fraction, otherwise) is the smaller, so
the difference never cancels two numbers near 1 (both expansions live in
gpugrad/ops/special_numerics.py, behind gpugrad.special.gammainc). The arithmetic is float64
throughout and works on numpy and CuPy arrays alike."""
from __future__ import annotations

from ..ops.special._numerics import lgamma_array
from ..ops.special._series import p_series as _p_series
from ..ops.special._series import q_fraction as _q_fraction


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
