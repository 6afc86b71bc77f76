"""Temporary: the old path of reduction.extrema, pointwise.arithmetic, reduction.reduce,
shape.diagonal, pointwise.binary, shape.views, indexing.masked, shape.stacking,
indexing.gather, pointwise.comparison; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.reduction.extrema',
    'gpugrad.ops.pointwise.arithmetic',
    'gpugrad.ops.reduction.reduce',
    'gpugrad.ops.shape.diagonal',
    'gpugrad.ops.pointwise.binary',
    'gpugrad.ops.shape.views',
    'gpugrad.ops.indexing.masked',
    'gpugrad.ops.shape.stacking',
    'gpugrad.ops.indexing.gather',
    'gpugrad.ops.pointwise.comparison',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
