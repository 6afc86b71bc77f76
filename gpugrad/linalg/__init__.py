"""``gpugrad.linalg``: linear algebra under PyTorch's ``torch.linalg`` names, over the linear
algebra ops of ``gpugrad.ops``."""
from __future__ import annotations

from ..ops.decomp import (
    eigh,
    eigvalsh,
    matrix_rank,
    pinv,
    qr,
    svd,
)
from ..ops.linalg import (
    matmul,
)
from ..ops.linalg_legacy import (
    matrix_exp,
)
from ..ops.linalg_lu import (
    lu,
    lu_factor,
    lu_factor_ex,
    lu_solve,
    solve_triangular,
)
from ..ops.linalg_more import (
    cholesky_ex,
    cond,
    eig,
    eigvals,
    householder_product,
    inv_ex,
    lstsq,
    solve_ex,
    tensorinv,
    tensorsolve,
    vander,
)
from ..ops.matrix import (
    LinAlgError,
    cholesky,
    det,
    inv,
    matrix_norm,
    matrix_power,
    multi_dot,
    norm,
    slogdet,
    solve,
    svdvals,
    vdot,
    vecdot,
    vector_norm,
)
from ..ops.matrix import (
    linalg_cross as cross,
)
from ..ops.matrix import (
    linalg_diagonal as diagonal,
)
