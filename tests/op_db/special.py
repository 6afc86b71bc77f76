"""Op database entries of the special functions (gpugrad.special): references from the
math module and written-out series, independent of the series gpugrad sums."""
from __future__ import annotations

import math

import numpy as np
from op_db.entry import BINARY, UNARY, OpEntry, _const, _unary

import gpugrad

# -- special functions (gpugrad.ops.special): references from the math module and written-out
# series, independent of the series gpugrad sums -------------------------------------------------
_SP = gpugrad.special


def _vec(f):
    return lambda x: np.vectorize(f, otypes=[np.float64])(x)


def _hurwitz_ref(s, x, n_terms=2000):
    """sum_{k>=0} (x + k)^-s: the first terms directly, the rest by Euler-Maclaurin."""
    k = np.arange(n_terms).reshape((-1,) + (1,) * np.ndim(x))
    head = ((x + k) ** -s).sum(axis=0)
    z = x + n_terms
    return head + z ** (1 - s) / (s - 1) + z ** -s / 2 + s * z ** (-s - 1) / 12


def _digamma_ref(x, n_terms=2000):
    """-euler_gamma + sum_k (1 / (k + 1) - 1 / (k + x)), the tail by Euler-Maclaurin."""
    k = np.arange(n_terms).reshape((-1,) + (1,) * np.ndim(x))
    head = (1 / (k + 1) - 1 / (k + x)).sum(axis=0)
    n = n_terms
    tail = np.log((n + x) / (n + 1)) + (1 / (n + 1) - 1 / (n + x)) / 2 \
        - (1 / (n + x) ** 2 - 1 / (n + 1) ** 2) / 12
    return -np.euler_gamma + head + tail


def _polygamma_ref(n, x):
    return (-1) ** (n + 1) * math.factorial(n) * _hurwitz_ref(n + 1, x)


