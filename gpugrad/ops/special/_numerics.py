"""Array-level numerics of the gamma, error-function and Bessel families of ``gpugrad.special``,
written once against the array module (numpy or CuPy): recurrence plus asymptotic series for the
gamma family, power and asymptotic series for the Bessel functions, a rational first guess
polished by Halley steps for erfinv. SciPy is used on numpy arrays only as a faster path when it
is installed.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _backend
from ...tensor import Tensor

_SQRT_PI = math.sqrt(math.pi)
_LOG_2PI = math.log(2 * math.pi)
# Bernoulli numbers B_2k, k = 1..10 (the asymptotic series of lgamma and the polygammas)
_B2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
        43867 / 798, -174611 / 330)
_scipy: dict = {}


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _fast(xp, name):
    """scipy.special.<name> for numpy arrays when SciPy is installed, else None."""
    if xp is not np:
        return None
    if name not in _scipy:
        try:
            import scipy.special as sp
            _scipy[name] = getattr(sp, name)
        except ImportError:
            _scipy[name] = None
    return _scipy[name]


def _wide(xp, x):
    """x as float64 (the series below are written for double precision)."""
    return xp.asarray(x, dtype=np.float64)


def _back(y, like):
    return y.astype(like.dtype, copy=False) if like.dtype != y.dtype else y


def _sinpi(xp, x):
    """sin(pi x), exact zeros at the integers, for any size of x."""
    r = x - 2 * xp.floor(x / 2)   # in [0, 2)
    return xp.where(r == xp.floor(r), 0.0, xp.sin(math.pi * r))


def _shift(xp, x, to, term):
    """(x moved up by whole steps to at least ``to``, sum of term(x + k) over the steps)."""
    acc = xp.zeros_like(x)
    steps = int(math.ceil(to - float(x.min()))) if x.size else 0
    for _ in range(max(0, min(steps, 100000))):
        low = x < to
        if not bool(low.any()):
            break
        acc = acc + xp.where(low, term(xp.where(low, x, 1.0)), 0.0)
        x = xp.where(low, x + 1, x)
    return x, acc


# -- numerics on arrays ---------------------------------------------------------------------------
def lgamma_array(xp, x):
    """log |Gamma(x)|: shift to x >= 10, Stirling's series; reflection below 0.5."""
    fast = _fast(xp, "gammaln")
    if fast is not None:
        return np.asarray(fast(x))
    x = _wide(xp, x)
    neg = x < 0.5
    z = xp.where(neg, 1 - x, x)
    z = xp.where(xp.isfinite(z), z, 10.0)
    z, logs = _shift(xp, z, 10.0, xp.log)
    inv2 = 1 / (z * z)
    series = xp.zeros_like(z)
    for k in range(len(_B2K) - 1, -1, -1):
        series = series * inv2 + _B2K[k] / ((2 * k + 2) * (2 * k + 1))
    y = (z - 0.5) * xp.log(z) - z + 0.5 * _LOG_2PI + series / z - logs
    refl = math.log(math.pi) - xp.log(xp.abs(_sinpi(xp, x))) - y
    y = xp.where(neg, refl, y)
    return xp.where(xp.isinf(x), xp.inf, xp.where(xp.isnan(x), xp.nan, y))


def digamma_array(xp, x):
    """d/dx log Gamma(x): shift to x >= 10, asymptotic series; reflection below 0.5."""
    fast = _fast(xp, "psi")
    x = _wide(xp, x)
    if fast is not None:
        y = np.asarray(fast(x))
    else:
        neg = x < 0.5
        z = xp.where(neg, 1 - x, x)
        z = xp.where(xp.isfinite(z), z, 10.0)
        z, inv = _shift(xp, z, 10.0, lambda t: 1 / t)
        inv2 = 1 / (z * z)
        series = xp.zeros_like(z)
        for k in range(len(_B2K) - 1, -1, -1):
            series = series * inv2 + _B2K[k] / (2 * k + 2)
        y = xp.log(z) - 0.5 / z - series * inv2 - inv
        s = _sinpi(xp, x)
        cot = xp.cos(math.pi * (x - 2 * xp.floor(x / 2))) / s
        y = xp.where(neg, y - math.pi * cot, y)
        y = xp.where(x == xp.inf, xp.inf, xp.where(xp.isnan(x) | (x == -xp.inf), xp.nan, y))
    # PyTorch: -inf at 0, nan at the negative integers
    return xp.where(x == 0, -xp.inf, xp.where((x < 0) & (x == xp.floor(x)), xp.nan, y))


def polygamma_array(xp, n, x):
    """The n-th derivative of digamma (n >= 1): (-1)^(n+1) n! sum_k 1 / (x + k)^(n+1), summed
    directly up to x + k >= 20 + n, then the asymptotic series; reflection for trigamma."""
    if n == 0:
        return digamma_array(xp, x)
    x = _wide(xp, x)
    fast = _fast(xp, "polygamma")
    if fast is not None:
        return np.asarray(fast(n, x))
    refl = n == 1
    z = xp.where(refl & (x < 0.5), 1 - x, x) if refl else x
    z = xp.where(xp.isfinite(z), z, 1.0)
    big = 20.0 + n
    z, direct = _shift(xp, z, big, lambda t: t ** -(n + 1))
    # sum_{k>=0} (z + k)^-(n+1)
    #   ~ z^-n / n + z^-(n+1) / 2 + sum_j B_2j (2j+n-1)! / ((2j)! n!) z^-(2j+n)
    inv2 = 1 / (z * z)
    series = xp.zeros_like(z)
    for j in range(len(_B2K), 0, -1):
        c = _B2K[j - 1] * math.factorial(2 * j + n - 1) / (math.factorial(2 * j)
                                                           * math.factorial(n))
        series = (series + c) * inv2
    tail = z ** -n * (1 / n + 0.5 / z + series)
    y = (-1) ** (n + 1) * math.factorial(n) * (direct + tail)
    if refl:
        s = _sinpi(xp, x)
        y = xp.where(x < 0.5, (math.pi / s) ** 2 - y, y)
    sign = 1.0 if n % 2 else -1.0
    y = xp.where((x <= 0) & (x == xp.floor(x)), sign * xp.inf, y)   # the poles
    return xp.where(x == xp.inf, 0.0, xp.where(xp.isnan(x) | (x == -xp.inf), xp.nan, y))


