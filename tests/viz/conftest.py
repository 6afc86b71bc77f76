"""Fixtures of the viz tests: a 100,000-deep chain, built once per test module."""
from __future__ import annotations

import pytest

import gpugrad


@pytest.fixture(scope="module")
def chain():
    x = gpugrad.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    return x, y
