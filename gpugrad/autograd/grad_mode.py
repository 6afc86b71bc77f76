"""Grad modes: whether ops record the graph; thread-local, restored on exit even on errors.

``state.enabled`` is what ops read: record the graph now. It is the grad mode, except inside
``inference_mode()``, where nothing records even under ``enable_grad()``; there the grad mode
that ``is_grad_enabled()`` reports is kept in ``state.grad``."""
from __future__ import annotations

import functools
import inspect
import threading


class _State(threading.local):
    enabled = True     # ops record the graph (grad mode on and not in inference mode)
    grad = True        # the grad mode, read only while in inference mode
    inference = False


state = _State()


class _ForwardAD:
    """Whether a forward-AD dual level is open (``autograd.forward_ad`` opens and closes it):
    every op reads it to know whether its outputs carry tangents, so it lives here, below the
    ops, and not in forward_ad, which runs the ops' derivative rules above them."""
    level = None   # the open level (forward_ad._Level) or None


forward_ad_state = _ForwardAD()


def is_grad_enabled() -> bool:
    return state.grad if state.inference else state.enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


def _set(grad: bool, inference: bool) -> None:
    state.grad, state.inference = grad, inference
    state.enabled = grad and not inference


def _decorate(make, fn):
    """``fn`` run under a fresh mode from ``make()`` on every call; a generator function gets
    the mode on every resume (``next``, ``send``, ``throw``, ``close``), and its caller keeps
    its own mode in between."""
    if not inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with make():
                return fn(*args, **kwargs)
        return wrapper

    @functools.wraps(fn)
    def gen_wrapper(*args, **kwargs):
        gen = fn(*args, **kwargs)
        sent, exc = None, None
        while True:
            try:
                with make():
                    value = gen.send(sent) if exc is None else gen.throw(exc)
            except StopIteration as stop:
                return stop.value
            sent, exc = None, None
            try:
                sent = yield value
            except GeneratorExit:
                with make():
                    gen.close()
                raise
            except BaseException as e:  # thrown in by the caller: hand it on under the mode
                exc = e
    return gen_wrapper


class _Mode:
    """Base of the grad-mode context managers; each also works as a decorator, with or without
    parentheses (``@no_grad()`` and ``@no_grad``)."""
    _target = True

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):  # bare ``@no_grad``
            return cls()(args[0])
        return super().__new__(cls)

    def __enter__(self) -> None:
        self.prev = is_grad_enabled()
        _set(self._target, state.inference)

    def __exit__(self, *exc):
        _set(self.prev, state.inference)
        return False

    def clone(self):
        """A fresh, unentered instance of the same mode."""
        return self.__class__()

    def __call__(self, fn):
        return _decorate(self.clone, fn)


class no_grad(_Mode):
    """Ops inside do not record the graph: outputs have ``requires_grad=False``."""
    _target = False


class enable_grad(_Mode):
    """Ops inside record the graph again (except in ``inference_mode()``, which still wins)."""
    _target = True


class set_grad_enabled(_Mode):
    """``set_grad_enabled(False)`` switches recording off at once; as a context manager or
    decorator it also restores the previous mode on exit."""

    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, mode: bool):
        if not isinstance(mode, bool):
            kind = type(mode)
            name = kind.__name__ if kind.__module__ == "builtins" else \
                f"{kind.__module__}.{kind.__name__}"
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {name}")
        self.prev = is_grad_enabled()
        self.mode = mode
        _set(mode, state.inference)

    def __enter__(self) -> None:
        _set(self.mode, state.inference)

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, fn):
        _set(self.prev, state.inference)  # used as a decorator: do not leave the mode switched
        return _decorate(self.clone, fn)


class inference_mode(_Mode):
    """Like ``no_grad``, and tensors made inside report ``is_inference()``; nothing records
    inside, even under ``enable_grad()``. ``inference_mode(False)`` leaves inference mode and
    switches grad mode on."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self.prev = (is_grad_enabled(), state.inference)
        _set(not self.mode, self.mode)

    def __exit__(self, *exc):
        _set(*self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)
