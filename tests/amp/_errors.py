"""PyTorch's error messages in the amp tests: ``raises`` expects a message, whole and verbatim."""
from __future__ import annotations

import re

import pytest


def raises(kind, message):
    return pytest.raises(kind, match="^" + re.escape(message) + "$")
