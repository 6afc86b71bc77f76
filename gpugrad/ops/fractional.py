"""Temporary: the old path of nn.pooling; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = ('gpugrad.ops.nn.pooling',)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
