"""``default_collate`` (what a ``DataLoader`` applies to a list of samples to make a batch) and
``default_convert`` (what it applies to each sample when it does not batch), as PyTorch's."""
from __future__ import annotations

import collections.abc
import copy
import re

import numpy as np

from ...._creation import as_tensor, tensor
from ....ops.shape.joining import stack
from ....tensor import Tensor

__all__ = ["default_collate", "default_convert"]


_NP_STR_OR_OBJECT = re.compile(r"[SaUO]")
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def _is_numpy(x):
    return type(x).__module__ == "numpy" and type(x).__name__ not in ("str_", "string_", "bytes_")


def _rebuild(elem, values):
    """``values`` in the container type of ``elem`` (a mapping or a sequence), or a plain
    dict/list where that type cannot be rebuilt."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        if isinstance(elem, collections.abc.Mapping):
            return type(elem)(values)
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return dict(values) if isinstance(elem, collections.abc.Mapping) else list(values)


def default_collate(batch):
    """Stack samples: tensors and numpy arrays -> one tensor with a new leading dimension,
    Python ints/bools -> an int64/bool tensor, floats -> a float64 tensor, numpy scalars -> a
    tensor of their dtype, strings stay a list; mappings, namedtuples and sequences are collated
    field by field (a tuple of fields comes back as a list, as in PyTorch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch))
    if _is_numpy(elem):
        if isinstance(elem, np.ndarray):
            if _NP_STR_OR_OBJECT.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERROR.format(elem.dtype))
            return default_collate([as_tensor(b) for b in batch])
        if isinstance(elem, (np.bool_, np.number, np.object_)):
            return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype="float64")
    if isinstance(elem, int):
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # namedtuple
        return type(elem)(*(default_collate(f) for f in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each field is collated as the tuple zip gives, so strings stay a tuple there
        fields = [default_collate(f) for f in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuild(elem, fields)
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """What a ``DataLoader`` with ``batch_size=None`` applies to each sample: numpy arrays and
    scalars become tensors (inside mappings, namedtuples and sequences too); the rest is kept."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and _NP_STR_OR_OBJECT.search(data.dtype.str):
            return data
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data
