"""Adafactor (Shazeer & Stern, 2018) as PyTorch 2.5+ implements it: no first moment, and the
second moment of a matrix gradient kept as a row and a column factor."""
from __future__ import annotations

import math

import numpy as np

from .. import _backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


class Adafactor(Optimizer):
    """With t the step, b2_t = 1 - t^beta2_decay, rho = min(lr, 1 / sqrt(t)),
    alpha = max(eps2, RMS(p)) rho:
      p *= 1 - lr wd
      2-D and more (over the last two dims):  R = b2_t R + (1 - b2_t) mean_cols(g^2),
        C = b2_t C + (1 - b2_t) mean_rows(g^2),  V = R C / max(mean_rows(R), eps1)
      vectors:  V = b2_t V + (1 - b2_t) g^2
      u = g / sqrt(max(V, eps1^2));  p -= alpha / max(1, RMS(u) / d) u
    eps1 = None means the parameter dtype's machine epsilon."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr = float(group["lr"])
                for p in group["params"]:
                    if p._grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Adafactor does not support complex parameters")
                    st = self.state[p]
                    if not st:
                        _init_state(st, p._grad._data)
                    _adafactor_step(p._data, p._grad._data, st, lr, group)
                    p._version_box().v += 1
        return loss


def _init_state(st, g):
    xp = _backend.xp_of(g)
    st["step"] = Tensor._make(np.zeros((), np.float32))
    if g.ndim > 1:
        st["row_var"] = Tensor._make(xp.zeros(g.shape[:-1] + (1,), dtype=g.dtype))
        st["col_var"] = Tensor._make(xp.zeros(g.shape[:-2] + (1, g.shape[-1]), dtype=g.dtype))
    else:
        st["variance"] = Tensor._make(xp.zeros_like(g))


def _lerp_(a, b, w):
    """a <- a + w (b - a) in place, from the nearer end as PyTorch's lerp_."""
    if w < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


def _rms(xp, a):
    return float(xp.sqrt(xp.sum(a * a))) / math.sqrt(a.size) if a.size else 0.0


def _adafactor_step(p, g, st, lr, group):
    xp = _backend.xp_of(p)
    eps1, eps2 = group["eps"]
    if eps1 is None:
        eps1 = float(np.finfo(p.dtype).eps)
    if group["maximize"]:
        g = -g
    step = st["step"]._data
    step += 1
    t = float(step)
    one_minus_beta2 = t ** group["beta2_decay"]
    rho = min(lr, 1 / t ** 0.5)
    alpha = max(eps2, _rms(xp, p)) * rho
    if group["weight_decay"] != 0:
        p *= 1 - lr * group["weight_decay"]
    if g.ndim > 1:
        row, col = st["row_var"]._data, st["col_var"]._data
        _lerp_(row, xp.mean(g * g, axis=-1, keepdims=True), one_minus_beta2)
        _lerp_(col, xp.mean(g * g, axis=-2, keepdims=True), one_minus_beta2)
        var = xp.matmul(row, col)
        var /= xp.maximum(xp.mean(row, axis=-2, keepdims=True), eps1)
    else:
        var = st["variance"]._data
        _lerp_(var, g * g, one_minus_beta2)
        var = var.copy()
    update = g / xp.sqrt(xp.maximum(var, eps1 * eps1))
    denom = max(1.0, _rms(xp, update) / group["d"])
    p -= (alpha / denom) * update
