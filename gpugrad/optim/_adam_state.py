"""The state of Adamax, NAdam and RAdam: betas checked, the buffers created on the first step and
the step counted, Adam's moments updated in place."""
from __future__ import annotations

from ..tensor import Tensor


def _betas(betas):
    for i in (0, 1):
        if not 0.0 <= betas[i] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
    return tuple(betas)


def _state(st, p, xp, *names, **scalars):
    """Create a parameter's state on its first step: ``step`` and the named buffers."""
    if not st:
        st["step"] = Tensor._make(xp.zeros((), xp.float32))
        for name, value in scalars.items():
            st[name] = Tensor._make(xp.full((), value, xp.float32))
        for name in names:
            st[name] = Tensor._make(xp.zeros_like(p._data))
    st["step"]._data += 1
    return float(st["step"]._data)


def _moments(st, g, b1, b2):
    """Adam's moments, updated in place: m = b1 m + (1 - b1) g (as PyTorch's lerp),
    v = b2 v + (1 - b2) g^2."""
    m, v = st["exp_avg"]._data, st["exp_avg_sq"]._data
    m += (g - m) * (1 - b1)
    v *= b2
    v += (1 - b2) * (g * g)
    return m, v
