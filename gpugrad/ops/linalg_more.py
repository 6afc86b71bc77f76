"""Temporary: the old path of linalg (its __all__), linalg.solvers, linalg.decompositions,
linalg.norms, linalg.lstsq, linalg.products, linalg.triangular; removed once every importer
uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.linalg',
    'gpugrad.ops.linalg.solvers',
    'gpugrad.ops.linalg.decompositions',
    'gpugrad.ops.linalg.norms',
    'gpugrad.ops.linalg.lstsq',
    'gpugrad.ops.linalg.products',
    'gpugrad.ops.linalg.triangular',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
