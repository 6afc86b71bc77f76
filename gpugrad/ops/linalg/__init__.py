"""Linear algebra ops: products, einsum, decompositions, LU, solvers, norms, and the older
top-level names.

This package is also the old path of the module ``gpugrad.ops.linalg``: its names resolve
from their new homes below (temporary; removed once every importer uses the new homes)."""

from .decompositions import (
    cholesky_ex,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    householder_product,
    matrix_rank,
    pinv,
    qr,
    svd,
)
from .lstsq import lstsq
from .norms import cond
from .products import vander
from .solvers import inv_ex, solve_ex, tensorinv, tensorsolve
from .triangular import lu, lu_factor, lu_factor_ex, lu_solve, solve_triangular

# every name in __all__ is attached to gpugrad.linalg
__all__ = ["qr", "eigh", "eigvalsh", "svd", "pinv", "matrix_rank", "lstsq", "solve_triangular",
           "lu_factor", "lu_factor_ex", "lu", "lu_solve", "cholesky_ex", "inv_ex", "solve_ex",
           "cond", "householder_product", "tensorinv", "tensorsolve", "vander", "eig", "eigvals"]

import importlib as _importlib

_HOMES = ('gpugrad.ops.linalg.products',)   # where its names went


def __getattr__(name):
    for home in _HOMES:
        mod = _importlib.import_module(home)
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
