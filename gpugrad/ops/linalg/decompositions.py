"""Matrix decompositions of ``gpugrad.linalg`` with their gradients: qr, eigh / eigvalsh, svd,
pinv, matrix_rank, cholesky / cholesky_ex; and eig / eigvals and householder_product as
compositions.

Each op keeps its outputs (``temps``) for plain backward. Under ``create_graph=True`` it recomputes
them from the saved input with the recorded public function, so the backward formula, written
against ``F``, builds a graph that is differentiable again.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..._backend import xp_of
from ...tensor import Tensor, scalar_name
from .._op import Op
from .solvers import (
    CholeskyExResult,
    LinAlgError,
    _batches,
    _info,
    _inv,
    _matrices,
    _mT,
    _raw,
    _replace_failed,
    _solved,
    _where,
)
from .triangular import _tri

QrResult = namedtuple("linalg_qr", ["Q", "R"])
EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SvdResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
for _t in (QrResult, EighResult, SvdResult):
    _t.__module__ = "gpugrad.return_types"

QR_MODE_R = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
             "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
             "linalg.qr.")
QR_COMPLETE = "The QR decomposition is not differentiable when mode='complete' and nrows > ncols."


def _eye(x, n):
    r = _raw(x)
    return xp_of(r).eye(n, dtype=r.dtype)


# -- QR -----------------------------------------------------------------------------------------
def _qr_tall_grad(F, q, r, gq, gr):
    """A = Q R with Q m x n orthonormal, R n x n upper (m >= n): with N = gR R^T - Q^T gQ and
    M = triu(N) + triu(N, 1)^T (N's upper triangle made symmetric), gA = (gQ + Q M) R^-T."""
    n = r.shape[-1]
    nn = F.matmul(gr, _mT(F, r)) if gr is not None else 0
    if gq is not None:
        nn = nn - F.matmul(_mT(F, q), gq)
    mm = F.triu(nn, 0) + _mT(F, F.triu(nn, 1))
    b = F.matmul(q, mm) if n else q
    if gq is not None:
        b = b + gq
    return _tri(F, _mT(F, r), b, False, left=False)


def qr_grad(F, q, r, gq, gr):
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        return _qr_tall_grad(F, q, r, gq, gr)
    # A = Q [R1 R2] = [X Y]: R2 = Q^T Y, so Y's gradient is Q gR2 and Q's gains Y gR2^T
    gr1 = gr2 = None
    if gr is not None:
        gr1, gr2 = gr[..., :m], gr[..., m:]
        extra = F.matmul(F.matmul(q, r[..., m:]), _mT(F, gr2))
        gq = extra if gq is None else gq + extra
    gx = _qr_tall_grad(F, q, r[..., :m], gq, gr1)
    gy = F.matmul(q, gr2) if gr2 is not None else F.zeros_like(r[..., m:])
    return F.concatenate([gx, gy], -1)


class LinalgQrBackward0(Op):
    """(Q, R) with A = Q R, Q orthonormal columns, R upper triangular"""
    __slots__ = ("mode", "q", "r")
    saves = (0,)
    saved_names = ("A",)
    temps = ("q", "r")

    def forward(self, xp, a, mode="reduced"):
        self.mode = mode
        if mode == "r":
            q, r = xp.empty((0,), dtype=a.dtype), xp.linalg.qr(a, mode="r")
        else:
            q, r = xp.linalg.qr(a, mode=mode)
        self.q, self.r = q, r
        return q, r

    def backward(self, F, grads, a):
        if self.mode == "r":
            raise RuntimeError(QR_MODE_R)
        if self.mode == "complete" and a.shape[-2] > a.shape[-1]:
            raise RuntimeError(QR_COMPLETE)
        q, r = (self.q, self.r) if F.fast else qr(a, self.mode)
        return qr_grad(F, q, r, grads[0], grads[1])


LinalgQrBackward0.n_outputs = 2


# -- eigh ---------------------------------------------------------------------------------------
def eigh_grad(F, w, v, gw, gv):
    """A = V diag(w) V^T: gA = V (diag(gw) + skew(V^T gV) / E) V^T with skew(K) = (K - K^T) / 2
    and E_ij = w_j - w_i (repeated eigenvalues give inf/nan, as PyTorch)."""
    n = w.shape[-1]
    eye = _eye(w, n)
    inner = 0
    if gv is not None:
        k = F.matmul(_mT(F, v), gv)
        e = F.expand_dims(w, -2) - F.expand_dims(w, -1) + eye   # ones on the diagonal
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = (k - _mT(F, k)) * 0.5 / e
    if gw is not None:
        inner = inner + F.expand_dims(gw, -2) * eye
    if gv is None and gw is None:
        return None
    return F.matmul(F.matmul(v, inner), _mT(F, v))


class LinalgEighBackward0(Op):
    """(w, V) with A = V diag(w) V^T, w ascending (only the UPLO triangle of A is read)"""
    __slots__ = ("uplo", "w", "v")
    saves = (0,)
    saved_names = ("A",)
    temps = ("w", "v")

    def forward(self, xp, a, UPLO="L"):  # noqa: N803
        self.uplo = UPLO
        self.w, self.v = xp.linalg.eigh(a, UPLO=UPLO)
        return self.w, self.v

    def backward(self, F, grads, a):
        w, v = (self.w, self.v) if F.fast else eigh(a, self.uplo)
        return eigh_grad(F, w, v, grads[0], grads[1])


LinalgEighBackward0.n_outputs = 2


# -- SVD ----------------------------------------------------------------------------------------
def svd_grad(F, u, s, vh, gu, gs, gvh):
    """A = U diag(s) V^T (reduced, k = min(m, n)), with J = U^T gU, K = V^T gV and
    E_ij = s_j^2 - s_i^2:
    gA = U [diag(gs) + ((J - J^T) / E) S + S ((K - K^T) / E)] V^T
         + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)."""
    m, k, n = u.shape[-2], s.shape[-1], vh.shape[-1]
    eye = _eye(s, k)
    s_row, s_col = F.expand_dims(s, -2), F.expand_dims(s, -1)
    s2 = s * s
    e = F.expand_dims(s2, -2) - F.expand_dims(s2, -1) + eye   # ones on the diagonal
    inner, ga = 0, 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if gs is not None:
            inner = F.expand_dims(gs, -2) * eye
        if gu is not None:
            j = F.matmul(_mT(F, u), gu)
            inner = inner + (j - _mT(F, j)) / e * s_row
            if m > k:
                ga = F.matmul((gu - F.matmul(u, j)) / s_row, vh)
        if gvh is not None:
            kk = F.matmul(vh, _mT(F, gvh))
            inner = inner + s_col * ((kk - _mT(F, kk)) / e)
            if n > k:
                ga = ga + F.matmul(u, (gvh - F.matmul(_mT(F, kk), vh)) / s_col)
    if gs is None and gu is None and gvh is None:
        return None
    return F.matmul(F.matmul(u, inner), vh) + ga


class LinalgSvdBackward0(Op):
    """(U, S, Vh) with A = U diag(S) Vh, S descending"""
    __slots__ = ("full", "u", "s", "vh")
    saves = (0,)
    saved_names = ("A",)
    temps = ("u", "s", "vh")

    def forward(self, xp, a, full_matrices=True):
        self.full = full_matrices
        self.u, self.s, self.vh = xp.linalg.svd(a, full_matrices=full_matrices)
        return self.u, self.s, self.vh

    def backward(self, F, grads, a):
        gu, gs, gvh = grads
        k = min(a.shape[-2:])
        u, s, vh = (self.u, self.s, self.vh) if F.fast else svd(a, full_matrices=False)
        if self.full:   # the extra columns of U / rows of Vh do not enter the gradient (PyTorch)
            u, vh = u[..., :k], vh[..., :k, :]
            gu = gu[..., :k] if gu is not None else None
            gvh = gvh[..., :k, :] if gvh is not None else None
        return svd_grad(F, u, s, vh, gu, gs, gvh)


LinalgSvdBackward0.n_outputs = 3


# -- pseudo-inverse -----------------------------------------------------------------------------
def _threshold(xp, top, atol, rtol):
    """max(atol, rtol * top) per matrix, with a trailing axis to compare singular values."""
    return xp.maximum(xp.asarray(atol, dtype=top.dtype), rtol * top)[..., None]


class LinalgPinvBackward0(Op):
    """A+ = V diag(1/s, for s > max(atol, rtol * s_max)) U^T (eigenvalues instead for hermitian)"""
    __slots__ = ("hermitian",)
    saves = (0,)
    saves_output = True
    saved_names = ("self", "result")

    def forward(self, xp, a, atol=0.0, rtol=0.0, hermitian=False):
        self.hermitian = hermitian
        with np.errstate(divide="ignore", invalid="ignore"):
            if hermitian:
                w, v = xp.linalg.eigh(a)
                keep = xp.abs(w) > _threshold(xp, xp.abs(w).max(axis=-1), atol, rtol)
                return xp.matmul(v * xp.where(keep, 1 / w, 0)[..., None, :], xp.swapaxes(v, -1,
                                                                                          -2))
            u, s, vh = xp.linalg.svd(a, full_matrices=False)
            top = s[..., 0] if s.shape[-1] else s.sum(axis=-1)
            keep = s > _threshold(xp, top, atol, rtol)
            return xp.matmul(xp.swapaxes(vh, -1, -2) * xp.where(keep, 1 / s, 0)[..., None, :],
                             xp.swapaxes(u, -1, -2))

    def backward(self, F, g, a, p):
        """dA+ = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+ (constant rank),
        so gA = -A+^T G A+^T + (I - A A+) G^T A+ A+^T + A+^T A+ G^T (I - A+ A)."""
        if self.hermitian:   # the matrix eigh read
            a = F.tril(a, 0) + _mT(F, F.tril(a, -1))
        pt, gt = _mT(F, p), _mT(F, g)
        t = F.matmul(F.matmul(gt, p), pt)
        s = F.matmul(F.matmul(pt, p), gt)
        return (-F.matmul(F.matmul(pt, g), pt) + t - F.matmul(a, F.matmul(p, t))
                + s - F.matmul(F.matmul(s, p), a))


# -- public functions ---------------------------------------------------------------------------
def qr(A, mode="reduced"):
    """(Q, R) with A = Q R. mode 'reduced': Q m x k, R k x n (k = min(m, n)); 'complete': Q
    m x m, R m x n; 'r': R only (Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    _matrices("linalg.qr", A, square=False)
    return QrResult(*LinalgQrBackward0.apply(A, mode=mode))


def _uplo(UPLO):  # noqa: N803
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def _eigh_input(A, UPLO):  # noqa: N803
    _uplo(UPLO)
    if A.ndim >= 2 and A.dtype.kind not in "fc":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{scalar_name(A.dtype).capitalize()}'")
    _matrices("linalg.eigh", A)


def eigh(A, UPLO="L"):  # noqa: N803
    """(eigenvalues ascending, eigenvectors as columns) of the symmetric matrix whose UPLO
    triangle A holds."""
    _eigh_input(A, UPLO)
    return EighResult(*LinalgEighBackward0.apply(A, UPLO=UPLO))


def eigvalsh(A, UPLO="L"):  # noqa: N803
    _eigh_input(A, UPLO)
    return LinalgEighBackward0.apply(A, UPLO=UPLO)[0]


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh. ``driver`` (a cuSOLVER choice in PyTorch) is accepted
    and ignored."""
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _matrices("linalg.svd", A, square=False)
    return SvdResult(*LinalgSvdBackward0.apply(A, full_matrices=full_matrices))


def _tolerances(A, atol, rtol):
    """(atol, rtol) as arrays or floats: rtol defaults to eps * max(m, n) unless a positive
    atol is given (then to 0), as PyTorch."""
    atol = _raw(atol) if isinstance(atol, Tensor) else atol
    rtol = _raw(rtol) if isinstance(rtol, Tensor) else rtol
    if rtol is None:
        positive = atol is not None and (not isinstance(atol, (int, float)) or atol > 0)
        rtol = 0.0 if positive else float(np.finfo(A.dtype).eps) * max(A.shape[-2:])
    return (0.0 if atol is None else atol), rtol


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore-Penrose pseudo-inverse; singular values (|eigenvalues| when hermitian) at most
    max(atol, rtol * the largest) count as zero. ``rcond`` is the older name of ``rtol``."""
    if A.ndim < 2 or A.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.pinv({scalar_name(A.dtype).capitalize()}{list(A.shape)}): "
                           f"expected a tensor with 2 or more dimensions of float, double, "
                           f"cfloat or cdouble types")
    if hermitian:
        _matrices("linalg.eigh", A)
    if rcond is not None:
        rtol = rcond
    atol, rtol = _tolerances(A, atol, rtol)
    return LinalgPinvBackward0.apply(A, atol=atol, rtol=rtol, hermitian=hermitian)


def _values(A, hermitian):
    a = _raw(A)
    xp = xp_of(a)
    if hermitian:
        return xp.abs(xp.linalg.eigvalsh(a))
    return xp.linalg.svd(a, compute_uv=False)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values (|eigenvalues| when hermitian) above
    max(atol, rtol * the largest); ``tol`` is the older name of ``atol`` (with rtol = 0)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if A.dtype.kind != "f":
        raise RuntimeError("This function doesn't handle types other than float and double")
    if hermitian:
        _matrices("linalg.eigh", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    atol, rtol = _tolerances(A, atol, rtol)
    s = _values(A, hermitian)
    xp = xp_of(s)
    top = s.max(axis=-1) if s.shape[-1] else s.sum(axis=-1)
    rank = (s > _threshold(xp, top, atol, rtol)).sum(axis=-1).astype(np.int64)
    return Tensor._make(xp.asarray(rank))


def _not_positive_definite(xp, m):
    """1-based order of the first leading minor of ``m`` that is not positive-definite, or 0
    (Cholesky-Banachiewicz on the lower triangle, as LAPACK reads it)."""
    n = m.shape[-1]
    low = xp.zeros(m.shape, dtype=np.float64 if m.dtype.kind != "c" else np.complex128)
    for j in range(n):
        d = m[j, j] - (low[j, :j] * low[j, :j]).sum()
        if not d > 0:
            return j + 1
        low[j, j] = d ** 0.5
        low[j + 1:, j] = (m[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
    return 0


def _cholesky(xp, a):
    def not_pd():
        for b, m in enumerate(_batches(a)):
            k = _not_positive_definite(xp, m)
            if k:
                raise LinAlgError(f"linalg.cholesky: {_where(a, b)}The factorization could not "
                                  f"be completed because the input is not positive-definite "
                                  f"(the leading minor of order {k} is not positive-definite).")
    # a failed factorisation leaves the failing (non-positive) pivot on the diagonal
    return _solved(xp, a, lambda: xp.linalg.cholesky(a), not_pd, lambda low: not bool(
        (xp.diagonal(low, axis1=-2, axis2=-1) > 0).all()))


class LinalgCholeskyExBackward0(Op):
    """L = cholesky(A), A = L L^T (U = L^T for upper=True)"""
    __slots__ = ("upper",)
    saves_output = True
    saved_names = ("L",)

    def forward(self, xp, a, upper=False):
        self.upper = upper
        low = _cholesky(xp, a)
        return xp.ascontiguousarray(xp.swapaxes(low, -1, -2)) if upper else low

    def backward(self, F, gy, y):
        low, gl = (_mT(F, y), _mT(F, gy)) if self.upper else (y, gy)
        inv_low = _inv(F, low)
        n, yr = y.shape[-1], _raw(y)
        half_diag = 1 - 0.5 * xp_of(yr).eye(n, dtype=yr.dtype)
        phi = F.tril(F.matmul(_mT(F, low), gl), 0) * half_diag
        ga = F.matmul(F.matmul(_mT(F, inv_low), phi), inv_low)
        return (ga + _mT(F, ga)) * 0.5   # symmetric, as A is


def cholesky(A, *, upper=False):
    _matrices("linalg.cholesky", A)
    return LinalgCholeskyExBackward0.apply(A, upper=upper)


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info): info is 0, or the order of the first leading minor that is not
    positive-definite (its L is then the identity, where LAPACK leaves a partial factor)."""
    _matrices("linalg.cholesky", A)
    try:
        low = LinalgCholeskyExBackward0.apply(A, upper=upper)
        return CholeskyExResult(low, _info(A, np.zeros(A.shape[:-2])))
    except LinAlgError:
        a = A._data
        codes = [_not_positive_definite(xp_of(a), m) for m in _batches(a)]
    if check_errors:
        b, k = next((b, k) for b, k in enumerate(codes) if k)
        raise LinAlgError(f"linalg.cholesky_ex: {_where(A, b)}The factorization could not be "
                          f"completed because the input is not positive-definite (the leading "
                          f"minor of order {k} is not positive-definite).")
    info = _info(A, codes)
    return CholeskyExResult(LinalgCholeskyExBackward0.apply(_replace_failed(A, info), upper=upper),
                            info)


def householder_product(A, tau):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, where v_i is column i of A
    below the diagonal with a 1 on it (the Q that geqrf's output encodes)."""
    from .products import matmul
    fn = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    a = A._data
    xp = xp_of(a)
    q = Tensor._make(xp.broadcast_to(xp.eye(m, dtype=a.dtype), A.shape[:-2] + (m, m)).copy())
    rows = xp.arange(m)
    for i in range(k):
        v = A[..., :, i] * (rows > i).astype(a.dtype) + (rows == i).astype(a.dtype)
        qv = matmul(q, v.unsqueeze(-1))
        q = q - (tau[..., i, None, None] * qv) * v.unsqueeze(-2)
    return q[..., :, :n]


def _no_complex(fn, A):
    _matrices(fn, A)
    raise NotImplementedError(f"{fn}: the eigenvalues of a general real matrix are complex, and "
                              f"gpugrad has no complex dtypes; for a symmetric matrix use "
                              f"linalg.eigh / linalg.eigvalsh")


def eig(A):
    _no_complex("linalg.eig", A)


def eigvals(A):
    _no_complex("linalg.eigvals", A)


OPS = [LinalgQrBackward0, LinalgEighBackward0, LinalgSvdBackward0, LinalgPinvBackward0,
       LinalgCholeskyExBackward0]
