"""``cupy.random``: numpy's streams behind CuPy's (smaller) API."""
from __future__ import annotations

import inspect
import types

import numpy as np

from ._array import check_call, unwrap, wrap


class _Generator:
    """``cupy.random.Generator``: only the methods CuPy's has, with CuPy's signatures."""

    def __init__(self, seed=None):
        self._g = np.random.default_rng(seed)


def _method(name, sig):
    seen = set()

    def method(self, *args, **kw):
        check_call(sig, seen, f"cupy.random.Generator.{name}", (self,) + args, kw)
        kw = {k: v for k, v in kw.items() if k != "method"}
        if name == "uniform" and "dtype" in kw:     # numpy's uniform has no dtype
            dtype = kw.pop("dtype")
            return wrap(self._g.uniform(*unwrap(args), **unwrap(kw)).astype(dtype))
        if name == "beta" and "dtype" in kw:
            dtype = kw.pop("dtype")
            return wrap(self._g.beta(*unwrap(args), **unwrap(kw)).astype(dtype))
        return wrap(getattr(self._g, name)(*unwrap(args), **unwrap(kw)))
    method.__name__ = name
    return method


def _legacy(fn):
    return lambda *a, **k: wrap(np.asarray(fn(*unwrap(a), **unwrap(k))))


def build(real_random):
    for name in dir(real_random.Generator):
        if not name.startswith("_"):
            setattr(_Generator, name,
                    _method(name, inspect.signature(getattr(real_random.Generator, name))))
    mod = types.ModuleType("cupy.random")
    mod.Generator = _Generator
    mod.default_rng = lambda seed=None: _Generator(seed)
    legacy = np.random.RandomState(0)
    for name in dir(real_random):
        fn = getattr(legacy, name, None)
        if not name.startswith("_") and callable(fn) and not hasattr(mod, name):
            setattr(mod, name, _legacy(fn))
    mod.seed = legacy.seed
    mod.rand = lambda *shape, dtype=float: wrap(np.asarray(legacy.random_sample(shape),
                                                           dtype))
    mod.randn = lambda *shape, dtype=float: wrap(np.asarray(legacy.standard_normal(shape),
                                                            dtype))
    return mod
