"""PyTorch's refusals of arithmetic on bool tensors that numpy would compute (``mask - 1``,
``-mask``), and its dtype checks for ops defined only on some dtypes."""
from __future__ import annotations

import numpy as np

_MASK_HINT = "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
TWO_BOOLS = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
             "or `logical_xor()` operator instead.")
ONE_BOOL = f"Subtraction, the `-` operator, with a bool tensor is not supported. {_MASK_HINT}"
NEG_BOOL = f"Negation, the `-` operator, on a bool tensor is not supported. {_MASK_HINT}"
ROUNDING_MODES = (None, "trunc", "floor")
_BOOL = np.dtype(np.bool_)   # numpy's builtin dtypes are singletons: ``is`` is exact, and cheap


def _is_bool(v) -> bool:
    # runs on every subtraction: an identity test, not a dtype comparison
    return v.__class__ is bool or getattr(v, "dtype", None) is _BOOL


def check_sub(x, y):
    """Raise PyTorch's error for a subtraction with a bool operand (a Python bool counts)."""
    bx, by = _is_bool(x), _is_bool(y)
    if bx or by:
        raise RuntimeError(TWO_BOOLS if bx and by else ONE_BOOL)


def check_neg(x):
    if x.dtype is _BOOL:
        raise RuntimeError(NEG_BOOL)


def check_rounding_mode(mode):
    if mode not in ROUNDING_MODES:
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{mode}'")
