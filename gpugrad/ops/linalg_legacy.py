"""PyTorch's older top-level linear algebra names over gpugrad's linalg: cholesky (with
``upper``), chain_matmul; and matrix_exp as a composition of matrix products (so it has
gradients of every order)."""
from __future__ import annotations

import math
import warnings

from .._backend import xp_of


def cholesky(input, upper=False):
    """L with A = L L^T (U with A = U^T U for upper=True), as ``linalg.cholesky``."""
    from .matrix import cholesky as linalg_cholesky
    return linalg_cholesky(input, upper=upper)


def chain_matmul(*matrices, out=None):
    from .matrix import multi_dot
    warnings.warn("gpugrad.chain_matmul is deprecated and will be removed in a future release. "
                  "Use gpugrad.linalg.multi_dot instead, which accepts a list of two or more "
                  "tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1:
        return matrices[0].clone()
    return multi_dot(matrices)


_TAYLOR_TERMS = 18   # 0.5^18 / 18! < 1e-21: float64-exact once the norm is at most 1/2


def matrix_exp(A):
    """exp(A) = sum_k A^k / k!, by scaling and squaring: exp(A) = exp(A / 2^s)^(2^s) with s
    chosen so that the 1-norm of A / 2^s is at most 1/2, and the Taylor series of that (Horner
    form) to 18 terms."""
    from .linalg import matmul
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_exp: A must be batches of square matrices, but they "
                           f"are {A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1]} matrices")
    if A.dtype.kind not in "fc":
        raise RuntimeError("linalg.matrix_exp: Expected a floating point or complex tensor as "
                           "input.")
    a = A._data
    xp = xp_of(a)
    n = a.shape[-1]
    norm = float(xp.abs(a).sum(axis=-2).max()) if a.size else 0.0
    if not math.isfinite(norm):
        norm = 0.0   # nan or inf entries propagate through the series
    s = max(0, math.ceil(math.log2(norm)) + 1) if norm > 0.5 else 0
    x = A / (2.0 ** s) if s else A
    eye = xp.eye(n, dtype=a.dtype)
    y = x / _TAYLOR_TERMS + eye
    for k in range(_TAYLOR_TERMS - 1, 0, -1):
        y = matmul(x, y) / k + eye
    for _ in range(s):
        y = matmul(y, y)
    return y
