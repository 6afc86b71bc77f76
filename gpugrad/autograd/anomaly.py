"""Anomaly detection: remember where each node was created, name it on failure, check NaNs."""
from __future__ import annotations

import threading
import traceback
import warnings


class _State(threading.local):
    enabled = False
    check_nan = True


_state = _State()


def is_enabled() -> bool:
    return _state.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _state.enabled and _state.check_nan


class set_detect_anomaly:
    """Switch anomaly detection on or off; also a context manager restoring the previous mode."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False


class detect_anomaly:
    """Context manager: nodes record the forward stack; a failing backward names its node and
    prints where it was created; a node returning NaN raises at once."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = True, self.check_nan
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self._prev
        return False


def record(node) -> None:
    """Called for every new node while anomaly mode is on."""
    from .graph import _OWN_CODE, creation_site
    stack = traceback.extract_stack()
    while stack and stack[-1].filename.startswith(_OWN_CODE):  # end at the user's call
        stack.pop()
    ex = node._x()
    ex["stack"] = "".join(traceback.format_list(stack))
    ex["site"] = creation_site()


def report(node) -> None:
    """Warn with the forward stack of ``node`` (the engine calls it when its backward fails)."""
    stack = node._extra.get("stack") if node._extra else None
    msg = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
    warnings.warn(msg + (stack or "  (the node was created before anomaly mode was enabled)\n"),
                  stacklevel=3)


def check_nan(node, grads) -> None:
    for i, g in enumerate(grads):
        if g is None:
            continue
        a = getattr(g, "_data", g)
        xp = type(a).__module__.split(".")[0]
        if xp in ("numpy", "cupy") and a.dtype.kind == "f" and bool((a != a).any()):
            report(node)   # PyTorch warns with the forward stack first, then raises
            site = node._creation()  # ', created at file:line'
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output."
                               + (f" ({site[2:]})" if site else ""))
