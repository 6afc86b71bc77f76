"""Temporary: the old path of reduction.scan, pointwise.arithmetic, pointwise.binary,
shape.views, reduction.reduce, shape.flip, pointwise.unary, pointwise.minmax,
indexing.getitem, indexing.gather, reduction.calculus, shape.repeat, shape.joining; removed
once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.reduction.scan',
    'gpugrad.ops.pointwise.arithmetic',
    'gpugrad.ops.pointwise.binary',
    'gpugrad.ops.shape.views',
    'gpugrad.ops.reduction.reduce',
    'gpugrad.ops.shape.flip',
    'gpugrad.ops.pointwise.unary',
    'gpugrad.ops.pointwise.minmax',
    'gpugrad.ops.indexing.getitem',
    'gpugrad.ops.indexing.gather',
    'gpugrad.ops.reduction.calculus',
    'gpugrad.ops.shape.repeat',
    'gpugrad.ops.shape.joining',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
