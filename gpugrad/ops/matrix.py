"""Temporary: the old path of linalg.solvers, linalg.products, linalg.norms,
linalg.decompositions, shape.diagonal; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.linalg.solvers',
    'gpugrad.ops.linalg.products',
    'gpugrad.ops.linalg.norms',
    'gpugrad.ops.linalg.decompositions',
    'gpugrad.ops.shape.diagonal',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
