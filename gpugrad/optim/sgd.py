"""Stochastic gradient descent with momentum, dampening, Nesterov and weight decay."""
from __future__ import annotations

from .. import _backend, kernels
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


class SGD(Optimizer):
    """d = g + wd p;  buf = d (first step) or momentum buf + (1 - dampening) d;
    p -= lr (d + momentum buf if nesterov else buf)   (buf = d without momentum)"""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def step(self, closure=None):
        loss = self._closure(closure)
        state = self.state
        with no_grad():
            for group in self.param_groups:
                lr, momentum, wd = group["lr"], group["momentum"], group["weight_decay"]
                dampening, nesterov = group["dampening"], group["nesterov"]
                maximize = group["maximize"]
                for p in group["params"]:
                    g = p._grad
                    if g is None:
                        continue
                    g = -g._data if maximize else g._data
                    if momentum:
                        st = state[p]
                        buf = st.get("momentum_buffer")
                        first = buf is None
                        if first:
                            buf = st["momentum_buffer"] = Tensor._make(
                                _backend.xp_of(g).empty_like(g))
                        kernels.sgd_step(p._data, g, buf._data, lr, momentum, dampening, wd,
                                         nesterov, first)
                    else:
                        kernels.sgd_step(p._data, g, None, lr, 0.0, 0.0, wd, False, False)
                    p._version_box().v += 1
        return loss
