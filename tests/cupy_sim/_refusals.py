"""Which CuPy calls a capture refuses, and why, read from CuPy's source: calls into cuBLAS and
cuSOLVER (their ``setStream`` raises ``NotImplementedError`` while the current stream captures)
and calls that read device memory back to size their result or check their input (they
synchronize, so the D2H check of ``cupy/cuda/memory.pyx`` raises). cuRAND's calls are in
``_random``.

Each entry decides from the call's arguments (numpy arrays or scalars) the way CuPy's code
branches; only ``check`` runs, and only during a capture.
"""
from __future__ import annotations

import math

import numpy as np

from . import _capture

BLAS, SOLVER = "cuBLAS", "cuSOLVER"
_BATCHED_GESV_LIMIT = 256   # cupy/cublas.py: get_batched_gesv_limit()


def _float(*arrays):
    return np.result_type(*arrays).kind in "fc"


def _gemm(a, b, k):
    """cupy/_core/_routines_linalg.pyx tensordot_core: empty operands are filled, a 1x1
    result is a reduction kernel, integers have their own kernel; the rest is cuBLAS."""
    if not k or not a.size or not b.size:
        return None
    n, m = a.size // k, b.size // k
    if n == 1 and m == 1 or not _float(a, b):
        return None
    return BLAS


def _dot(a, b, *rest, **kw):        # dot (2-D path) and inner
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:   # a multiply
        return None
    return _gemm(a, b, a.shape[-1])


def _matmul(a, b, *rest, **kw):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return None
    if max(a.ndim, b.ndim) <= 2:
        return _dot(a, b)
    if not a.size or not b.size or np.result_type(a, b).char not in "efdFD":
        return None
    return BLAS                      # batched gemm, even for 1x1 results


def _tensordot(a, b, axes=2):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return None
    if isinstance(axes, int):
        k = math.prod(a.shape[a.ndim - axes:]) if axes else 1
    else:
        a_axes = axes[0] if isinstance(axes[0], (list, tuple)) else (axes[0],)
        k = math.prod(a.shape[i] for i in a_axes)
    return _gemm(a, b, k)


def _einsum(*args, **kw):
    """cupy/linalg/_einsum.py: a pair of operands sharing a label summed away (of size > 1)
    goes through matmul; labels kept in the output are an elementwise product."""
    if not args or not isinstance(args[0], str):
        return BLAS if _float(*[x for x in args if isinstance(x, np.ndarray)]) else None
    subscripts, operands = args[0].replace(" ", ""), [np.asarray(x) for x in args[1:]]
    if len(operands) < 2 or any(x.size == 0 for x in operands) or not _float(*operands):
        return None
    if "..." in subscripts:
        return BLAS
    inputs, explicit, output = subscripts.partition("->")
    terms = inputs.split(",")
    seen: dict[str, int] = {}
    size: dict[str, int] = {}
    for term, x in zip(terms, operands):
        for label, n in zip(term, x.shape):
            size[label] = max(size.get(label, 1), n)
        for label in set(term):
            seen[label] = seen.get(label, 0) + 1
    if not explicit:
        output = "".join(sorted(lb for lb in seen if seen[lb] == 1 and inputs.count(lb) == 1))
    shared = [lb for lb, n in seen.items() if n > 1 and lb not in output and size[lb] > 1]
    return BLAS if shared else None


def _lu(a, *rest, **kw):
    """cupy/linalg/_decomposition.py _lu_factor: cuBLAS's batched getrf when the batch is
    large against the matrix, cuSOLVER's getrf otherwise."""
    a = np.asarray(a)
    batch, n = math.prod(a.shape[:-2]), a.shape[-1]
    return BLAS if batch * 65536 >= n * n else SOLVER


def _inv(a, *rest, **kw):            # batched inverses use cuBLAS
    return BLAS if np.ndim(a) >= 3 else SOLVER


def _solve(a, b, *rest, **kw):
    a = np.asarray(a)
    return BLAS if a.ndim > 2 and a.shape[-1] <= _BATCHED_GESV_LIMIT else SOLVER


