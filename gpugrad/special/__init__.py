"""``gpugrad.special``: special functions under PyTorch's ``torch.special`` names, over
gpugrad's ops (several are aliases PyTorch keeps: gammaln, psi, multigammaln, expit)."""
from __future__ import annotations

from ..ops.activation import (
    sigmoid as expit,
)
from ..ops.misc import (
    xlogy,
)
from ..ops.orthopoly import (
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
from ..ops.pointwise import (
    erf,
)
from ..ops.pointwise import pow as _pow
from ..ops.reduce import log_softmax as _log_softmax
from ..ops.reduce import (
    logsumexp,
)
from ..ops.reduce import softmax as _softmax
from ..ops.special import (
    digamma,
    entr,
    erfc,
    erfinv,
    i0,
    i1,
    log_ndtr,
    logit,
    mvlgamma,
    ndtr,
    ndtri,
    polygamma,
    sinc,
    xlog1py,
)
from ..ops.special import (
    digamma as psi,
)
from ..ops.special import (
    lgamma as gammaln,
)
from ..ops.special import (
    mvlgamma as multigammaln,
)
from ..ops.special_more import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    erfcx,
    gammainc,
    gammaincc,
    i0e,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
    zeta,
)
from ..ops.unary import (
    expm1,
    log1p,
    round,
)


def exp2(input):
    """2 ** input."""
    return _pow(2.0, input)


def softmax(input, dim, *, dtype=None):
    return _softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _log_softmax(input, dim, dtype)
