"""Temporary: the old path of reduction.sorting, pointwise.bitwise, reduction.scan,
reduction.extrema, pointwise.minmax, linalg.norms, pointwise.arithmetic, reduction.reduce,
reduction.histogram, creation, random; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.reduction.sorting',
    'gpugrad.ops.pointwise.bitwise',
    'gpugrad.ops.reduction.scan',
    'gpugrad.ops.reduction.extrema',
    'gpugrad.ops.pointwise.minmax',
    'gpugrad.ops.linalg.norms',
    'gpugrad.ops.pointwise.arithmetic',
    'gpugrad.ops.reduction.reduce',
    'gpugrad.ops.reduction.histogram',
    'gpugrad.ops.creation',
    'gpugrad.ops.random',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
