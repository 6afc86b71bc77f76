"""Inverses, determinants and solvers of ``gpugrad.linalg``: inv / inv_ex, det, slogdet, logdet,
solve / solve_ex, tensorinv, tensorsolve.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ..._backend import xp_of
from ..._exports import export
from ...tensor import Tensor, scalar_name
from .._op import Op


class LinAlgError(RuntimeError):
    """A matrix the routine cannot handle (singular, not positive-definite), as PyTorch's
    ``torch.linalg.LinAlgError``."""


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


def _mT(F, a):  # noqa: N802
    return F.swapaxes(a, -1, -2)


def _inv(F, a):
    return F.linalg.inv(a) if F.fast else inv(a)


def _solve(F, a, b):
    return _solve_arrays(xp_of(a), a, b) if F.fast else solve(a, b)


def _solve_arrays(xp, a, b):
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                           xp.broadcast_to(b, batch + b.shape[-2:]))


def _batches(a):
    return a.reshape((-1,) + a.shape[-2:])


def _where(a, b):
    return f"(Batch element {b}): " if a.ndim > 2 else ""


def _zero_pivot(xp, m):
    """1-based position of the first zero pivot of the LU factorisation of ``m`` with partial
    pivoting (LAPACK's ``info``), or 0. Runs only to name the culprit in an error."""
    u = m.astype(np.float64 if m.dtype.kind != "c" else np.complex128)
    for k in range(u.shape[-1]):
        p = k + int(xp.argmax(xp.abs(u[k:, k])))
        if u[p, k] == 0:
            return k + 1
        if p != k:
            u[[k, p]] = u[[p, k]]
        u[k + 1:] -= (u[k + 1:, k] / u[k, k])[:, None] * u[k]
    return 0


def _raise_singular(xp, a, fn):
    for b, m in enumerate(_batches(a)):
        k = _zero_pivot(xp, m)
        if k:
            raise LinAlgError(f"{fn}: {_where(a, b)}The diagonal element {k} is zero, the "
                              f"inversion could not be completed because the input matrix is "
                              f"singular.")


def _solved(xp, a, compute, on_singular, failed=None):
    """``compute()``, where ``on_singular()`` raises the error naming the culprit when the
    routine fails: numpy raises; CuPy does not, so its result is checked (``failed(y)``:
    non-finite values by default)."""
    try:
        y = compute()
    except np.linalg.LinAlgError as e:
        on_singular()
        raise LinAlgError(str(e)) from None   # a failure the check above did not pin down
    if xp is not np and bool(xp.isfinite(a).all()) and (
            failed(y) if failed is not None else not bool(xp.isfinite(y).all())):
        on_singular()
    return y


def _inverse(xp, a):
    return _solved(xp, a, lambda: xp.linalg.inv(a), lambda: _raise_singular(xp, a, "linalg.inv"))


class LinalgInvExBackward0(Op):
    """Y = A^-1"""
    saves_output = True
    saved_names = ("inverse",)

    def forward(self, xp, a):
        return _inverse(xp, a)

    def backward(self, F, gy, y):
        yt = _mT(F, y)
        return -F.matmul(F.matmul(yt, gy), yt)


def _cofactors(xp, a):
    """d det(A) / dA for any A, singular ones included: det(U) det(V) U diag(prod_{j!=i} s_j) V^T
    from A = U diag(s) V^T."""
    u, s, vh = xp.linalg.svd(a)
    n = s.shape[-1]
    others = xp.where(xp.eye(n, dtype=bool), 1, s[..., None, :]).prod(axis=-1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    return xp.matmul(u * others[..., None, :], vh) * xp.asarray(sign)[..., None, None]


class LinalgDetBackward0(Op):
    """y = det(A)"""
    saves = (0,)
    saves_output = True
    saved_names = ("A", "result")

    def forward(self, xp, a):
        return xp.asarray(xp.linalg.det(a))

    def backward(self, F, gy, a, y):
        g = F.expand_dims(gy, (-2, -1))
        if bool((_raw(y) != 0).all()):
            return g * F.expand_dims(y, (-2, -1)) * _mT(F, _inv(F, a))
        if not F.fast:
            raise NotImplementedError("double backward through det of a singular matrix is not "
                                      "supported by gpugrad")
        return g * _cofactors(xp_of(a), a)


class LinalgSlogdetBackward0(Op):
    """(sign, log|det(A)|); only log|det| is differentiable"""
    saves = (0,)
    saved_names = ("A",)

    def forward(self, xp, a):
        sign, logabs = xp.linalg.slogdet(a)
        return xp.asarray(sign), xp.asarray(logabs)

    def backward(self, F, grads, a):
        g = grads[1]
        return None if g is None else F.expand_dims(g, (-2, -1)) * _mT(F, _inv(F, a))


LinalgSlogdetBackward0.n_outputs = 2


class LinalgSolveExBackward0(Op):
    """X = A^-1 B   (B a batch of matrices; batch dimensions broadcast)"""
    saves = (0,)
    saves_output = True
    saved_names = ("A", "result")
    broadcasts = True

    def forward(self, xp, a, b):
        def singular():
            for k, m in enumerate(_batches(a)):
                if _zero_pivot(xp, m):
                    raise LinAlgError(f"torch.linalg.solve: {_where(a, k)}The solver failed "
                                      f"because the input matrix is singular.")
        return _solved(xp, a, lambda: _solve_arrays(xp, a, b), singular)

    def backward(self, F, gy, a, y):
        gb = _solve(F, _mT(F, a), gy)
        ga = -F.matmul(gb, _mT(F, y)) if self.needs_input_grad[0] else None
        return ga, gb


# -- checks -------------------------------------------------------------------------------------
def _matrices(fn, a, square=True):
    if a.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_name(a.dtype).capitalize()}")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


# -- public functions ---------------------------------------------------------------------------
@export("inverse", method=True)
def inv(A):
    _matrices("linalg.inv", A)
    return LinalgInvExBackward0.apply(A)


inverse = inv


@export("det", method=True)
def det(A):
    _matrices("linalg.det", A)
    return LinalgDetBackward0.apply(A)


SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
SlogdetResult.__module__ = "gpugrad.return_types"


@export("slogdet", method=True)
def slogdet(A):
    _matrices("linalg.slogdet", A)
    sign, logabsdet = LinalgSlogdetBackward0.apply(A)
    sign._rg, sign.grad_fn = False, None   # the sign is not differentiable
    return SlogdetResult(sign, logabsdet)


@export("logdet", method=True)
def logdet(A):
    """log det(A): nan for a negative determinant, -inf for a singular A (as PyTorch)."""
    from ..pointwise.unary import log
    sign, logabsdet = slogdet(A)
    return logabsdet + log(sign)


def solve(A, B, *, left=True):
    from ..shape.views import squeeze, unsqueeze
    _matrices("linalg.solve", A)
    if B.dtype != A.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {scalar_name(A.dtype).capitalize()} and B of type "
                           f"{scalar_name(B.dtype).capitalize()} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if not left:   # X A = B  <=>  A^T X^T = B^T
        if vector:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                               f"XA = B ({A.shape[-2]}x{A.shape[-1]} and {B.shape[-1]}x1)")
        return solve(A.mT, B.mT).mT
    b = unsqueeze(B, -1) if vector else B
    n = A.shape[-1]
    if b.shape[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {b.shape[-2]}x{b.shape[-1]})")
    x = LinalgSolveExBackward0.apply(A, b)
    return squeeze(x, -1) if vector else x


