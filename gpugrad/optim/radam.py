"""RAdam: Adam with its adaptive step rectified (plain array ops on numpy or CuPy, in PyTorch's
order of operations, so float64 runs match it to rounding)."""
from __future__ import annotations

import math

from ..autograd.grad_mode import no_grad
from ._adam_state import _betas, _moments, _state
from ._weight_decay import _check, _decayed
from .optimizer import Optimizer


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
