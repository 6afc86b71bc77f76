"""Shape ops: views and reshapes, joining and splitting, stacking helpers, diagonals, triangles,
flips and repeats.

This package is also the old path of the module ``gpugrad.ops.shape``: its names resolve
from their new homes below (temporary; removed once every importer uses the new homes)."""

import importlib as _importlib

_HOMES = ('gpugrad.ops.shape.views', 'gpugrad.ops.shape.joining')   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
