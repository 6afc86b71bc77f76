"""Temporary: the old path of pointwise.unary, pointwise.comparison, pointwise.binary,
pointwise.arithmetic; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.pointwise.unary',
    'gpugrad.ops.pointwise.comparison',
    'gpugrad.ops.pointwise.binary',
    'gpugrad.ops.pointwise.arithmetic',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
