"""Linear algebra ops: products, einsum, decompositions, LU, solvers, norms, and the older
top-level names."""

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
