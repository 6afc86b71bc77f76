"""Rprop (plain array ops on numpy or CuPy, in PyTorch's order of operations, so float64 runs
match it to rounding)."""
from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._scalar_state import _grads, _lr, _scalar_dtype
from .optimizer import Optimizer


class Rprop(Optimizer):
    """Resilient backpropagation: each entry's step size grows by etaplus while its gradient
    keeps its sign and shrinks by etaminus when the sign flips (clamped to step_sizes);
    p -= sign(g) step, with g taken as 0 right after a flip."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        super().__init__(params, dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable,
                                      capturable=capturable))

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                (etaminus, etaplus), (smin, smax) = group["etas"], group["step_sizes"]
                for p, g, xp in _grads(group):
                    st = self.state[p]
                    if not st:
                        st["step"] = Tensor._make(xp.zeros((), _scalar_dtype()))
                        st["prev"] = Tensor._make(xp.zeros_like(p._data))
                        st["step_size"] = Tensor._make(xp.full_like(g, float(group["lr"])))
                    st["step"]._data += 1
                    prev, size = st["prev"]._data, st["step_size"]._data
                    sign = xp.sign(g * prev)
                    flipped = sign < 0
                    factor = xp.where(sign > 0, etaplus, xp.where(
                        flipped, etaminus, xp.where(sign == 0, 1.0, sign))).astype(g.dtype)
                    size *= factor
                    xp.clip(size, smin, smax, out=size)
                    g = xp.where(flipped, 0, g).astype(g.dtype, copy=False)
                    p._data -= xp.sign(g) * size
                    prev[...] = g
                    p._version_box().v += 1
        return loss
