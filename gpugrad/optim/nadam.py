"""NAdam: Adam with Nesterov momentum and a momentum schedule (plain array ops on numpy or CuPy,
in PyTorch's order of operations, so float64 runs match it to rounding)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ._adam_state import _betas, _moments, _state
from ._weight_decay import _check, _decayed
from .optimizer import Optimizer


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
