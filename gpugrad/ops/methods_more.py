"""Temporary: the old path of shape.views, reduction.extrema, random, shape.repeat,
reduction.histogram, reduction.sorting, pointwise.arithmetic, pointwise.unary,
shape.diagonal, reduction.reduce; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.shape.views',
    'gpugrad.ops.reduction.extrema',
    'gpugrad.ops.random',
    'gpugrad.ops.shape.repeat',
    'gpugrad.ops.reduction.histogram',
    'gpugrad.ops.reduction.sorting',
    'gpugrad.ops.pointwise.arithmetic',
    'gpugrad.ops.pointwise.unary',
    'gpugrad.ops.shape.diagonal',
    'gpugrad.ops.reduction.reduce',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
