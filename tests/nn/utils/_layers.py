"""Layers with seeded float64 weights for the nn.utils tests."""
from __future__ import annotations

from conftest import tensor

from gpugrad import nn


def _linear(device, rng, out=3, inp=4):
    m = nn.Linear(inp, out).double().to(device)
    m.weight.data = tensor(rng.standard_normal((out, inp)), device)
    return m
