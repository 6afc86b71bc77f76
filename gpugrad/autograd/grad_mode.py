"""Grad modes: whether ops record the graph; thread-local, restored on exit even on errors."""
from __future__ import annotations

import functools
import threading


class _State(threading.local):
    enabled = True
    inference = False


state = _State()


def is_grad_enabled() -> bool:
    return state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator, with or without
    parentheses (``@no_grad()`` and ``@no_grad``)."""
    _target = True

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):  # bare ``@no_grad``
            return cls()(args[0])
        return super().__new__(cls)

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = self._target
        return self

    def __exit__(self, *exc):
        state.enabled = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Mode):
    """Ops inside do not record the graph: outputs have ``requires_grad=False``."""
    _target = False


class enable_grad(_Mode):
    _target = True


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` switches recording off at once; as a context manager or
    decorator it also restores the previous mode on exit."""

    def __init__(self, mode: bool):
        self._prev = state.enabled
        self._target = bool(mode)
        state.enabled = self._target

    def __enter__(self):
        return self

    def __call__(self, fn):
        state.enabled = self._prev  # used as a decorator: do not leave the mode switched
        mode = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


class inference_mode(_Mode):
    """Like ``no_grad``; tensors made inside report ``is_inference()``."""

    def __init__(self, mode: bool = True):
        self._mode = bool(mode)

    def __enter__(self):
        self._prev, self._prev_inf = state.enabled, state.inference
        if self._mode:
            state.enabled, state.inference = False, True
        return self

    def __exit__(self, *exc):
        state.enabled, state.inference = self._prev, self._prev_inf
        return False

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper
