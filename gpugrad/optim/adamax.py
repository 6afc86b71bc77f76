"""Adamax: Adam with an infinity norm in place of the second moment (plain array ops on numpy or
CuPy, in PyTorch's order of operations, so float64 runs match it to rounding)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ._adam_state import _betas, _state
from ._weight_decay import _check, _grads
from .optimizer import Optimizer


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
