"""Temporary: the old path of special (its __all__), special.gamma, special.bessel,
special.incomplete_gamma, special.hurwitz_zeta, special.error, special._numerics,
special.polynomials, pointwise.arithmetic, special._series; removed once every importer uses
the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.special',
    'gpugrad.ops.special.gamma',
    'gpugrad.ops.special.bessel',
    'gpugrad.ops.special.incomplete_gamma',
    'gpugrad.ops.special.hurwitz_zeta',
    'gpugrad.ops.special.error',
    'gpugrad.ops.special._numerics',
    'gpugrad.ops.special.polynomials',
    'gpugrad.ops.pointwise.arithmetic',
    'gpugrad.ops.special._series',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
