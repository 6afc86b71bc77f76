"""In-place fills: ``zero_``, ``fill_``, ``copy_``, and the per-entry Python maps ``apply_`` and
``map_``; and ``torch.fill``."""
from __future__ import annotations

import numpy as np

from .._arguments import is_operand, not_tensor
from .._exports import export, method_as_function, tensor_method
from ..tensor import Tensor
from ..tensor_inplace import inplace
from .pointwise import arithmetic as pw

tensor_method("zero_")(lambda s: inplace(s, lambda t: t * 0, raw=lambda a: a.fill(0)))
tensor_method("fill_")(lambda s, v: inplace(s, lambda t, x: t * 0 + x, v,
                                            raw=lambda a, x: a.fill(x) if not hasattr(x, "shape")
                                            else a.__setitem__(Ellipsis, x)))


@tensor_method("copy_")
def _copy_(s, src, non_blocking=False):
    """s = src (broadcast, cast to s's dtype); src a tensor or a number."""
    if not isinstance(src, Tensor) and not is_operand(src):
        raise not_tensor("copy_", "other", src)
    return inplace(s, lambda t, v: t * 0 + pw.add(v.to(t.dtype) if isinstance(v, Tensor) else v,
                                                   0),
                   src, raw=lambda a, v: a.__setitem__(Ellipsis, v))


method_as_function("fill_", "zero_")


@export("fill")
def fill(input, value):
    """A new tensor of ``input``'s shape, dtype and device holding ``value`` (out of place)."""
    return input.detach().clone().fill_(value)


def _cpu_only(self, name):
    if self.device.type != "cpu":
        raise TypeError(f"{name} is only implemented on CPU tensors")


@tensor_method("apply_")
def _apply_(self, callable):
    """Each entry replaced by callable(entry), one Python call per entry (slow; CPU only)."""
    _cpu_only(self, "apply_")
    a = self._data
    new = np.array([callable(v) for v in a.reshape(-1).tolist()], dtype=a.dtype).reshape(a.shape)
    return inplace(self, lambda t: t * 0 + Tensor._make(new),
                   raw=lambda x: x.__setitem__(Ellipsis, new))


@tensor_method("map_")
def _map_(self, tensor, callable):
    """Each entry replaced by callable(entry, other's entry), other broadcast to self (CPU)."""
    _cpu_only(self, "map_")
    a = self._data
    b = np.broadcast_to(tensor._data, a.shape)
    new = np.array([callable(u, v) for u, v in zip(a.reshape(-1).tolist(),
                                                  b.reshape(-1).tolist())],
                   dtype=a.dtype).reshape(a.shape)
    return inplace(self, lambda t: t * 0 + Tensor._make(new),
                   raw=lambda x: x.__setitem__(Ellipsis, new))
