"""Temporary: the old path of reduction.calculus, shape.triangular, indexing.scatter,
shape.stacking, linalg.products, shape.joining, indexing.gather, reduction.histogram,
shape.diagonal, linalg.norms, reduction.sorting, indexing.masked, indexing.getitem; removed
once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.reduction.calculus',
    'gpugrad.ops.shape.triangular',
    'gpugrad.ops.indexing.scatter',
    'gpugrad.ops.shape.stacking',
    'gpugrad.ops.linalg.products',
    'gpugrad.ops.shape.joining',
    'gpugrad.ops.indexing.gather',
    'gpugrad.ops.reduction.histogram',
    'gpugrad.ops.shape.diagonal',
    'gpugrad.ops.linalg.norms',
    'gpugrad.ops.reduction.sorting',
    'gpugrad.ops.indexing.masked',
    'gpugrad.ops.indexing.getitem',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
