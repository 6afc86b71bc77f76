"""Adagrad: per-parameter step sizes from the sum of squared gradients (plain array ops on numpy
or CuPy; no fused kernel)."""
from __future__ import annotations

from .. import _backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._weight_decay import _check, _grads
from .optimizer import Optimizer


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
