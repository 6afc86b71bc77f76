"""PyTorch's error messages in the autograd tests: ``first`` builds a ``match=`` pattern for a
message's start, and the message of a second backward through a freed graph."""
from __future__ import annotations

import re

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


def first(sentence: str) -> str:
    """A ``match=`` pattern: the message starts with ``sentence``, verbatim."""
    return "^" + re.escape(sentence)
