"""RMSprop: per-parameter step sizes from a running mean of squared gradients (plain array ops on
numpy or CuPy; no fused kernel)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._weight_decay import _check, _grads
from .optimizer import Optimizer


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
