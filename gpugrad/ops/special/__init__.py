"""Special functions: the gamma, error-function, Bessel and logarithmic families and the
orthogonal polynomials, with their array-level numerics (_bessel.py, _series.py).

This package is also the old path of the module ``gpugrad.ops.special``: its names resolve
from their new homes below (temporary; removed once every importer uses the new homes)."""

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

# every name in __all__ is attached to gpugrad.special
__all__: list = ["gammainc", "gammaincc", "zeta", "erfcx", "i0e", "i1e", "bessel_j0",
                 "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                 "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                 "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                 "spherical_bessel_j0", "airy_ai", *orthopoly.POLYNOMIALS]

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.special._numerics',
    'gpugrad.ops.special.logarithmic',
    'gpugrad.ops.special.gamma',
    'gpugrad.ops.special.error',
    'gpugrad.ops.special.bessel',
    'gpugrad.ops.pointwise.arithmetic',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
