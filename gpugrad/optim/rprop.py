"""Rprop and ASGD (plain array ops on numpy or CuPy, in PyTorch's order of operations, so
float64 runs match it to rounding)."""
from __future__ import annotations

import numpy as np

from .. import _backend
from .._creation import get_default_dtype
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


def _scalar_dtype():
    """The dtype of scalar state (``step``, ``eta``, ``mu``): float64 under a float64 default
    dtype, else float32, as PyTorch keeps them."""
    return np.float64 if get_default_dtype() == np.float64 else np.float32


def _lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _grads(group):
    """(parameter, its gradient array, negated under maximize, xp) for each param with one."""
    for p in group["params"]:
        if p._grad is not None:
            g = p._grad._data
            yield p, (-g if group["maximize"] else g), _backend.xp_of(g)


class Rprop(Optimizer):
    """Resilient backpropagation: each entry's step size grows by etaplus while its gradient
    keeps its sign and shrinks by etaminus when the sign flips (clamped to step_sizes);
    p -= sign(g) step, with g taken as 0 right after a flip."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                (etaminus, etaplus), (smin, smax) = group["etas"], group["step_sizes"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    if not st:
                        st["step"] = Tensor._make(xp.zeros((), _scalar_dtype()))
                        st["prev"] = Tensor._make(xp.zeros_like(p._data))
                        st["step_size"] = Tensor._make(xp.full_like(g, float(group["lr"])))
                    st["step"]._data += 1
                    prev, size = st["prev"]._data, st["step_size"]._data
                    sign = xp.sign(g * prev)
                    flipped = sign < 0
                    factor = xp.where(sign > 0, etaplus, xp.where(
                        flipped, etaminus, xp.where(sign == 0, 1.0, sign))).astype(g.dtype)
                    size *= factor
                    xp.clip(size, smin, smax, out=size)
                    g = xp.where(flipped, 0, g).astype(g.dtype, copy=False)
                    p._data -= xp.sign(g) * size
                    prev[...] = g
                    p._version_box().v += 1
        return loss


class ASGD(Optimizer):
    """Averaged SGD: p = p (1 - lambd eta) - eta g, ax averages p from step t0 on
    (ax += (p - ax) mu); eta = lr / (1 + lambd lr t)^alpha, mu = 1 / max(1, t - t0)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, lambd, alpha, t0 = (float(group["lr"]), group["lambd"], group["alpha"],
                                        group["t0"])
                wd = group["weight_decay"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    if not st:
                        dt = _scalar_dtype()
                        st["step"] = Tensor._make(xp.zeros((), dt))
                        st["eta"] = Tensor._make(xp.full((), lr, dt))
                        st["mu"] = Tensor._make(xp.ones((), dt))
                        st["ax"] = Tensor._make(xp.zeros_like(p._data))
                    st["step"]._data += 1
                    if wd != 0:
                        g = g + wd * p._data
                    eta = float(st["eta"]._data)
                    p._data *= 1 - lambd * eta
                    p._data -= eta * g
                    mu, ax = float(st["mu"]._data), st["ax"]._data
                    if mu != 1:
                        ax += (p._data - ax) * mu
                    else:
                        ax[...] = p._data
                    step = float(st["step"]._data)
                    st["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
                    st["mu"]._data[...] = 1 / max(1, step - t0)
                    p._version_box().v += 1
        return loss
