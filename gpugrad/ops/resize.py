"""Temporary: the old path of nn.upsampling, nn.fold, nn.pixelshuffle, nn.conv; removed once
every importer uses the new homes."""

import importlib as _importlib

_HOMES = (
    'gpugrad.ops.nn.upsampling',
    'gpugrad.ops.nn.fold',
    'gpugrad.ops.nn.pixelshuffle',
    'gpugrad.ops.nn.conv',
)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
