"""Temporary: the old path of special._bessel; removed once every importer uses the new homes."""

import importlib as _importlib

_HOMES = ('gpugrad.ops.special._bessel',)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
