"""The seed graphs that the viz tests draw: seed 000 (x used twice) and (a + b + c) / (x * y)."""
from __future__ import annotations

import gpugrad


def seed_xy(device="cpu"):
    """Seed 000: out = x * y + x (x is used twice)."""
    x = gpugrad.tensor([2.0], requires_grad=True, device=device)
    y = gpugrad.tensor([3.0], requires_grad=True, device=device)
    return x * y + x, {"x": x, "y": y}


def seed_abc():
    """(a + b + c) / (x * y)."""
    a, b, c = (gpugrad.tensor([1.0, 2.0], requires_grad=True) for _ in range(3))
    x = gpugrad.tensor([2.0], requires_grad=True)
    y = gpugrad.tensor([3.0], requires_grad=True)
    return (a + b + c) / (x * y), dict(a=a, b=b, c=c, x=x, y=y)
