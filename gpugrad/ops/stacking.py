"""Temporary: the old path of shape.stacking, linalg.products, shape.diagonal, shape.views,
reduction.sorting; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.shape.stacking',
    'gpugrad.ops.linalg.products',
    'gpugrad.ops.shape.diagonal',
    'gpugrad.ops.shape.views',
    'gpugrad.ops.reduction.sorting',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
