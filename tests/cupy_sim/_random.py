"""``cupy.random``: numpy's streams behind CuPy's (smaller) API.

During a capture the two halves differ as in CuPy (cupy/random/_generator.py,
_generator_api.pyx): the legacy functions that call cuRAND's host API are refused (cuRAND's
``setStream``); the legacy ones that run CuPy's own kernels take their seed on the host at the
call, so the graph draws the same numbers at every launch; ``default_rng()``'s generators keep
their state on the device, so each launch draws new numbers (and the capture itself does not
advance the state).
"""
from __future__ import annotations

import inspect
import types

import numpy as np

from . import _capture
from ._array import check_call, unwrap, wrap

# RandomState methods that reach cuRAND: directly, or through random_sample / normal /
# randint / permutation (the others are CuPy kernels seeded from the host)
CURAND = frozenset((
    "bytes", "choice", "exponential", "gumbel", "laplace", "lognormal", "multinomial",
    "multivariate_normal", "normal", "pareto", "permutation", "power", "rand", "randint",
    "randn", "random", "random_integers", "random_sample", "ranf", "rayleigh", "sample",
    "shuffle", "standard_cauchy", "standard_exponential", "standard_normal", "tomaxint",
    "triangular", "uniform", "wald", "weibull"))


class _Generator:
    """``cupy.random.Generator``: only the methods CuPy's has, with CuPy's signatures."""

    def __init__(self, seed=None):
        self._g = np.random.default_rng(seed)

    def _keep_state(self, seq):
        """The capture does not run the draw: the state goes back when it ends."""
        bits = self._g.bit_generator
        seq.keep(self, lambda: bits.state, lambda state: setattr(bits, "state", state))


def _record_draw(seq, name, draw):
    raw = draw()
    out = wrap(raw)
    _capture.record(seq, name, draw, (), {}, raw, out, ())
    return out


def _method(name, sig):
    seen = set()

    def method(self, *args, **kw):
        check_call(sig, seen, f"cupy.random.Generator.{name}", (self,) + args, kw)
        kw = {k: v for k, v in kw.items() if k != "method"}
        np_args, np_kw = unwrap(args), unwrap(kw)
        fn = getattr(self._g, name)
        dtype = np_kw.pop("dtype", None) if name in ("uniform", "beta") else None

        def draw():        # numpy's uniform and beta have no dtype
            out = fn(*np_args, **np_kw)
            return out if dtype is None else out.astype(dtype)
        if _capture.ACTIVE:
            seq = _capture.recording()
            if seq is not None:
                self._keep_state(seq)
                return _record_draw(seq, f"random.Generator.{name}", draw)
        return wrap(draw())
    method.__name__ = name
    return method


def _legacy(name, fn):
    def call(*a, **k):
        np_a, np_k = unwrap(a), unwrap(k)
        if _capture.ACTIVE:
            if name in CURAND:
                _capture.refuse_library("cuRAND")
            seq = _capture.recording()
            if seq is not None:
                seed = int(fn.__self__.randint(2 ** 31))

                def draw():
                    return np.asarray(getattr(np.random.RandomState(seed), name)(*np_a, **np_k))
                return _record_draw(seq, f"random.{name}", draw)
        return wrap(np.asarray(fn(*np_a, **np_k)))
    call.__name__ = name
    return call


def _sized(name, draw):
    """``rand`` and ``randn``: cuRAND."""
    def call(*shape, dtype=float):
        if _capture.ACTIVE:
            _capture.refuse_library("cuRAND")
        return wrap(np.asarray(draw(shape), dtype))
    call.__name__ = name
    return call


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
            setattr(mod, name, _legacy(name, fn))
    mod.seed = legacy.seed       # host state only: allowed during a capture, as in CuPy
    mod.rand = _sized("rand", legacy.random_sample)
    mod.randn = _sized("randn", legacy.standard_normal)
    return mod
