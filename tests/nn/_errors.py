"""Expecting an error whose message contains the given text."""
from __future__ import annotations

import re

import pytest


def _raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


def raises(kind, message):
    return pytest.raises(kind, match=re.escape(message))
