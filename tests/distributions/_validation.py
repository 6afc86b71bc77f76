"""The distributions tests' fixture that restores the class-wide argument validation default."""
from __future__ import annotations

import pytest

from gpugrad import distributions as D


@pytest.fixture(autouse=True)
def _default_validation():
    """Validation is a class-wide default: a test that turns it off must not leak."""
    saved = D.Distribution._validate_args
    yield
    D.Distribution._validate_args = saved
