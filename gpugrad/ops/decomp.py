"""Temporary: the old path of linalg.decompositions, linalg.triangular, linalg.solvers; removed
once every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.linalg.decompositions',
    'gpugrad.ops.linalg.triangular',
    'gpugrad.ops.linalg.solvers',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