def _norm(x, ord=None, axis=None, keepdims=False):
    matrix = (axis is None and np.ndim(x) == 2) or (isinstance(axis, tuple) and len(axis) == 2)
    return SOLVER if matrix and ord in (2, -2, "nuc") else None   # the SVD-based norms


def _cond(x, p=None):
    return SOLVER if p in (None, 2, -2) else _inv(x)


def _matrix_power(m, n):
    if n < 0:
        return _inv(m)
    return _matmul(m, m) if n >= 2 else None


def _solver(*args, **kw):
    return SOLVER


LIBRARY = {
    "matmul": _matmul, "linalg.matmul": _matmul, "dot": _dot, "inner": _dot,
    "tensordot": _tensordot, "einsum": _einsum,
    "cov": lambda *a, **k: BLAS if _float(np.asarray(a[0])) else None,
    "corrcoef": lambda *a, **k: BLAS if _float(np.asarray(a[0])) else None,
    "linalg.det": _lu, "linalg.slogdet": _lu, "linalg.inv": _inv, "linalg.solve": _solve,
    "linalg.tensorinv": _solver, "linalg.tensorsolve": _solver, "linalg.norm": _norm,
    "linalg.cond": _cond, "linalg.matrix_power": _matrix_power,
    **{f"linalg.{name}": _solver for name in (
        "cholesky", "qr", "svd", "eig", "eigh", "eigvals", "eigvalsh", "lstsq", "pinv",
        "matrix_rank")},
}


def _nonempty(a, *rest, **kw):
    return np.size(a) > 0


def _one_argument(condition, *rest, **kw):
    return not rest and np.size(condition) > 0


def _always(*args, **kw):
    return True


# calls that read device memory to size their result or check their input (each marked
# "synchronize!" or reading ``int(...)`` / ``.any()`` / mask indexing in CuPy's source)
SYNCHRONIZING = {
    "nonzero": _nonempty, "argwhere": _nonempty, "flatnonzero": _nonempty,
    "where": _one_argument, "bincount": _always, "histogram": _always,
    "histogram2d": _always, "histogramdd": _always, "unravel_index": _always,
    "tril_indices": _always, "triu_indices": _always, "tril_indices_from": _always,
    "triu_indices_from": _always, "extract": _always, "compress": _always,
    "unique": _always, "unique_all": _always, "unique_counts": _always,
    "unique_inverse": _always, "unique_values": _always,
    # these hand the array to numpy: cupy.asnumpy first
    "array_repr": _nonempty, "array_str": _nonempty, "array2string": _nonempty,
    "save": _always, "savez": _always, "savez_compressed": _always, "savetxt": _always,
}

# calls that build an array from host data (copied over like cupy.asarray's)
UPLOADING = frozenset(("load", "loadtxt", "genfromtxt", "fromfile", "frombuffer", "fromstring",
                       "fromiter"))

HOST_ONLY = frozenset(("show_config", "set_printoptions", "printoptions"))   # no device work


def check(name, args, kw):
    """Refuse the call ``cupy.<name>(*args, **kw)`` as CuPy would during a capture."""
    rule = LIBRARY.get(name)
    if rule is not None:
        library = rule(*args, **kw)
        if library is not None:
            _capture.refuse_library(library)
    rule = SYNCHRONIZING.get(name)
    if rule is not None and rule(*args, **kw):
        _capture.refuse_transfer("D2H transfers")
    if name in UPLOADING:
        _capture.refuse_transfer("H2D transfers")


def check_method(name, a, args, kw):
    """The same for ``ndarray.<name>``."""
    if name == "dot":
        if _dot(a, *args[:1]) is not None:
            _capture.refuse_library(BLAS)
    elif name == "item":            # a size other than 1 is a ValueError before the copy
        if a.size == 1:
            _capture.refuse_transfer("D2H transfers")
    elif name in ("nonzero", "tolist", "tobytes", "tofile", "dump", "dumps"):
        if a.size:                  # get() of an empty array copies nothing
            _capture.refuse_transfer("D2H transfers")
    elif name == "compress":
        _capture.refuse_transfer("D2H transfers")
