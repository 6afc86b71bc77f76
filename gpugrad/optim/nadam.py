"""Adamax, NAdam and RAdam: Adam's moments with another step (plain array ops on numpy or CuPy,
in PyTorch's order of operations, so float64 runs match it to rounding)."""
from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .adaptive import _check, _grads
from .optimizer import Optimizer


def _betas(betas):
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    return tuple(betas)


def _state(st, p, xp, *names, **scalars):
    """Create a parameter's state on its first step: ``step`` and the named buffers."""
    if not st:
        st["step"] = Tensor._make(xp.zeros((), xp.float32))
        for name, value in scalars.items():
            st[name] = Tensor._make(xp.full((), value, xp.float32))
        for name in names:
            st[name] = Tensor._make(xp.zeros_like(p._data))
    st["step"]._data += 1
    return float(st["step"]._data)


class Adamax(Optimizer):
    """m = b1 m + (1 - b1) g;  u = max(b2 u, |g| + eps);  p -= lr / (1 - b1^t) m / u"""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check(lr, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    t = _state(st, p, xp, "exp_avg", "exp_inf")
                    m, u = st["exp_avg"]._data, st["exp_inf"]._data
                    m += (g - m) * (1 - b1)
                    xp.maximum(u * b2, xp.abs(g) + eps, out=u)
                    p._data -= (lr / (1 - b1 ** t)) * (m / u)
                    p._version_box().v += 1
        return loss


class NAdam(Optimizer):
    """Adam with Nesterov momentum and a momentum schedule
    mu_t = b1 (1 - 0.96^(t psi) / 2) (psi = momentum_decay):
    p -= lr (1 - mu_t) / (1 - prod mu) g / d + lr mu_{t+1} / (1 - prod mu * mu_{t+1}) m / d,
    d = sqrt(v / (1 - b2^t)) + eps"""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check(lr, eps, weight_decay)
        if momentum_decay < 0.0:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                psi = group["momentum_decay"]
                for p, g, xp in _decayed(group):
                    st = self.state[p]
                    t = _state(st, p, xp, "exp_avg", "exp_avg_sq", mu_product=1.0)
                    mu = b1 * (1.0 - 0.5 * 0.96 ** (t * psi))
                    mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
                    st["mu_product"]._data *= mu
                    prod = float(st["mu_product"]._data)
                    m, v = _moments(st, g, b1, b2)
                    d = xp.sqrt(v / (1 - b2 ** t)) + eps
                    p._data -= (lr * (1 - mu) / (1 - prod)) * (g / d)
                    p._data -= (lr * mu_next / (1 - prod * mu_next)) * (m / d)
                    p._version_box().v += 1
        return loss


class RAdam(Optimizer):
    """Adam whose adaptive step is switched on once the variance of its rate is tractable
    (rho_t > 5), scaled by the rectification term r_t; plain momentum SGD before that."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check(lr, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=_betas(betas), eps=eps,
                                      weight_decay=weight_decay, maximize=maximize,
                                      foreach=foreach, capturable=capturable,
                                      decoupled_weight_decay=decoupled_weight_decay,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                rho_inf = 2 / (1 - b2) - 1
                for p, g, xp in _decayed(group):
                    st = self.state[p]
                    t = _state(st, p, xp, "exp_avg", "exp_avg_sq")
                    m, v = _moments(st, g, b1, b2)
                    bc2 = 1 - b2 ** t
                    m_hat = m / (1 - b1 ** t)
                    rho_t = rho_inf - 2 * t * (b2 ** t) / bc2
                    if rho_t > 5.0:
                        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                        p._data -= m_hat * lr * (math.sqrt(bc2) / (xp.sqrt(v) + eps)) * rect
                    else:
                        p._data -= m_hat * lr
                    p._version_box().v += 1
        return loss


def _moments(st, g, b1, b2):
    """Adam's moments, updated in place: m = b1 m + (1 - b1) g (as PyTorch's lerp),
    v = b2 v + (1 - b2) g^2."""
    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
    m += (g - m) * (1 - b1)
    v *= b2
    v += (1 - b2) * (g * g)
    return m, v


def _decayed(group):
    """_grads, with weight decay applied to p instead (p *= 1 - lr wd) when decoupled."""
    if not group["decoupled_weight_decay"] or not group["weight_decay"]:
        yield from _grads(group)
        return
    plain = dict(group, weight_decay=0)
    for p, g, xp in _grads(plain):
        p._data *= 1 - group["lr"] * group["weight_decay"]
        yield p, g, xp
