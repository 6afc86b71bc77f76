"""The reparameterised gradient of Gamma(a, 1) draws (implicit reparameterisation): a draw is
x = F^-1(u; a) for a uniform u, so at fixed u, dx/da = -(dF/da) / (dF/dx) with F(x; a) the
regularised lower incomplete gamma function P(a, x) and dF/dx = x^(a-1) e^-x / Gamma(a).

dF/da has no closed form: it is the central difference of P in a, taken on whichever of P
(for x < a + 1) or Q = 1 - P (otherwise) is the smaller, so the difference never cancels two
numbers near 1 (both from scipy.special / cupyx.scipy.special, behind gpugrad.special.gammainc).
The arithmetic is float64 throughout and works on numpy and CuPy arrays alike."""
from __future__ import annotations

from ..ops.special._numerics import igamma_array, igammac_array, lgamma_array


def standard_gamma_grad(xp, a, x):
    """dx/da for x ~ Gamma(a, 1) held at its quantile: arrays of one shape, any float dtype;
    the result has x's dtype."""
    dtype = x.dtype
    a, x = a.astype("float64"), x.astype("float64")
    h = 1e-5 * a
    low = x < a + 1
    dp = (igamma_array(xp, a + h, x) - igamma_array(xp, a - h, x)) / (2 * h)
    dq = (igammac_array(xp, a + h, x) - igammac_array(xp, a - h, x)) / (2 * h)
    dfda = xp.where(low, dp, -dq)
    density = xp.exp((a - 1) * xp.log(x) - x - lgamma_array(xp, a))
    return (-dfda / density).astype(dtype)
