"""Helpers shared by the distributions (PyTorch's ``torch.distributions.utils``)."""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np

import gpugrad

from ..tensor import Size, Tensor

euler_constant = 0.57721566490153286060   # Euler-Mascheroni constant

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, Tensor)


def broadcast_all(*values):
    """Broadcast tensors and numbers together; numbers take the dtype and device of the first
    tensor (the default dtype when there is none)."""
    if not all(isinstance(v, Tensor) or is_number(v) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = {"dtype": gpugrad.get_default_dtype()}
        for v in values:
            if isinstance(v, Tensor):
                options = {"dtype": v.dtype, "device": v.device}
                break
        values = [v if isinstance(v, Tensor) else gpugrad.tensor(v, **options) for v in values]
    return gpugrad.broadcast_tensors(*values)


def as_size(shape) -> Size:
    if isinstance(shape, numbers.Integral):
        raise TypeError(f"sample_shape must be a tuple or gpugrad.Size, got int {shape}")
    return Size(int(s) for s in shape)


def standard_normal(shape, dtype, device) -> Tensor:
    """N(0, 1) draws from gpugrad's generator (reproducible under ``gpugrad.manual_seed``)."""
    return gpugrad.randn(tuple(shape), dtype=dtype, device=device)


def standard_uniform(shape, dtype, device) -> Tensor:
    """U[0, 1) draws from gpugrad's generator."""
    return gpugrad.rand(tuple(shape), dtype=dtype, device=device)


def sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def finfo(dtype):
    return np.finfo(np.dtype(dtype))


def clamp_probs(probs: Tensor) -> Tensor:
    """probs clamped to [eps, 1 - eps] (eps of the dtype)."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) when binary, else softmax over the last dimension."""
    if is_binary:
        return gpugrad.sigmoid(logits)
    return gpugrad.softmax(logits, dim=-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) when binary, else log(p) (p clamped away from 0 and 1)."""
    p = clamp_probs(probs)
    if is_binary:
        return p.log() - (-p).log1p()
    return p.log()


class lazy_property:   # noqa: N801  (PyTorch's name)
    """A property computed on first access (with grad enabled) and then cached on the
    instance; the class attribute stays a ``lazy_property`` so validation can skip it."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        with gpugrad.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def fmt(v):
    """A value as PyTorch's messages print it: a 0-d tensor as its number."""
    if isinstance(v, Tensor) and v.ndim == 0:
        return v.item()
    return v


def erfinv(y: Tensor) -> Tensor:
    """erf^-1(y), differentiable in y: x0 from Newton steps on the detached values (float64),
    then one Newton step in differentiable ops, x = x0 - (erf(x0) - y) / erf'(x0), whose value
    is x0 and whose derivative is 1 / erf'(x0)."""
    c = 2 / math.sqrt(math.pi)
    with gpugrad.no_grad():
        yd = y.detach().double()
        w = -((1 - yd) * (1 + yd)).log()
        a = 2 / (math.pi * 0.147) - w / 2   # Winitzki's closed form as the start
        x0 = yd.sign() * ((a * a + w / 0.147).sqrt() - a).clamp(min=0).sqrt()
        x0 = gpugrad.where(yd.abs() == 1, yd * math.inf, x0)
        for _ in range(4):
            step = (gpugrad.erf(x0) - yd) / (c * (-x0 * x0).exp())
            x0 = gpugrad.where(step.isfinite(), x0 - step, x0)
        x0 = x0.to(y.dtype)
        slope = c * (-x0 * x0).exp()
        inner = x0.isfinite() & (slope > 0)
        x0_in = gpugrad.where(inner, x0, 0.0)   # NOTE: keeps inf / nan out of the gradient
        slope = gpugrad.where(inner, slope, 1.0)
    step = (gpugrad.erf(x0_in) - y) / slope
    return gpugrad.where(inner, x0_in - step, x0)


class BinaryParams:
    """``probs`` and ``logits`` of a binary event, each derived from the other on first use
    (Bernoulli, Binomial, Geometric and the relaxed Bernoulli are given one of them)."""

    def _set_param(self, probs, logits):
        """Keep the one of ``probs``/``logits`` given (as ``_param`` too); its batch shape."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        name, value = ("probs", probs) if probs is not None else ("logits", logits)
        (param,) = broadcast_all(value)
        setattr(self, name, param)
        self._param = param
        return Size() if is_number(value) else param.shape

    def _expand_param(self, new, batch_shape):
        """Give ``new`` this distribution's parameter, expanded to ``batch_shape``."""
        for name in ("probs", "logits"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
                new._param = getattr(new, name)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

