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
                plain, first, later = [], [], []   # one multi-tensor update each (CUDA)
                for p in group["params"]:
                    g = p._grad
                    if g is None:
                        continue
                    g = -g._data if maximize else g._data
                    if momentum:
                        st = state[p]
                        buf = st.get("momentum_buffer")
                        if buf is None:
                            buf = st["momentum_buffer"] = Tensor._make(
                                _backend.xp_of(g).empty_like(g))
                            first.append((p._data, g, buf._data))
                        else:
                            later.append((p._data, g, buf._data))
                    else:
                        plain.append((p._data, g, None))
                    p._version_box().v += 1
                kernels.foreach(kernels.sgd_step, plain, lr, 0.0, 0.0, wd, False, False)
                for tensors, is_first in ((first, True), (later, False)):
                    kernels.foreach(kernels.sgd_step, tensors, lr, momentum, dampening, wd,
                                    nesterov, is_first)
        return loss
