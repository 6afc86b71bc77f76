"""RMSprop, Adagrad and Adadelta: per-parameter step sizes from running squared gradients
(plain array ops on numpy or CuPy; no fused kernel)."""
from __future__ import annotations

from .. import _backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


def _check(lr, eps, weight_decay):
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _grads(group):
    """(parameter, its gradient array with weight decay and maximize applied, xp) per param."""
    wd, maximize = group["weight_decay"], group["maximize"]
    for p in group["params"]:
        if p._grad is None:
            continue
        g = -p._grad._data if maximize else p._grad._data
        if wd:
            g = g + wd * p._data
        yield p, g, _backend.xp_of(g)


class RMSprop(Optimizer):
    """s = alpha s + (1 - alpha) g^2;  a = sqrt(s - mean_g^2 if centered else s) + eps;
    p -= lr g / a   (with momentum: buf = momentum buf + g / a;  p -= lr buf)"""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check(lr, eps, weight_decay)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if alpha < 0.0:
            raise ValueError(f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      capturable=capturable, foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
                momentum, centered = group["momentum"], group["centered"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    if not st:
                        st["step"] = Tensor._make(xp.zeros((), xp.float32))
                        st["square_avg"] = Tensor._make(xp.zeros_like(p._data))
                        if momentum > 0:
                            st["momentum_buffer"] = Tensor._make(xp.zeros_like(p._data))
                        if centered:
                            st["grad_avg"] = Tensor._make(xp.zeros_like(p._data))
                    st["step"]._data += 1
                    s = st["square_avg"]._data
                    s *= alpha
                    s += (1 - alpha) * g * g
                    if centered:
                        ga = st["grad_avg"]._data
                        ga *= alpha
                        ga += (1 - alpha) * g
                        avg = xp.sqrt(s - ga * ga) + eps
                    else:
                        avg = xp.sqrt(s) + eps
                    if momentum > 0:
                        buf = st["momentum_buffer"]._data
                        buf *= momentum
                        buf += g / avg
                        p._data -= lr * buf
                    else:
                        p._data -= lr * (g / avg)
                    p._version_box().v += 1
        return loss


class Adagrad(Optimizer):
    """s += g^2;  p -= lr / (1 + (t - 1) lr_decay) g / (sqrt(s) + eps)"""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check(lr, eps, weight_decay)
        if lr_decay < 0.0:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if initial_accumulator_value < 0.0:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable, fused=fused))
        for group in self.param_groups:   # PyTorch creates the state up front
            for p in group["params"]:
                xp = _backend.xp_of(p._data)
                self.state[p]["step"] = Tensor._make(xp.zeros((), xp.float32))
                self.state[p]["sum"] = Tensor._make(
                    xp.full_like(p._data, group["initial_accumulator_value"]))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    st["step"]._data += 1
                    clr = lr / (1 + (float(st["step"]._data) - 1) * lr_decay)
                    s = st["sum"]._data
                    s += g * g
                    p._data -= clr * (g / (xp.sqrt(s) + eps))
                    p._version_box().v += 1
        return loss


class Adadelta(Optimizer):
    """s = rho s + (1 - rho) g^2;  d = sqrt(a + eps) / sqrt(s + eps) g;
    a = rho a + (1 - rho) d^2;  p -= lr d"""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check(lr, eps, weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, capturable=capturable, foreach=foreach,
                                      differentiable=differentiable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, rho, eps = group["lr"], group["rho"], group["eps"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    if not st:
                        st["step"] = Tensor._make(xp.zeros((), xp.float32))
                        st["square_avg"] = Tensor._make(xp.zeros_like(p._data))
                        st["acc_delta"] = Tensor._make(xp.zeros_like(p._data))
                    st["step"]._data += 1
                    s, a = st["square_avg"]._data, st["acc_delta"]._data
                    s *= rho
                    s += (1 - rho) * (g * g)
                    delta = xp.sqrt(a + eps) / xp.sqrt(s + eps) * g
                    a *= rho
                    a += (1 - rho) * (delta * delta)
                    p._data -= lr * delta
                    p._version_box().v += 1
        return loss

