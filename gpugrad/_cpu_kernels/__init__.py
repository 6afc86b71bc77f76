"""Fused kernels compiled for the CPU: the CPU's counterpart of ``kernels/*.cu``.

A kernel's numpy reference (``gpugrad/kernels.py``) runs one numpy call per step of its formula,
each a pass over memory and a few microseconds of call: fine for large arrays, the whole cost
for the small ones of a recurrent step or a model's per-parameter update. The kernels here are
the same formulas as one loop, compiled to vector code by numba (LLVM) on first use and cached
on disk (``cache=True``: later processes load them in milliseconds). ``kernels.py`` calls one
where it exists and applies; everything else, and every call it declines (another dtype, a
layout it does not take), runs the numpy reference as before.

The pure-arithmetic kernels (the backward cells, the optimizer steps, most backward formulas
and regions) serve float32 and float64 and repeat the reference's operations in its order, so
they give its bits. Those with exp, tanh or sigmoid use ``_math``'s float32 polynomials: float32
only (float64 keeps numpy's loops), within a few ulp of their references (the tests hold each
to its reference).

numba is a dependency on the platforms it ships wheels for; without it (or with
``GPUGRAD_CPU_KERNELS=0``, or ``set_enabled(False)``) every kernel runs its numpy reference.
``status()`` says which, and why.
"""
from __future__ import annotations

import importlib
import os
import threading
import time
import warnings

import numpy as np

from .. import _parallel

# kernel name -> the submodule that compiles it (nothing here imports numba until a kernel
# is first called)
NAMES = {
    "lstm_cell": "rnn", "lstm_cell_bwd": "rnn", "gru_cell": "rnn", "gru_cell_bwd": "rnn",
    "adam_step": "optim", "sgd_step": "optim",
    "sigmoid": "activation", "gelu_cdf": "activation", "gelu_bwd_cdf": "activation",
    "relu_bwd": "activation", "leaky_relu_bwd": "activation", "sigmoid_bwd": "activation",
    "tanh_bwd": "activation", "silu_bwd": "activation", "gelu_bwd": "activation",
    "layer_norm": "normalization", "layer_norm_bwd": "normalization",
    "softmax": "normalization", "softmax_bwd": "normalization",
    "log_softmax": "normalization", "log_softmax_bwd": "normalization",
}
# the least size of the first argument for which a kernel runs compiled: the first compiled
# kernel of a process costs ~0.5 s (numba's start and its cache's load), which work on small
# arrays never earns back, so a toy model never starts it; the recurrent cells take every size
# (their per-call savings are what pays; a step's tensors are small by nature)
MIN_ELEMENTS = {name: 1 << 14 for name in NAMES if NAMES[name] != "rnn"}

_enabled = os.environ.get("GPUGRAD_CPU_KERNELS", "1").strip() != "0"
_reason = None if _enabled else "GPUGRAD_CPU_KERNELS=0"
_found: dict = {}          # name -> the compiled kernel's entry point, or None
_lock = threading.Lock()
stats = {"loaded_seconds": 0.0}


def set_enabled(on: bool) -> None:
    """Use the compiled kernels (True, the default where numba imports) or the references."""
    global _enabled
    _enabled = bool(on)


def enabled() -> bool:
    return _enabled and _reason is None


def status() -> str:
    """One line: whether the compiled CPU kernels run, and why not when they do not."""
    if _reason is not None:
        return f"numpy references ({_reason})"
    if not _enabled:
        return "numpy references (set_enabled(False))"
    return "compiled (numba)"


def get(name: str):
    """The compiled entry point of kernel ``name``: called with the reference's arguments
    (without ``xp``), it returns the reference's result, or None where it does not apply.
    None when the kernel has no compiled form here."""
    if not _enabled:
        return None
    try:
        return _found[name]
    except KeyError:
        pass
    with _lock:
        if name not in _found:
            _found[name] = _load(name)
    return _found[name]


def _load(name):
    if _reason is not None or name not in NAMES:
        return None
    start = time.perf_counter()
    try:
        module = importlib.import_module(f"{__name__}.{NAMES[name]}")
    except Exception as e:   # noqa: BLE001 - no numba, or one that does not fit this numpy
        _no_numba(e)
        return None
    stats["loaded_seconds"] += time.perf_counter() - start
    return _guarded(name, getattr(module, name))


def _guarded(name, entry):
    """``entry``, except that a numba error (a loop that does not compile for some argument
    types: a bug to report) disables the kernel with a warning and runs the reference."""
    def run(*args):
        try:
            return entry(*args)
        except Exception as e:
            if not type(e).__module__.startswith("numba"):
                raise
            _found[name] = None
            warnings.warn(f"the compiled CPU kernel {name} failed ({type(e).__name__}: "
                          f"{str(e)[:300]}); it runs its numpy reference from now on",
                          UserWarning, stacklevel=2)
            return None
    return run


def compile_region(nodes, live, outputs, scalars, n_params, dtype):
    """A traced backward region compiled to one loop (``region.py``), or None (no numba, an op
    it has no compiled form for, a dtype other than float32/float64)."""
    if not _enabled or _reason is not None:
        return None
    try:
        from . import region as _region
    except Exception as e:   # noqa: BLE001 - as in _load
        _no_numba(e)
        return None
    return _region.compile(nodes, live, outputs, scalars, n_params, dtype)


def _no_numba(e) -> None:
    global _reason
    _reason = f"numba unavailable: {type(e).__name__}: {str(e)[:200]}"


def launch(fn, inputs, params, outs, n) -> None:
    """``fn(*inputs, *params, *outs, n)`` of a compiled elementwise loop, its range split over
    ``_parallel``'s threads from ``_parallel.MIN_ELEMENTS`` elements (inputs that are not
    arrays are passed whole). Each element is computed by the same code whatever the split."""
    threads = _parallel.get_num_threads()
    if threads <= 1 or n < _parallel.MIN_ELEMENTS:
        fn(*inputs, *params, *outs, n)
        return
    step = _parallel.BLOCK
    blocks = -(-n // step)
    threads = min(threads, blocks)
    bounds = [blocks * k // threads * step for k in range(threads)] + [n]

    def part(lo, hi):
        fn(*[a[lo:hi] if a.__class__ is np.ndarray else a for a in inputs], *params,
           *[o[lo:hi] for o in outs], hi - lo)
    _parallel.fork_join(part, bounds)


def launch_rows(fn, x, others, rows, width) -> None:
    """``fn(x, *others, lo, hi)`` of a compiled row kernel over rows ``lo:hi``, the rows split
    over ``_parallel``'s threads when there are ``_parallel.MIN_ELEMENTS`` elements or more."""
    threads = min(_parallel.get_num_threads(), rows)
    if threads <= 1 or rows * width < _parallel.MIN_ELEMENTS:
        fn(x, *others, 0, rows)
        return
    _parallel.fork_join(lambda lo, hi: fn(x, *others, lo, hi),
                        [rows * k // threads for k in range(threads + 1)])


def call(name, *args):
    """Kernel ``name`` compiled, on ``args``; None where it has no compiled form here, the
    first argument is not a numpy array of at least its ``MIN_ELEMENTS`` elements (a CuPy
    array never starts numba), or it declines the arguments."""
    a = args[0]
    if a.__class__ is not np.ndarray or a.size < MIN_ELEMENTS.get(name, 0):
        return None
    f = get(name)
    return None if f is None else f(*args)