def erfc_array(xp, x):
    """1 - erf(x), accurate in its tail."""
    if xp is not np:
        return _backend.cupy_submodule("cupyx.scipy.special").erfc(x)
    fast = _fast(xp, "erfc")
    if fast is not None:
        return np.asarray(fast(x))
    return np.asarray(np.frompyfunc(math.erfc, 1, 1)(x), dtype=x.dtype)


def _erf(xp, x):
    from ... import kernels
    return kernels.erf(x)


def _erfinv_pos(xp, a, q):
    """erfinv(a) for a in [0, 1], with q = 1 - a given exactly (it may be tiny): Giles' rational
    guess (or the tail's fixed point), then Halley steps on erf (or on erfc in the tail)."""
    w = -xp.log(q * (2 - q))
    c = w - 2.5
    lo = 2.81022636e-08
    for k in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        lo = k + lo * c
    c = xp.sqrt(xp.maximum(w, 5.0)) - 3
    hi = -0.000200214257
    for k in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        hi = k + hi * c
    y = xp.where(w < 5, lo, hi) * a
    tail = q < 1e-8
    if bool(tail.any()):   # erfc(y) ~ exp(-y^2) / (y sqrt(pi)) (1 - 1 / (2 y^2)) = q
        lq = -xp.log(xp.where(tail, q, 1e-8))
        t = xp.sqrt(lq)
        for _ in range(5):
            t = xp.sqrt(xp.maximum(lq - xp.log(_SQRT_PI * t) + xp.log1p(-0.5 / (t * t)), 1.0))
        y = xp.where(tail, t, y)
    upper = a > 0.5
    for _ in range(4):
        yy = xp.where(xp.isfinite(y), y, 0.0)
        f = xp.where(upper, q - erfc_array(xp, yy), _erf(xp, yy) - a)
        r = f * (_SQRT_PI / 2) * xp.exp(yy * yy)
        y = yy - r / (1 + yy * r)
    y = xp.where(q == 0, xp.inf, y)
    return xp.where((a > 1) | xp.isnan(a), xp.nan, y)


def erfinv_array(xp, x):
    fast = _fast(xp, "erfinv")
    if fast is not None:
        return np.asarray(fast(x))
    x = _wide(xp, x)
    a = xp.abs(x)
    return xp.sign(x) * _erfinv_pos(xp, a, xp.where(a <= 1, 1 - a, 0.0))


def ndtri_array(xp, p):
    """The inverse of the standard normal CDF: -sqrt(2) erfinv(1 - 2p), with 2p kept exact."""
    fast = _fast(xp, "ndtri")
    if fast is not None:
        return np.asarray(fast(p))
    p = _wide(xp, p)
    q = 2 * xp.minimum(p, 1 - p)
    y = math.sqrt(2) * _erfinv_pos(xp, 1 - q, xp.maximum(q, 0.0))
    y = xp.where(p < 0.5, -y, y)
    return xp.where((p < 0) | (p > 1), xp.nan, y)


def log_ndtr_array(xp, x):
    """log of the standard normal CDF (underflows to -inf below about -38)."""
    x = _wide(xp, x)
    lo = xp.log(0.5 * erfc_array(xp, -x / math.sqrt(2)))
    hi = xp.log1p(-0.5 * erfc_array(xp, x / math.sqrt(2)))
    return xp.where(x > 0, hi, lo)


def _bessel_array(xp, nu, x):
    """I_nu(x) for nu in (0, 1): power series for |x| <= 30, the asymptotic series above."""
    fast = _fast(xp, "i0" if nu == 0 else "i1")
    if fast is not None:
        return np.asarray(fast(x))
    x = _wide(xp, x)
    a = xp.abs(x)
    small = xp.minimum(a, 30.0)
    q = small * small / 4
    term = (small / 2) ** nu
    total = term
    for k in range(1, 120):
        term = term * q / (k * (k + nu))
        total = total + term
    big = xp.maximum(a, 30.0)
    mu = 4 * nu * nu
    term = xp.ones_like(big)
    asym = term
    for k in range(1, 30):
        term = term * (-(mu - (2 * k - 1) ** 2)) / (8 * k * big)
        asym = asym + term
    asym = asym * xp.exp(big - 0.5 * xp.log(2 * math.pi * big))
    y = xp.where(a <= 30, total, asym)
    return y if nu == 0 else xp.sign(x) * y


def i0_array(xp, x):
    return _bessel_array(xp, 0, x)


def i1_array(xp, x):
    return _bessel_array(xp, 1, x)


OPS: list = []
