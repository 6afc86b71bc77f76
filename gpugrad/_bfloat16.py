"""The bfloat16 dtype: numpy has none, ``ml_dtypes`` (JAX's) adds it as a numpy dtype.

bfloat16 arrays are plain numpy arrays of that dtype: views, copies, indexing, printing and the
byte layout (the top half of a float32) come from numpy. Its elementwise ufuncs compute in
float32 and round each result, but its reductions and products accumulate in bfloat16 or return
float32, unlike PyTorch, whose CPU kernels accumulate in float and round the op's output once.
So the ops compute bfloat16 inputs in float32 and round at the op's output, in one place: the op
dispatch (``ops/_op.py``, ``lowp_apply``), see docs/design.md "bfloat16".

numpy's kind of the dtype is ``'V'``; ``is_float`` answers "floating point?" for all of them.
CuPy has no bfloat16 dtype, so bfloat16 tensors live on the CPU only (``check_device``).

Without ``ml_dtypes`` installed, ``gpugrad.bfloat16`` is a placeholder: the name exists (dtype
tables name it), and making a tensor of it raises ``ImportError`` saying what to install.
"""
from __future__ import annotations

import numpy as np

try:
    import ml_dtypes
except ImportError:   # pragma: no cover - ml_dtypes is a dependency; kept importable without it
    ml_dtypes = None

MISSING = ("gpugrad.bfloat16 needs the ml_dtypes package (numpy has no bfloat16 dtype): "
           "pip install ml_dtypes")
ON_CUDA = ("bfloat16 tensors are not supported on CUDA devices by gpugrad: CuPy has no bfloat16 "
           "dtype; use float16 or float32")


class _Missing:
    """``gpugrad.bfloat16`` when ml_dtypes is not installed: a name, not a usable dtype."""
    name = "bfloat16"
    itemsize = 2

    def __repr__(self):
        return "gpugrad.bfloat16"

    def __reduce__(self):
        return "bfloat16"


BF16 = None if ml_dtypes is None else np.dtype(ml_dtypes.bfloat16)
bfloat16 = _Missing() if BF16 is None else BF16
COMPUTE = np.dtype(np.float32)   # what bfloat16 computes in


def require(d):
    """``d`` unchanged, unless it is the placeholder of a missing ml_dtypes: ImportError."""
    if d.__class__ is _Missing:
        raise ImportError(MISSING)
    return d


def is_float(d) -> bool:
    """Floating point (real): numpy's kind 'f', or bfloat16 (kind 'V')."""
    return d.kind == "f" or (d.kind == "V" and d == BF16)


def is_inexact(d) -> bool:
    """Floating point or complex: the dtypes that may require gradients."""
    return d.kind in "fc" or (d.kind == "V" and d == BF16)


def check_device(dtype, device_type: str):
    """A bfloat16 array may not be made on, or go to, a CUDA device (CuPy cannot hold it)."""
    if device_type == "cuda" and BF16 is not None and dtype == BF16:
        raise TypeError(ON_CUDA)


def finfo_values(d) -> dict | None:
    """bfloat16's limits as PyTorch's ``finfo`` gives them (resolution 0.01, as PyTorch rounds
    ``10 ** -precision``), or None for another dtype."""
    if BF16 is None or d != BF16:
        return None
    info = ml_dtypes.finfo(BF16)
    return {"bits": 16, "eps": float(info.eps), "max": float(info.max), "min": float(info.min),
            "tiny": float(info.smallest_normal), "resolution": 0.01}
