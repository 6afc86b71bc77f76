"""Fixtures of the optim tests: ``torch`` is PyTorch, or a skip where it is not installed."""
from __future__ import annotations

import pytest


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