def _bisect(f, y, lo, hi, steps=200):
    """x with f(x) = y for an increasing f, by bisection."""
    lo, hi = np.full(np.shape(y), lo), np.full(np.shape(y), hi)
    for _ in range(steps):
        mid = (lo + hi) / 2
        below = f(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


_ERF = _vec(math.erf)


def _ndtr_ref(x):
    return 0.5 * _vec(math.erfc)(-x / math.sqrt(2))


def _i1_ref(x):
    return sum((x / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
               for k in range(60))


def _mvlgamma_ref(x, p):
    return sum(_vec(math.lgamma)(x - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(math.pi)


def _digamma_reflected(x):
    """digamma(x) = digamma(1 - x) - pi cot(pi x) below 1/2."""
    low = x < 0.5
    up = _digamma_ref(np.where(low, 1 - x, x))
    return np.where(low, up - math.pi / np.tan(math.pi * x), up)


_POLES = (-2.0, -1.0, 0.0)
_SPECIAL_UNARY = [
    # name, function, method, reference, class, domain, avoid
    ("lgamma", gpugrad.lgamma, lambda x: x.lgamma(), _vec(math.lgamma), "LgammaBackward0",
     (-2.5, 3.0), _POLES),
    ("digamma", gpugrad.digamma, lambda x: x.digamma(), _digamma_reflected, "DigammaBackward0",
     (-2.5, 3.0), _POLES),
    ("polygamma3", lambda x: gpugrad.polygamma(3, x), lambda x: x.polygamma(3),
     lambda x: _polygamma_ref(3, x), "PolygammaBackward0", (0.5, 3.0), ()),
    ("erfc", gpugrad.erfc, lambda x: x.erfc(), _vec(math.erfc), "ErfcBackward0", (-2.0, 2.0),
     ()),
    ("erfinv", gpugrad.erfinv, lambda x: x.erfinv(), lambda y: _bisect(_ERF, y, -6.0, 6.0),
     "ErfinvBackward0", (-0.9, 0.9), ()),
    ("logit", gpugrad.logit, lambda x: x.logit(), lambda x: np.log(x / (1 - x)),
     "LogitBackward0", (0.05, 0.95), ()),
    ("logit_eps", lambda x: gpugrad.logit(x, 0.2), lambda x: x.logit(eps=0.2),
     lambda x: np.log(np.clip(x, 0.2, 0.8) / (1 - np.clip(x, 0.2, 0.8))), "LogitBackward0",
     (0.05, 0.95), (0.2, 0.8)),
    ("sinc", gpugrad.sinc, lambda x: x.sinc(), np.sinc, "SincBackward0", (-2.0, 2.0), ()),
    ("i0", gpugrad.i0, lambda x: x.i0(), np.i0, "I0Backward0", (-3.0, 3.0), ()),
    ("i1", _SP.i1, None, _i1_ref, "SpecialI1Backward0", (-3.0, 3.0), ()),
    ("mvlgamma3", lambda x: gpugrad.mvlgamma(x, 3), lambda x: x.mvlgamma(3),
     lambda x: _mvlgamma_ref(x, 3), "MvlgammaBackward0", (1.2, 4.0), ()),
    ("ndtr", _SP.ndtr, None, _ndtr_ref, "ErfcBackward0", (-3.0, 3.0), ()),
    ("ndtri", _SP.ndtri, None, lambda p: _bisect(_ndtr_ref, p, -10.0, 10.0),
     "SpecialNdtriBackward0", (0.05, 0.95), ()),
    ("log_ndtr", _SP.log_ndtr, None, lambda x: np.log(_ndtr_ref(x)), "SpecialLogNdtrBackward0",
     (-5.0, 3.0), ()),
    ("entr", _SP.entr, None, lambda x: -x * np.log(x), "SpecialEntrBackward0", (0.1, 2.0), ()),
]


SPECIAL_FUNCTIONS = []
for _name, _fn, _method, _ref, _cls, _dom, _avoid in _SPECIAL_UNARY:
    SPECIAL_FUNCTIONS.append(_unary(_name, _fn, _ref, _cls, _dom, _avoid))
    if _method is not None:
        SPECIAL_FUNCTIONS.append(_unary(_name + "_method", _method, _ref, _cls, _dom, _avoid))

_XLOG1PY_DOMAIN = ((-2.0, 2.0), (-0.9, 2.0))


XLOG1PY = [
    OpEntry("xlog1py", _SP.xlog1py, lambda x, y: x * np.log1p(y), BINARY,
            ("SpecialXlog1PyBackward0",), _XLOG1PY_DOMAIN),
    OpEntry("xlog1py_method", lambda x, y: x.xlog1py(y), lambda x, y: x * np.log1p(y), BINARY,
            ("SpecialXlog1PyBackward0",), _XLOG1PY_DOMAIN),
    OpEntry("xlog1py_number_self", lambda y: _SP.xlog1py(1.5, y), lambda y: 1.5 * np.log1p(y),
            UNARY, ("SpecialXlog1PyBackward1",), (-0.9, 2.0)),
    OpEntry("xlog1py_number_other", lambda x: _SP.xlog1py(x, 0.5),
            lambda x: x * math.log1p(0.5), UNARY, ("SpecialXlog1PyBackward2",)),
]


# -- the rest of gpugrad.special: incomplete gamma at shape parameters
# with closed forms, Hurwitz zeta by its written-out sum, erfcx / i0e / i1e from the math module
# and written-out series --------------------------------------------------------------------------
_IGAMMA_A = np.array([0.5, 1.0, 2.5])


def _igamma_ref(x, upper=False):
    xs = np.broadcast_to(x, np.broadcast_shapes(np.shape(x), (3,)))
    erf = _vec(math.erf)(np.sqrt(xs))
    p = np.where(_IGAMMA_A == 0.5, erf, np.where(
        _IGAMMA_A == 1.0, -np.expm1(-xs),
        erf - 2 * np.sqrt(xs / math.pi) * np.exp(-xs) * (1 + 2 * xs / 3)))
    return 1 - p if upper else p


def _zeta2(x):
    """zeta(s, 2.0) at constants s that require grad but lie off the path to x: PyTorch gives
    SpecialZetaBackward2 no derivative, so only its forward value is checked here."""
    s = _const(np.array([2.5, 3.0, 4.0]), x).requires_grad_()
    return x * _SP.zeta(s, 2.0)


_ZETA_S = np.array([2.5, 3.0, 4.0])
_IGAMMA_SHAPES = (((2, 3),), ((3,),), ((),))


INCOMPLETE_GAMMA_ZETA = [
    OpEntry("gammainc", lambda x: _SP.gammainc(_const(_IGAMMA_A, x), x), _igamma_ref,
            _IGAMMA_SHAPES, ("IgammaBackward0",), (0.2, 3.0)),
    OpEntry("gammaincc", lambda x: _SP.gammaincc(_const(_IGAMMA_A, x), x),
            lambda x: _igamma_ref(x, True), _IGAMMA_SHAPES, ("IgammacBackward0",), (0.2, 3.0)),
    OpEntry("zeta_number_s", lambda q: _SP.zeta(3.0, q), lambda q: _hurwitz_ref(3.0, q), UNARY,
            ("SpecialZetaBackward1",), (0.5, 3.0)),
    OpEntry("zeta_tensor_s", lambda q: _SP.zeta(_const(_ZETA_S, q), q),
            lambda q: _hurwitz_ref(_ZETA_S, q), (((2, 3),), ((3,),)),
            ("SpecialZetaBackward0",), (0.5, 3.0)),
    OpEntry("zeta_number_q", _zeta2, lambda x: x * _hurwitz_ref(_ZETA_S, np.full(3, 2.0)),
            (((2, 3),), ((3,),)), ("SpecialZetaBackward2",)),
    _unary("erfcx", _SP.erfcx, lambda x: np.exp(x * x) * _vec(math.erfc)(x),
           "SpecialErfcxBackward0", (-2.0, 3.0)),
    _unary("i0e", _SP.i0e, lambda x: np.exp(-np.abs(x)) * np.i0(x), "SpecialI0EBackward0",
           (-3.0, 3.0), (0.0,)),
    _unary("i1e", _SP.i1e, lambda x: np.exp(-np.abs(x)) * _i1_ref(x), "SpecialI1EBackward0",
           (-3.0, 3.0), (0.0,)),
]
