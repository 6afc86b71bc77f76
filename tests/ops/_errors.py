"""PyTorch's error messages in the ops tests: ``raises`` asserts a message's start, verbatim."""
from __future__ import annotations

import re

import pytest


def raises(kind, message, call):
    with pytest.raises(kind, match="^" + re.escape(message)):
        call()
