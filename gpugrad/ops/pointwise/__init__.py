"""Elementwise ops, one module per kind: arithmetic, unary functions, binary functions,
clamp / maximum / where (minmax), comparisons, bitwise.

This package is also the old path of the module ``gpugrad.ops.pointwise``: its names resolve
from their new homes below (temporary; removed once every importer uses the new homes)."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.pointwise.arithmetic',
    'gpugrad.ops.pointwise.unary',
    'gpugrad.ops.pointwise.minmax',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
