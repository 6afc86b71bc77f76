"""The weights-only allow-list: ``torch.serialization.add_safe_globals`` and its kin, and the
unpickler that builds a whole pickled object only from what it allows.

As in PyTorch >= 2.6, ``load`` builds by default only tensors, parameters, containers and plain
values; a pickled object naming any other global (a class, a function) is refused before that
global is looked up, unless the user listed it with ``add_safe_globals`` or inside
``with safe_globals([...])``, or asked for ``weights_only=False``. gpugrad's own format pickles
only what it cannot store as data (a whole model); PyTorch's zip layout is read by the reader in
``_serialization_torch``, which consults the same list.
"""
from __future__ import annotations

import builtins
import collections
import contextlib
import importlib
import io
import os
import pickle
import threading
import warnings

import numpy as np

__all__ = ["add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals"]

_allowed = []                 # what add_safe_globals listed: objects or (object, "module.name")
_scoped = threading.local()   # what the safe_globals context managers of this thread list


def add_safe_globals(safe_globals) -> None:
    """Allow ``load(weights_only=True)`` to build these globals (classes, functions), each given
    as the object or as ``(object, "module.name")`` to match a name it was pickled under."""
    _allowed.extend(_checked(safe_globals))


def get_safe_globals() -> list:
    """The globals ``add_safe_globals`` listed."""
    return list(_allowed)


def clear_safe_globals() -> None:
    """Forget the globals ``add_safe_globals`` listed."""
    _allowed.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Allow these globals in ``load(weights_only=True)`` inside the ``with`` block only."""
    stack = _scoped.__dict__.setdefault("stack", [])
    stack.append(_checked(safe_globals))
    try:
        yield
    finally:
        stack.pop()


def _checked(entries):
    entries = list(entries)
    for e in entries:
        ok = (isinstance(e, tuple) and len(e) == 2 and isinstance(e[1], str)) or callable(e)
        if not ok:
            raise TypeError(f"safe_globals: expected a class or function, or a tuple "
                            f"(object, 'module.name'), got {e!r}")
    return entries


def _by_name() -> dict:
    """Every allowed global by the name a pickle would give it."""
    names = {}
    for e in _allowed + [e for scope in getattr(_scoped, "stack", []) for e in scope]:
        if isinstance(e, tuple):
            names[e[1]] = e[0]
        else:
            names[f"{e.__module__}.{e.__qualname__}"] = e
    return names


def refusal(module, name) -> str:
    """PyTorch's message for a global the allow-list does not hold."""
    glob = f"{module}.{name}"
    return (
        "Weights only load failed. This file can still be loaded, to do so you have two options, "
        "do those steps only if you trust the source of the checkpoint. \n\t(1) Re-running "
        "`torch.load` with `weights_only` set to `False` will likely succeed, but it can result "
        "in arbitrary code execution. Do it only if you got the file from a trusted source.\n\t"
        "(2) Alternatively, to load with `weights_only=True` please check the recommended steps "
        "in the following error message.\n\tWeightsUnpickler error: Unsupported global: GLOBAL "
        f"{glob} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{glob}])` or the "
        f"`torch.serialization.safe_globals([{glob}])` context manager to allowlist this global "
        "if you trust this class/function.")


def allowed(module, name, moved=None):
    """The allow-listed object pickled as ``module.name``, or None. ``moved`` maps an old
    gpugrad module path to the modules its classes live in now (only gpugrad's own modules are
    imported to look a name up, and the object found must itself be allow-listed)."""
    names = _by_name()
    found = names.get(f"{module}.{name}")
    if found is not None or not moved or module not in moved:
        return found
    listed = {id(v) for v in names.values()}
    for home in moved[module]:
        obj = getattr(importlib.import_module(home), name, None)
        if obj is not None and id(obj) in listed:
            return obj
    return None


def _numeric_dtype(*args):
    dt = np.dtype(*args)
    if dt.kind not in "biufc" or dt.hasobject or dt.fields is not None or dt.subdtype is not None:
        raise pickle.UnpicklingError(f"Weights only load failed: dtype {dt} is not numeric data")
    return dt


def _frombuffer(buf, dtype, shape, order):
    """numpy's rebuilder of a pickled array (protocol 5), for numeric dtypes only."""
    return np.frombuffer(buf, dtype=_numeric_dtype(dtype)).reshape(shape, order=order)


def _defaults() -> dict:
    """What a pickled gpugrad model is built from, allowed without a list, as PyTorch allows its
    tensor rebuilders and containers: tensors, parameters (numeric arrays only), containers and
    plain values. No global here runs code of the file's choosing."""
    from .nn.modules.module import _Registry  # layering: the class a pickled Module holds
    from .nn.parameter import _rebuild_parameter  # layering: a pickled Parameter's rebuilder
    from .tensor import _rebuild
    found = {
        "gpugrad.tensor._rebuild": _rebuild,
        "gpugrad.nn.parameter._rebuild_parameter": _rebuild_parameter,
        "gpugrad.nn.modules.module._Registry": _Registry,
        "collections.OrderedDict": collections.OrderedDict,
        "numpy.dtype": _numeric_dtype,
        "numpy._core.numeric._frombuffer": _frombuffer,
        "numpy.core.numeric._frombuffer": _frombuffer,
    }
    for name in ("set", "frozenset", "complex", "slice", "bytearray", "int", "float", "bool",
                 "dict", "list", "tuple"):
        found[f"builtins.{name}"] = getattr(builtins, name)
    return found


class Unpickler(pickle.Unpickler):
    """Builds a pickled object from the default globals and the allow-listed ones only; any
    other global is refused by name before it is imported."""

    def __init__(self, fh, moved=None):
        super().__init__(fh)
        self.defaults, self.moved = _defaults(), moved

    def find_class(self, module, name):
        found = self.defaults.get(f"{module}.{name}")
        if found is None:
            found = allowed(module, name, self.moved)
        if found is None:
            raise pickle.UnpicklingError(refusal(module, name))
        return found


def loads(data: bytes, moved=None):
    return Unpickler(io.BytesIO(data), moved).load()


_TRUE = ("1", "y", "yes", "true")


def resolve_weights_only(weights_only):
    """``load``'s ``weights_only`` as PyTorch settles it: None means True;
    ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` forces True even over an explicit False;
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` makes it False only when the caller did not pass it
    (with a warning); both set is an error."""
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if weights_only is None:
        if force_no:
            warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                          "the `weights_only` argument was not explicitly passed to `torch.load`, "
                          "forcing weights_only=False.", UserWarning, stacklevel=3)
            return False
        return True
    return bool(weights_only)
