"""``gpugrad.linalg.lstsq``: least squares through the pseudo-inverse, with PyTorch's drivers and
result fields.
"""
from __future__ import annotations

import numpy as np

from ...tensor import scalar_name
from .decompositions import (
    matrix_rank,
    pinv,
    svd,
)
from .solvers import (
    _DRIVERS,
    LstsqResult,
    _empty,
)


def lstsq(A, B, rcond=None, *, driver=None):
    """The minimum-norm X minimising ||A X - B|| (batched), through the pseudo-inverse with
    singular values at most rcond * the largest taken as zero (rcond defaults to
    eps * max(m, n)). As PyTorch's CPU drivers: residuals (squared, per column) only for m > n,
    full rank and a driver other than gelsy; rank except for gels; singular values for gelsd
    and gelss."""
    from ..reduction.reduce import sum as sum_
    from .products import matmul
    if driver is not None and driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
                           "gelsd, gelss)")
    driver = driver or "gelsy"
    if A.dtype.kind != "f" or B.dtype.kind != "f":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {scalar_name(A.dtype).capitalize()} "
                           f"and other's dtype {scalar_name(B.dtype).capitalize()}")
    vector = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vector else B
    if A.shape[-2] != b.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    m, n = A.shape[-2:]
    if rcond is None:
        rcond = float(np.finfo(A.dtype).eps) * max(m, n)
    x = matmul(pinv(A, atol=0.0, rtol=rcond), b)
    rank = matrix_rank(A, atol=0.0, rtol=rcond)
    residuals = _empty(A)
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        residuals = sum_((matmul(A, x) - b) ** 2, -2)
    return LstsqResult(x.squeeze(-1) if vector else x, residuals,
                       rank if driver != "gels" else _empty(A, np.int64),
                       svd(A.detach(), full_matrices=False).S if driver in ("gelsd", "gelss")
                       else _empty(A))


OPS: list = []