OPS = [LinalgInvExBackward0, LinalgDetBackward0, LinalgSlogdetBackward0, LinalgSolveExBackward0]


LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
CholeskyExResult = namedtuple("linalg_cholesky_ex", ["L", "info"])
InvExResult = namedtuple("linalg_inv_ex", ["inverse", "info"])
SolveExResult = namedtuple("linalg_solve_ex", ["result", "info"])
for _t in (LstsqResult, CholeskyExResult, InvExResult, SolveExResult):
    _t.__module__ = "gpugrad.return_types"

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _empty(like, dtype=None):
    xp = xp_of(like._data)
    return Tensor._make(xp.empty((0,), dtype=dtype or like._data.dtype))


# -- the _ex variants: failures reported in info ------------------------------------------------
def _info(A, codes):
    xp = xp_of(A._data)
    return Tensor._make(xp.asarray(np.asarray(codes, dtype=np.int32).reshape(A.shape[:-2])))


def _replace_failed(A, info):
    """A with each failed matrix replaced by the identity (its result is then overwritten)."""
    from ..pointwise.minmax import where
    xp = xp_of(A._data)
    failed = (info._data != 0)[..., None, None]
    return where(Tensor._make(failed), Tensor._make(xp.eye(A.shape[-1], dtype=A._data.dtype)), A)


def _singular_codes(A):
    a = A._data
    return [_zero_pivot(xp_of(a), m) for m in _batches(a)]


def _nan_where_failed(y, info, vector=False):
    from ..pointwise.minmax import where
    failed = info._data != 0
    failed = failed[..., None] if vector else failed[..., None, None]
    return where(Tensor._make(failed), math.nan, y)


def inv_ex(A, *, check_errors=False):
    """(A^-1, info): info is 0, or the 1-based position of the first zero pivot of the LU
    factorisation (that inverse is then nan)."""
    _matrices("linalg.inv", A)
    try:
        return InvExResult(inv(A), _info(A, np.zeros(A.shape[:-2])))
    except LinAlgError:
        codes = _singular_codes(A)
    if check_errors:
        b, k = next((b, k) for b, k in enumerate(codes) if k)
        raise LinAlgError(f"linalg.inv_ex: {_where(A, b)}The diagonal element {k} is zero, the "
                          f"inversion could not be completed because the input matrix is "
                          f"singular.")
    info = _info(A, codes)
    return InvExResult(_nan_where_failed(inv(_replace_failed(A, info)), info), info)


def solve_ex(A, B, *, left=True, check_errors=False):
    """(X, info) as ``linalg.solve``; a singular A gives info > 0 and a nan X."""
    _matrices("linalg.solve", A)
    try:
        return SolveExResult(solve(A, B, left=left), _info(A, np.zeros(A.shape[:-2])))
    except LinAlgError:
        codes = _singular_codes(A)
    if check_errors:
        b = next(b for b, k in enumerate(codes) if k)
        raise LinAlgError(f"torch.linalg.solve_ex: {_where(A, b)}The solver failed because the "
                          f"input matrix is singular.")
    info = _info(A, codes)
    x = solve(_replace_failed(A, info), B, left=left)
    return SolveExResult(_nan_where_failed(x, info, x.ndim == A.ndim - 1), info)


def _prod(shape):
    return math.prod(int(s) for s in shape)


def tensorinv(A, ind=2):
    """The inverse with respect to tensordot over ``ind`` dimensions: the matrix inverse of A
    seen as prod(shape[:ind]) x prod(shape[ind:]), reshaped to shape[ind:] + shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = _prod(A.shape[:ind]), _prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*A.shape[ind:], *A.shape[:ind])


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B; ``dims`` (of A) are moved last first."""
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    rows, cols = _prod(A.shape[:B.ndim]), _prod(A.shape[B.ndim:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but "
                           f"got {cols} != {rows}")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(*A.shape[B.ndim:])
