"""``skip_init``: build a module without running its parameter initialisation."""
from __future__ import annotations

import contextlib
import inspect

from .. import init as _init
from ..modules.module import Module


@contextlib.contextmanager
def _no_init():
    """Every in-place initialiser of ``nn.init`` returns its tensor untouched."""
    saved = {n: f for n, f in vars(_init).items() if n.endswith("_") and not n.startswith("_")
             and callable(f)}
    try:
        for name in saved:
            setattr(_init, name, lambda tensor, *args, **kwargs: tensor)
        yield
    finally:
        for name, f in saved.items():
            setattr(_init, name, f)


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters left uninitialised (their values are
    arbitrary until you fill them). PyTorch builds the module on the meta device; here the
    ``nn.init`` initialisers are disabled while it is built."""
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    with _no_init():
        return module_cls(*args, **kwargs)
