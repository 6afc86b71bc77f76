"""Special functions: the gamma, error-function, Bessel and logarithmic families and the
orthogonal polynomials. Their array-level numerics (_numerics.py, _bessel.py) are SciPy's on
numpy arrays and cupyx.scipy.special's on CuPy arrays."""

from . import polynomials as orthopoly
from .bessel import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    i0e,
    i1e,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    spherical_bessel_j0,
)
from .error import erfcx
from .hurwitz_zeta import zeta
from .incomplete_gamma import gammainc, gammaincc
from .polynomials import (
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

# every name in __all__ is attached to gpugrad.special
__all__: list = ["gammainc", "gammaincc", "zeta", "erfcx", "i0e", "i1e", "bessel_j0",
                 "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                 "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                 "spherical_bessel_j0", "airy_ai", *orthopoly.POLYNOMIALS]
