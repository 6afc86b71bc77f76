"""Temporary: the old path of linalg (its __all__), linalg.solve, linalg.decompositions,
linalg.norms, linalg.lstsq, linalg.products, linalg.lu; removed once every importer uses the
new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.linalg',
    'gpugrad.ops.linalg.solve',
    'gpugrad.ops.linalg.decompositions',
    'gpugrad.ops.linalg.norms',
    'gpugrad.ops.linalg.lstsq',
    'gpugrad.ops.linalg.products',
    'gpugrad.ops.linalg.lu',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
