"""More ways to make a tensor: scalar_tensor, asarray (sharing memory where it can), the
deprecated inclusive range, empty_strided, frombuffer, and the signal windows (hann, hamming,
blackman, bartlett, kaiser)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _backend
from ._creation import DEFAULT, _finish, as_dtype, tensor
from .tensor import Tensor, scalar_name


def scalar_tensor(s, *, dtype=None, device=None, layout=None, requires_grad=False,
                  pin_memory=False):
    """A 0-d tensor holding s, in the default float dtype unless dtype is given."""
    d = as_dtype(dtype) or DEFAULT.float
    return _finish(_backend.on_device(device, lambda xp: xp.asarray(s, dtype=d)), requires_grad)


def _same_device(a, dev):
    return dev is None or _backend.device_of(a) == _backend.device(dev)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor, sharing memory with it when dtype and device allow and copy is not True
    (a tensor comes back itself). ``copy=False`` raises where sharing is impossible."""
    d = as_dtype(dtype)
    if isinstance(obj, Tensor):
        a = obj._data
        if (d is None or d == a.dtype) and _same_device(a, device) and not copy:
            if requires_grad and not obj.requires_grad:
                obj.requires_grad_(True)
            return obj
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{_kind(a.dtype)}' into dtype "
                             f"'{_kind(d)}'." if d is not None and d != a.dtype else
                             "can't alias tensor into another device.")
        out = obj.detach().to(device=device, dtype=d)
        out = out.clone() if out._data is a else out
        return _finish(out._data, requires_grad)
    if _backend.is_array(obj) and not isinstance(obj, np.generic):
        if (d is None or d == obj.dtype) and _same_device(obj, device) and not copy:
            return _finish(obj, requires_grad)
        if copy is False:
            raise ValueError(f"can't alias array with dtype '{obj.dtype}' into dtype '{d}'.")
        return tensor(obj, dtype=d, device=device, requires_grad=requires_grad)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    return tensor(obj, dtype=d, device=device, requires_grad=requires_grad)


def _kind(dtype):
    return scalar_name(dtype).capitalize()


RANGE_DEPRECATED = (
    "torch.range is deprecated and will be removed in a future release because its behavior is "
    "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values "
    "in [start, end).")


def range(start=0, end=None, step=1, *, dtype=None, device=None, layout=None,
          requires_grad=False, out=None):
    """start, start + step, ... up to and including end (deprecated, as in PyTorch: use
    arange, whose end is excluded). The default float dtype unless dtype is given."""
    warnings.warn(RANGE_DEPRECATED, UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    d = as_dtype(dtype) or DEFAULT.float
    return _finish(_backend.on_device(device, lambda xp: (
        start + xp.arange(n, dtype=np.float64) * step).astype(d)), requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of ``size`` laid out with ``stride`` (in elements)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    d = as_dtype(dtype) or DEFAULT.float
    need = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))

    def make(xp):
        buf = xp.zeros(max(need, 1), dtype=d)
        return xp.lib.stride_tricks.as_strided(buf, size, [s * d.itemsize for s in stride])
    return _finish(_backend.on_device(device, make), requires_grad)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the memory of an object with the buffer protocol (bytes, bytearray,
    array.array ...), sharing it. A read-only buffer gives a read-only tensor."""
    d = as_dtype(dtype)
    length = memoryview(buffer).nbytes
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % d.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({d.itemsize})")
        count = (length - offset) // d.itemsize
    elif count * d.itemsize > length - offset:
        raise ValueError(f"requested buffer length ({count} * {d.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    return _finish(np.frombuffer(buffer, dtype=d, count=count, offset=offset), requires_grad)


# -- windows ------------------------------------------------------------------------------------
def _window(name, window_length, periodic, dtype, device, requires_grad, formula):
    """formula(n, N) over n = 0 .. N - 1 in float64, N = window_length (+ 1 when periodic, the
    extra last point then dropped), cast to dtype."""
    d = as_dtype(dtype) or DEFAULT.float
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if d.kind != "f":
        raise RuntimeError(f"{name} expects floating point dtypes, got: {scalar_name(d)}")

    def make(xp):
        if window_length <= 1:
            return xp.ones(window_length, dtype=d)
        big = window_length + 1 if periodic else window_length
        n = xp.arange(big, dtype=np.float64)
        return formula(xp, n, big)[:window_length].astype(d)
    return _finish(_backend.on_device(device, make), requires_grad)


def _cosines(*coefs):
    """sum_k (-1)^k coefs[k] cos(2 pi k n / (N - 1))"""
    def formula(xp, n, big):
        w = xp.zeros(n.shape)
        for k, c in enumerate(coefs):
            w = w + (-1) ** k * c * xp.cos(2 * math.pi * k * n / (big - 1))
        return w
    return formula


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """w[n] = 0.5 - 0.5 cos(2 pi n / (N - 1))"""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """w[n] = alpha - beta cos(2 pi n / (N - 1))"""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """w[n] = 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))"""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.42, 0.5, 0.08))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """w[n] = 1 - |2 n / (N - 1) - 1|"""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda xp, n, big: 1 - xp.abs(2 * n / (big - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """w[n] = I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta), a = (N - 1) / 2"""
    def formula(xp, n, big):
        a = (big - 1) / 2
        return xp.i0(beta * xp.sqrt(1 - ((n - a) / a) ** 2)) / xp.i0(xp.asarray(float(beta)))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   formula)
