"""Temporary: the old path of linalg.decompositions, linalg.lu, linalg.solve; removed once
every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.linalg.decompositions',
    'gpugrad.ops.linalg.lu',
    'gpugrad.ops.linalg.solve',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
