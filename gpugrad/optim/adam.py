"""Adam (L2 or decoupled weight decay, AMSGrad); AdamW, in ``adamw.py``, subclasses it."""
from __future__ import annotations

import numpy as np

from .. import _backend, kernels
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer


class Adam(Optimizer):
    """m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
    p -= lr m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps)
    (weight decay: g += wd p, or p *= 1 - lr wd when decoupled, as AdamW)"""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if not 0.0 <= lr:   # (NaN too)
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def step(self, closure=None):
        loss = self._closure(closure)
        state = self.state
        self._capture_check()
        with no_grad():
            for group in self.param_groups:
                lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
                wd, amsgrad = group["weight_decay"], group["amsgrad"]
                decoupled, maximize = group["decoupled_weight_decay"], group["maximize"]
                capturable = group["capturable"]
                by_step = {}   # step count -> tensors, one multi-tensor update each (CUDA)
                for p in group["params"]:
                    g = p._grad
                    if g is None:
                        continue
                    g = -g._data if maximize else g._data
                    st = state[p]
                    if not st:
                        _init_state(st, p._data, amsgrad, capturable)
                    step = st["step"]._data
                    step += 1   # a 0-d float32 array, as PyTorch keeps tensor(step)
                    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
                    if step.__class__ is not np.ndarray:   # capturable: the count lives on the GPU
                        _device_step(p._data, g, m, v, st.get("max_exp_avg_sq"), step, lr, b1,
                                     b2, eps, wd, decoupled)
                    elif amsgrad:
                        _amsgrad_step(p._data, g, m, v, st["max_exp_avg_sq"]._data, lr, b1, b2,
                                      eps, wd, int(step), decoupled)
                    else:
                        by_step.setdefault(int(step), []).append((p._data, g, m, v))
                    p._version_box().v += 1
                for step, tensors in by_step.items():
                    kernels.foreach(kernels.adam_step, tensors, lr, b1, b2, eps, wd, step,
                                    decoupled)
        return loss


    def _capture_check(self):
        """PyTorch's: a step captured into a CUDA graph must keep its count on the GPU
        (``capturable=True``), or every replay would repeat the step count of the capture."""
        if _backend.captures.count and _backend.capturing_here() and not all(
                g["capturable"] for g in self.param_groups):
            raise RuntimeError(f"Attempting CUDA graph capture of step() for an instance of "
                               f"{type(self).__name__} but param_groups' capturable is False.")


def _init_state(st, p, amsgrad, capturable=False):
    xp = _backend.xp_of(p)
    # the step count: on the host, unless the step is to be captured (on p's device, then)
    st["step"] = Tensor._make((xp if capturable else np).zeros((), np.float32))
    st["exp_avg"] = Tensor._make(xp.zeros_like(p))
    st["exp_avg_sq"] = Tensor._make(xp.zeros_like(p))
    if amsgrad:
        st["max_exp_avg_sq"] = Tensor._make(xp.zeros_like(p))


def _amsgrad_step(p, g, m, v, vmax, lr, b1, b2, eps, wd, step, decoupled):
    """Adam with v replaced by its running maximum (no fused kernel: plain array ops)."""
    xp = _backend.xp_of(p)
    kernels.adam_moments(p, g, m, v, lr, b1, b2, wd, decoupled)
    xp.maximum(vmax, v, out=vmax)
    kernels.adam_update(xp, p, m, vmax, lr, b1, b2, eps, step)


def _device_step(p, g, m, v, vmax, step, lr, b1, b2, eps, wd, decoupled):
    """Adam with the step count ``step`` on the device (capturable): the bias corrections are
    computed there, in float64 as the fused kernel forms them, so a replayed capture uses the
    count of each replay. Plain array operations: a capture runs them as one launch anyway."""
    xp = _backend.xp_of(p)
    kernels.adam_moments(p, g, m, v, lr, b1, b2, wd, decoupled)
    if vmax is not None:
        vmax = vmax._data
        xp.maximum(vmax, v, out=vmax)
        v = vmax
    t = step.astype(np.float64)
    step_size = (lr / (1 - xp.power(b1, t))).astype(p.dtype)
    bc2 = (1 - xp.power(b2, t)).astype(p.dtype)
    p -= step_size * m / (xp.sqrt(v / bc2) + p.dtype.type(eps))
