"""``gpugrad.special``: special functions under PyTorch's ``torch.special`` names, over
gpugrad's ops (several are aliases PyTorch keeps: gammaln, psi, multigammaln, expit)."""
from __future__ import annotations

from ..ops.nn.activation import sigmoid as expit
from ..ops.pointwise.arithmetic import pow as _pow
from ..ops.pointwise.binary import xlogy
from ..ops.pointwise.unary import erf, expm1, log1p, round
from ..ops.reduction.reduce import logsumexp
from ..ops.reduction.softmax import log_softmax as _log_softmax
from ..ops.reduction.softmax import softmax as _softmax
from ..ops.special.bessel import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    i0,
    i0e,
    i1,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
)
from ..ops.special.error import erfc, erfcx, erfinv, log_ndtr, ndtr, ndtri
from ..ops.special.gamma import digamma, mvlgamma, polygamma
from ..ops.special.gamma import digamma as psi
from ..ops.special.gamma import lgamma as gammaln
from ..ops.special.gamma import mvlgamma as multigammaln
from ..ops.special.hurwitz_zeta import zeta
from ..ops.special.incomplete_gamma import gammainc, gammaincc
from ..ops.special.logarithmic import entr, logit, sinc, xlog1py
from ..ops.special.polynomials import (
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)


def exp2(input):
    """2 ** input."""
    return _pow(2.0, input)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype)
