"""The signal windows of the top-level namespace (``gpugrad.hann_window`` ...), as PyTorch's."""
from __future__ import annotations

import math

import numpy as np

from . import _backend
from ._creation import DEFAULT, _finish, as_dtype
from .tensor import scalar_name


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
