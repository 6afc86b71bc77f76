"""``gpugrad.linalg``: linear algebra under PyTorch's ``torch.linalg`` names, over the linear
algebra ops of ``gpugrad.ops``."""
from __future__ import annotations

from ..ops.linalg.decompositions import (
    cholesky,
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
from ..ops.linalg.legacy import matrix_exp
from ..ops.linalg.lstsq import lstsq
from ..ops.linalg.norms import cond, matrix_norm, norm, svdvals, vector_norm
from ..ops.linalg.products import linalg_cross as cross
from ..ops.linalg.products import matmul, matrix_power, multi_dot, vander, vdot, vecdot
from ..ops.linalg.solvers import (
    LinAlgError,
    det,
    inv,
    inv_ex,
    slogdet,
    solve,
    solve_ex,
    tensorinv,
    tensorsolve,
)
from ..ops.linalg.triangular import lu, lu_factor, lu_factor_ex, lu_solve, solve_triangular
from ..ops.shape.diagonal import linalg_diagonal as diagonal
