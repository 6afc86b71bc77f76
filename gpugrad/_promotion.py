"""PyTorch's dtype promotion: the result dtype of an op over tensors, 0-d tensors and Python
numbers (``result_type``), and the cast of a result numpy promoted differently (``_promote``).

A low-level module: it reads only numpy and the default dtypes of ``tensor``, so every layer
above (ops, dtype information, creation functions) can use it.
"""
import numpy as np

from ._bfloat16 import BF16, COMPUTE

# "V": bfloat16, the one numpy dtype of that kind gpugrad makes (ml_dtypes), is floating point
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}


def _widest(dtypes):
    """Promote within the highest category only (float32 tensor * int64 tensor -> float32)."""
    top = max(_CATEGORY[d.kind] for d in dtypes)
    same = [d for d in dtypes if _CATEGORY[d.kind] == top]
    if top == 2 and BF16 is not None and BF16 in same:
        # PyTorch: bfloat16 with float16 is float32 (neither holds the other), with a wider
        # float the wider one; numpy has no promotion of bfloat16 with float16
        rest = [d for d in same if d != BF16]
        return BF16 if not rest else np.result_type(COMPUTE, *rest)
    return np.result_type(*same)


def result_type(arrays):
    """PyTorch's type promotion: tensors with dimensions outrank 0-d tensors, which outrank
    Python numbers; a lower-ranked participant only matters when its category (bool < int <
    float < complex) is higher, and a Python number then gives the default dtype."""
    from .tensor import DEFAULT
    dims = [a.dtype for a in arrays if getattr(a, "ndim", 0) > 0]
    zero = [a.dtype for a in arrays if getattr(a, "ndim", None) == 0]
    result = _widest(dims) if dims else None
    if zero:
        d = _widest(zero)
        if result is None or _CATEGORY[d.kind] > _CATEGORY[result.kind]:
            result = d
    for v in arrays:
        if hasattr(v, "dtype"):
            continue
        kind = ("b" if isinstance(v, bool) else "i" if isinstance(v, int) else
                "f" if isinstance(v, float) else "c" if isinstance(v, complex) else None)
        if kind is not None and (result is None or _CATEGORY[kind] > _CATEGORY[result.kind]):
            result = {"b": np.dtype(bool), "i": np.dtype(np.int64), "f": DEFAULT.float,
                      "c": complex_of(result)}[kind]
    return result


def complex_of(dtype):
    """The complex dtype a Python complex number takes next to ``dtype``: complex128 next to
    float64 (or under a float64 default), else complex64, as in PyTorch."""
    from .tensor import DEFAULT
    real = dtype if dtype is not None and dtype.kind == "f" else DEFAULT.float
    return np.dtype(np.complex128 if real == np.float64 else np.complex64)


def _promote(y, arrays):
    """Cast a result numpy promoted differently from PyTorch (int tensor * 1.5 -> float32)."""
    from .tensor import DEFAULT
    want = result_type(arrays)
    if want is None or want == y.dtype:
        return y
    if y.dtype.kind in "fc" and want.kind in "biu":  # true division of integers
        want = DEFAULT.float
    if y.dtype.kind == "c" and want.kind != "c":   # a complex number among the inputs (passed
        want = complex_of(want)                    # by keyword): never cast away, as in PyTorch
    return y if want == y.dtype else y.astype(want)
