"""A traced backward region (``autograd/_trace.py``) as one compiled loop.

``source`` writes the region's DAG as the body of a loop over its elements, as
``_trace.cuda_source`` writes it for CUDA; ``compile`` turns that into a numba function. An
input expanded from one value (a sum's gradient) comes in as that value, not an array. Ops
with no vectorisable float32 form here (log, sin, erf, ...) leave the region to numpy
(``compile`` returns None). Arithmetic, comparisons and selects are the IEEE operations numpy's
loops perform, in the same order, so a region of those gives ``_trace.evaluate``'s bits; a region
with exp, tanh or sigmoid uses ``_math``'s (a few ulp) and fused multiply-adds.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sys
import threading
import time
import warnings

import numpy as np
from numba import njit

from . import _math

# op -> the function in the generated module's namespace (float32 only for the polynomials)
_UNARY = {"exp": "exp", "tanh": "tanh", "sigmoid": "sigmoid", "sqrt": "np.sqrt", "abs": "abs",
          "sign": None}   # sign: written out (numpy's: +-1, 0 for +-0, NaN for NaN)
_APPROXIMATE = {"exp", "tanh", "sigmoid"}
_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_COMPARE = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}
_NAMESPACE = {"np": np, "njit": njit, "exp": _math.exp, "tanh": _math.tanh,
              "sigmoid": _math.sigmoid, "maximum": _math.maximum,
              "minimum": _math.minimum}

stats = {"compiled": 0, "failed": 0, "compile_seconds": 0.0}
_lock = threading.Lock()


def supported(nodes, live, dtype) -> bool:
    """Whether every live node has a compiled form for ``dtype``."""
    for i, (op, _, _) in enumerate(nodes):
        if not live[i] or op in ("in", "param", "const") or op in _ARITH or op in _COMPARE:
            continue
        if op in ("and", "or", "not", "where", "pow", "max", "min"):
            continue
        if op not in _UNARY or (op in _APPROXIMATE and dtype != np.float32):
            return False
    return True


def _const(v, ctype) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if math.isnan(v):
        return f"{ctype}(np.nan)"
    if math.isinf(v):
        return f"{ctype}({'np.inf' if v > 0 else '-np.inf'})"
    return f"{ctype}({v!r})"


def source(nodes, live, outputs, scalars, n_params, ctype) -> str:
    """The loop's Python source. ``scalars[k]``: input k comes as one value, not an array."""
    names, body = {}, []

    def f(j):   # operand j as a floating value
        return names[j] if nodes[j][2] == "f" else f"{ctype}({names[j]})"

    for i, (op, args, kind) in enumerate(nodes):
        if not live[i]:
            continue
        if op == "const":
            names[i] = _const(args, ctype)
            continue
        if op == "param":
            names[i] = f"p{args}"
            continue
        names[i] = f"v{i}"
        if op == "in":
            expr = f"in{args}" if scalars[args] else f"in{args}[i]"
        elif op in _ARITH:
            expr = f"{f(args[0])} {_ARITH[op]} {f(args[1])}"
        elif op in _COMPARE:
            a, b = args
            both_bool = nodes[a][2] == "b" and nodes[b][2] == "b"
            expr = (f"{names[a]} {_COMPARE[op]} {names[b]}" if both_bool
                    else f"{f(a)} {_COMPARE[op]} {f(b)}")
        elif op in ("and", "or"):
            expr = f"{names[args[0]]} {'&' if op == 'and' else '|'} {names[args[1]]}"
        elif op == "not":
            expr = f"not {names[args[0]]}"
        elif op == "where":
            c, a, b = args
            cond = names[c] if nodes[c][2] == "b" else f"{names[c]} != {ctype}(0)"
            expr = (f"{names[a]} if {cond} else {names[b]}" if kind == "b"
                    else f"{f(a)} if {cond} else {f(b)}")
        elif op == "pow":
            a, b = args
            e = nodes[b]
            x = f(a)
            if e[0] == "const" and not isinstance(e[1], bool) and e[1] in (0.0, 1.0, 2.0, 3.0,
                                                                            -1.0):
                expr = {0.0: f"{ctype}(1)", 1.0: x, 2.0: f"{x} * {x}",
                        3.0: f"{x} * {x} * {x}", -1.0: f"{ctype}(1) / {x}"}[e[1]]
            else:
                expr = f"{x} ** {f(b)}"
        elif op in ("max", "min"):
            expr = f"{'maximum' if op == 'max' else 'minimum'}({f(args[0])}, {f(args[1])})"
        elif op == "sign":
            x = f(args[0])
            expr = (f"{ctype}(1) if {x} > 0 else ({ctype}(-1) if {x} < 0 else "
                    f"({ctype}(0) if {x} == 0 else {x}))")
        else:
            expr = f"{_UNARY[op]}({f(args[0])})"
        body.append(f"        v{i} = {expr}")
    for k, o in enumerate(outputs):
        body.append(f"        out{k}[i] = {f(o)}")
    params = [f"in{k}" for k in range(len(scalars))] + [f"p{k}" for k in range(n_params)]
    params += [f"out{k}" for k in range(len(outputs))] + ["n"]
    return (f"def region({', '.join(params)}):\n"
            f"    for i in range(n):\n" + "\n".join(body) + "\n")


