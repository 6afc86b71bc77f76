"""Temporary: the old path of indexing.gather, reduction.sorting, shape.flip, shape.triangular,
nn.embedding, indexing.masked, reduction.scan, shape.repeat, reduction.extrema, shape.views,
linalg.products, reduction.reduce; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.indexing.gather',
    'gpugrad.ops.reduction.sorting',
    'gpugrad.ops.shape.flip',
    'gpugrad.ops.shape.triangular',
    'gpugrad.ops.nn.embedding',
    'gpugrad.ops.indexing.masked',
    'gpugrad.ops.reduction.scan',
    'gpugrad.ops.shape.repeat',
    'gpugrad.ops.reduction.extrema',
    'gpugrad.ops.shape.views',
    'gpugrad.ops.linalg.products',
    'gpugrad.ops.reduction.reduce',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
