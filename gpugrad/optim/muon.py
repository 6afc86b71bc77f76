"""Muon (momentum, then the update orthogonalized by Newton-Schulz iterations; 2-D parameters
only)."""
from __future__ import annotations

import math

from .. import _backend
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["Muon"]

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(xp, x):
    """float32 ``x`` rounded to the nearest bfloat16 (ties to even), kept as float32: PyTorch
    runs the Newton-Schulz iterations in bfloat16."""
    u = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    u = (u + (xp.uint32(0x7FFF) + ((u >> 16) & 1))) & xp.uint32(0xFFFF0000)
    return u.view(xp.float32)


def zeropower_via_newtonschulz(xp, g, ns_coefficients, ns_steps, eps):
    """An approximate U V^T of g = U S V^T: X = g / |g|_F, then ns_steps of
    X <- a X + (b A + c A^2) X with A = X X^T (quintic Newton-Schulz, in bfloat16)."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if g.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = g.shape[0] > g.shape[1]
    x = _bf16(xp, g.T if tall else g)
    norm = _bf16(xp, xp.sqrt(xp.sum(x.astype(xp.float64) ** 2)).astype(xp.float32))
    x = _bf16(xp, x / xp.maximum(norm, _bf16(xp, xp.float32(eps))))
    for _ in range(ns_steps):
        gram = _bf16(xp, x @ x.T)
        poly = _bf16(xp, b * gram + c * (gram @ gram))
        x = _bf16(xp, a * x + poly @ x)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, shape):
    """lr scaled so updates of any matrix shape have a similar RMS: sqrt(max(1, A / B))
    (Keller Jordan's original) or 0.2 sqrt(max(A, B)) (Moonshot's, to match AdamW)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


def _fma(xp, a, w, b):
    """a + w b rounded once, as PyTorch's fused kernels do, with w in a's dtype (emulated in
    float64 for float32; plain for float64)."""
    w = float(a.dtype.type(w))
    return (a + w * b.astype(xp.float64)).astype(a.dtype, copy=False)


def _lerp(xp, start, end, w):
    """PyTorch's lerp: start + w (end - start) for w < 0.5, else end - (1 - w) (end - start)."""
    w = float(start.dtype.type(w))
    return _fma(xp, start, w, end - start) if w < 0.5 else _fma(xp, end, -(1 - w), end - start)


class Muon(Optimizer):
    """buf = lerp(buf, g, 1 - momentum);  u = lerp(g, buf, momentum) if nesterov else buf;
    p *= 1 - lr wd;  p -= adjusted lr * NS(u)"""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        super().__init__(params, dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                                      nesterov=nesterov, ns_coefficients=ns_coefficients,
                                      eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn))
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def step(self, closure=None):
        loss = self._closure(closure)
        with no_grad():
            for group in self.param_groups:
                lr, wd, momentum = float(group["lr"]), group["weight_decay"], group["momentum"]
                for p in group["params"]:
                    if p._grad is None:
                        continue
                    if p.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    g = p._grad._data
                    if g.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    xp = _backend.xp_of(g)
                    st = self.state[p]
                    if "momentum_buffer" not in st:
                        st["momentum_buffer"] = Tensor._make(xp.zeros_like(g))
                    buf = st["momentum_buffer"]._data
                    buf[...] = _lerp(xp, buf, g, 1 - momentum)
                    u = _lerp(xp, g, buf, momentum) if group["nesterov"] else buf
                    u = zeropower_via_newtonschulz(xp, u, group["ns_coefficients"],
                                                   group["ns_steps"], group["eps"])
                    p._data *= 1 - lr * wd
                    p._data[...] = _fma(xp, p._data, -_adjust_lr(lr, group["adjust_lr_fn"],
                                                                 p.shape), u)
                    p._version_box().v += 1
        return loss
