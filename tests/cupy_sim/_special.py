"""``cupyx`` and ``cupyx.scipy.special``, run by scipy (absent scipy: erf and erfc only)."""
from __future__ import annotations

import types

import numpy as np

from . import _capture
from ._array import captured, ndarray, unwrap, wrap


def build():
    import cupyx.scipy.special as real
    mod = types.ModuleType("cupyx.scipy.special")
    try:
        import scipy.special as host
    except ImportError:   # without scipy, the two functions gpugrad calls, from math
        import math
        def elementwise(f):
            return lambda x: np.vectorize(f, otypes=[np.asarray(x).dtype])(x)
        host = types.SimpleNamespace(erf=elementwise(math.erf), erfc=elementwise(math.erfc))
    for name in dir(real):
        fn = getattr(host, name, None)
        if not name.startswith("_") and callable(fn):
            setattr(mod, name, _device_only(fn, name))
    return mod


def _device_only(fn, name):
    def call(*args, **kw):
        for a in args:
            if isinstance(a, (np.ndarray, list)):
                raise TypeError(f"Unsupported type {type(a)}")
        np_args, np_kw = unwrap(args), unwrap(kw)
        if _capture.ACTIVE:
            return captured(f"special.{name}", fn, np_args, np_kw,
                            _capture.arrays_in(np_kw.get("out")))
        return wrap(fn(*np_args, **np_kw))
    call.__name__ = name
    return call


def cupyx():
    mod = types.ModuleType("cupyx")
    mod.empty_pinned = lambda shape, dtype=float, order="C": np.empty(shape, dtype, order)
    mod.zeros_pinned = lambda shape, dtype=float, order="C": np.zeros(shape, dtype, order)
    mod.empty_like_pinned = lambda a, dtype=None: np.empty(a.shape, dtype or a.dtype)

    def scatter_add(a, slices, value):
        if not isinstance(a, ndarray):
            raise TypeError(f"Unsupported type {type(a)}")
        a.scatter_add(slices, value)
    mod.scatter_add = scatter_add
    return mod
