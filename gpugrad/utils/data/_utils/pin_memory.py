"""``pin_memory(data)``: every tensor of a batch copied to page-locked host memory, the containers
around them rebuilt as they were, as PyTorch's ``pin_memory=True`` does to each batch. Only called
when a CUDA device is present (pinning needs one)."""
from __future__ import annotations

import collections.abc

from .collate import _rebuild


def pin_memory(data):
    if hasattr(data, "pin_memory"):   # tensors, and any object that knows how to pin itself
        return data.pin_memory()
    if isinstance(data, (str, bytes)):
        return data
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {k: pin_memory(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):   # namedtuple
        return type(data)(*(pin_memory(d) for d in data))
    if isinstance(data, collections.abc.Sequence):
        return _rebuild(data, [pin_memory(d) for d in data])
    return data