def compile(nodes, live, outputs, scalars, n_params, dtype):
    """The region as a compiled function ``fn(*inputs, *params, *outs, n)`` (nogil), or None
    when some op has no compiled form here. The source is written to the cache directory
    (``cache_dir()``) as a module of its own, so numba caches its machine code there and a later
    process loads it instead of compiling (~0.1-0.3 s a region); without a usable directory it
    is compiled in memory."""
    if dtype not in (np.float32, np.float64) or not supported(nodes, live, dtype):
        return None
    ctype = "np.float32" if dtype == np.float32 else "np.float64"
    t = "float32" if dtype == np.float32 else "float64"
    types = [t if one else f"{t}[::1]" for one in scalars] + [t] * n_params
    types += [f"{t}[::1]"] * len(outputs) + ["int64"]
    approximate = any(live[i] and op in _APPROXIMATE for i, (op, _, _) in enumerate(nodes))
    flags = ', fastmath={"contract"}' if approximate else ""   # exact arithmetic stays exact
    body = source(nodes, live, outputs, scalars, n_params, ctype)
    start = time.perf_counter()
    with _lock:   # numba's compiler is not re-entrant across threads
        try:
            fn = _from_file(body, types, flags)
            if fn is None:
                namespace = dict(_NAMESPACE)
                exec(body, namespace)   # noqa: S102 - generated from the traced formulas
                fn = njit(f"void({', '.join(types)})", nogil=True, error_model="numpy",
                          **(_math.APPROXIMATE if approximate else {}))(namespace["region"])
        except Exception as e:   # noqa: BLE001 - a bug to report, never a failed backward:
            stats["failed"] += 1   # the region runs on numpy
            warnings.warn(f"a fused backward region did not compile for the CPU "
                          f"({type(e).__name__}: {str(e)[:300]}); it runs on numpy",
                          UserWarning, stacklevel=2)
            return None
        stats["compiled"] += 1
        stats["compile_seconds"] += time.perf_counter() - start
    return fn


# -- the on-disk cache --------------------------------------------------------------------------
_HEADER = """\
# generated by gpugrad from a traced backward region; safe to delete
import numpy as np
from numba import njit

from gpugrad._cpu_kernels._math import exp, maximum, minimum, sigmoid, tanh

"""
_cache: list = []   # [directory or None], decided once


def cache_dir():
    """Where compiled regions are kept: ``$GPUGRAD_CACHE_DIR/cpu_regions``, else
    ``$XDG_CACHE_HOME/gpugrad/cpu_regions``, else ``~/.cache/gpugrad/cpu_regions``; None when
    it cannot be made, or is not this user's own and closed to others (its modules are
    imported, so no one else may write there)."""
    if _cache:
        return _cache[0]
    root = os.environ.get("GPUGRAD_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "gpugrad")
    path = os.path.join(root, "cpu_regions")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.stat(path)
        private = (not hasattr(os, "getuid") or st.st_uid == os.getuid()) and \
            not st.st_mode & 0o022
        _cache.append(path if private and os.access(path, os.W_OK) else None)
    except OSError:
        _cache.append(None)
    return _cache[0]


def _fingerprint() -> str:
    """What every cached region depends on besides its own source: ``_math`` (numba does not
    invalidate a cache when an inlined callee's file changes) and the numba/numpy versions."""
    import numba
    with open(_math.__file__, "rb") as f:
        text = f.read()
    return hashlib.sha256(text + numba.__version__.encode() + np.__version__.encode()
                          ).hexdigest()[:16]


def _from_file(body, types, flags):
    directory = cache_dir()
    if directory is None:
        return None
    text = (_HEADER + f"# {_fingerprint()}\n\n"
            + f"@njit(\"void({', '.join(types)})\", nogil=True, error_model=\"numpy\", "
            + f"cache=True{flags})\n" + body)
    name = "region_" + hashlib.sha256(text.encode()).hexdigest()[:32]
    path = os.path.join(directory, name + ".py")
    try:
        try:
            with open(path, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = None
        if current != text:   # absent, or not what we wrote: (re)written whole, then renamed
            tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        module_name = f"_gpugrad_cpu_{name}"
        module = sys.modules.get(module_name)
        if module is None:
            spec = importlib.util.spec_from_file_location(module_name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module   # numba's cache finds a function by its module
            spec.loader.exec_module(module)
    except OSError:
        return None
    return module.region
