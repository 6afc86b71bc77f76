"""Temporary: the old path of reduction.reduce, reduction.extrema, reduction.softmax; removed
once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.reduction.reduce',
    'gpugrad.ops.reduction.extrema',
    'gpugrad.ops.reduction.softmax',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
