"""Expecting an error whose message is exactly the given text."""
from __future__ import annotations

import pytest


def _raises(kind, message):
    return pytest.raises(kind, match="^" + __import__("re").escape(message) + "$")
