"""Adadelta: steps scaled by running means of squared gradients and of squared steps (plain array
ops on numpy or CuPy; no fused kernel)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._weight_decay import _check, _grads
from .optimizer import Optimizer


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
