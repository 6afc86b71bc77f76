"""ASGD, averaged SGD (plain array ops on numpy or CuPy, in PyTorch's order of operations, so
float64 runs match it to rounding)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._scalar_state import _grads, _lr, _scalar_dtype
from .optimizer import Optimizer


class ASGD(Optimizer):
    """Averaged SGD: p = p (1 - lambd eta) - eta g, ax averages p from step t0 on
    (ax += (p - ax) mu); eta = lr / (1 + lambd lr t)^alpha, mu = 1 / max(1, t - t0)."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, lambd, alpha, t0 = (float(group["lr"]), group["lambd"], group["alpha"],
                                        group["t0"])
                wd = group["weight_decay"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    if not st:
                        dt = _scalar_dtype()
                        st["step"] = Tensor._make(xp.zeros((), dt))
                        st["eta"] = Tensor._make(xp.full((), lr, dt))
                        st["mu"] = Tensor._make(xp.ones((), dt))
                        st["ax"] = Tensor._make(xp.zeros_like(p._data))
                    st["step"]._data += 1
                    if wd != 0:
                        g = g + wd * p._data
                    eta = float(st["eta"]._data)
                    p._data *= 1 - lambd * eta
                    p._data -= eta * g
                    mu, ax = float(st["mu"]._data), st["ax"]._data
                    if mu != 1:
                        ax += (p._data - ax) * mu
                    else:
                        ax[...] = p._data
                    step = float(st["step"]._data)
                    st["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** alpha)
                    st["mu"]._data[...] = 1 / max(1, step - t0)
                    p._version_box().v += 1
        return loss
