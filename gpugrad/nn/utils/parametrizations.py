"""Ready-made parametrizations, as ``torch.nn.utils.parametrizations``: ``weight_norm``,
``spectral_norm`` and ``orthogonal``, each registered through ``parametrize``."""
from __future__ import annotations

import math
from enum import Enum, auto

import numpy as np

from ... import _backend, _creation
from ...autograd.grad_mode import no_grad
from ...ops.linalg import solvers
from ...ops.shape import joining
from ...tensor import Tensor
from .. import functional as F
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _as_matrix
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# -- weight norm --------------------------------------------------------------------------------
class _WeightNorm(Module):
    """w = g * v / ||v|| from ``original0`` = g, ``original1`` = v"""

    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """``module.{name} = g * v / ||v||`` with g = ``parametrizations.{name}.original0`` and
    v = ``original1``; the norm is over every dimension but ``dim`` (all of them for None)."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


# -- spectral norm ------------------------------------------------------------------------------
class _SpectralNorm(Module):
    """w / sigma, sigma = u^T W v from the buffers ``_u``, ``_v`` (refined by
    ``n_power_iterations`` power-method steps per forward in training mode); a 1-D weight is
    just divided by its norm."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.dim()
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim % ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            w = self._reshape_weight_to_matrix(weight)
            kw = dict(dtype=w.dtype, device=w.device)
            self.register_buffer("_u", F.normalize(_creation.randn(w.shape[0], **kw), dim=0,
                                                   eps=eps))
            self.register_buffer("_v", F.normalize(_creation.randn(w.shape[1], **kw), dim=0,
                                                   eps=eps))
            self._power_method(w, 15)

    def _reshape_weight_to_matrix(self, weight):
        return _as_matrix(weight, self.dim)

    def _power_method(self, w, n_power_iterations):
        with no_grad():
            for _ in range(n_power_iterations):
                self._u.copy_(F.normalize(w.mv(self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(w.t().mv(self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.dim() == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        w = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(w, self.n_power_iterations)
        # NOTE: clones, so the next in-place refinement does not touch what backward saved
        sigma = self._u.clone().dot(w.mv(self._v.clone()))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """``module.{name} = original / sigma``, sigma the largest singular value of the weight as a
    (size of ``dim``, rest) matrix, estimated by power iteration. ``dim`` defaults to 1 for
    transposed convolutions, else 0."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if getattr(module, "transposed", False) else 0   # ConvTranspose1d-3d
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal ---------------------------------------------------------------------------------
class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _eye_like(a, n):
    return _creation.eye(n, dtype=a.dtype, device=a.device)


def _matrix_exp(a):
    """exp(A) by scaling and squaring: a degree-18 Taylor polynomial of A / 2^s (Horner form),
    squared s times; s is chosen on the host so that ||A / 2^s||_1 <= 1/2."""
    n = a.shape[-1]
    norm1 = float(a.detach().abs().sum(-2).max().item()) if a.numel() else 0.0
    s = max(0, math.ceil(math.log2(norm1)) + 1) if norm1 > 0 else 0
    b = a / 2.0 ** s
    eye = _eye_like(a, n)
    e = eye
    for k in range(18, 0, -1):
        e = eye + b.matmul(e) / k
    for _ in range(s):
        e = e.matmul(e)
    return e


def _householder_product(a, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, v_i the i-th column of the
    strictly lower part of ``a`` (n, k) with a 1 on the diagonal."""
    n, k = a.shape[-2:]
    eye = _eye_like(a, n)
    q = eye[:, :k].expand(*a.shape)
    for i in range(k - 1, -1, -1):
        v = (a[..., :, i] * (_creation.arange(n, device=a.device) > i) + eye[:, i]).unsqueeze(-1)
        q = q - tau[..., i, None, None] * v.matmul(v.mT.matmul(q))
    return q


def _householder_init(q):
    """X with ``forward(X) == q`` for the Householder map without a base: LAPACK geqrf's
    reflectors below the diagonal, the signs of R's diagonal on it (flipped where tau == 0:
    no reflection happened)."""
    xp = _backend.xp_of(q._data)
    h, tau = xp.linalg.qr(q._data, mode="raw")
    a = xp.ascontiguousarray(xp.swapaxes(h, -1, -2))
    d = xp.diagonal(a, axis1=-2, axis2=-1)
    idx = xp.arange(d.shape[-1])
    a[..., idx, idx] = xp.where(tau == 0, -1, 1) * xp.sign(d)
    return Tensor._make(a)


def _make_orthogonal(a):
    """The Q of A = QR with R's diagonal made positive."""
    xp = _backend.xp_of(a._data)
    q, r = xp.linalg.qr(a._data)
    d = xp.sign(xp.diagonal(r, axis1=-2, axis2=-1))
    return Tensor._make(q * xp.where(d == 0, 1, d)[..., None, :])


def _is_orthogonal(q):
    n, k = q.shape[-2:]
    eps = 10 * n * float(np.finfo(q.dtype).eps)
    return bool(q.mT.matmul(q).sub(_eye_like(q, k)).abs().max().item() <= eps)


class _Orthogonal(Module):
    """Q from an unconstrained X: the matrix exponential or Cayley map of the skew-symmetric
    part of X's lower triangle, or a product of Householder reflectors; times the orthogonal
    ``base`` kept from registration when ``use_trivialization``."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x):
        n, k = x.shape[-2:]
        transposed = n < k
        if transposed:
            x = x.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            x = x.tril()
            if n != k:   # embed the tall matrix in a square one
                x = joining.cat([x, x.new_zeros(*x.shape[:-1], n - k)], -1)
            a = x - x.mT   # skew-symmetric
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                q = _matrix_exp(a)
            else:   # (I - A/2)^-1 (I + A/2)
                eye = _eye_like(a, n)
                q = solvers.solve(eye - 0.5 * a, eye + 0.5 * a)
            if n != k:
                q = q[..., :k]
        else:
            a = x.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (a * a).sum(-2))
            q = _householder_product(a, tau)
            # NOTE: the diagonal of X holds +-1 and is neither differentiated nor updated
            q = q * x.diagonal(dim1=-2, dim2=-1).detach().int().to(q.dtype).unsqueeze(-2)
        if "base" in self._buffers:
            q = self.base.matmul(q)
        return q.mT if transposed else q

    def right_inverse(self, q):
        if q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {q.shape}.")
        with no_grad():
            q_init = q
            n, k = q.shape[-2:]
            transpose = n < k
            if transpose:
                q = q.mT
                n, k = k, n
            if "base" not in self._buffers:
                if self.orthogonal_map != _OrthMaps.householder:
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False.")
                a = _householder_init(q)
                return a.mT if transpose else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:   # complete Q to an n x n orthogonal matrix
                extra = _creation.randn(*q.shape[:-2], n, n - k, dtype=q.dtype, device=q.device)
                q = _make_orthogonal(joining.cat([q, extra], -1))
            self.base = q
            # forward(-I) == base for every map (householder: no reflection, diagonal -1)
            neg_eye = -_creation.eye(*q_init.shape[-2:], dtype=q.dtype, device=q.device)
            return neg_eye.expand(*q_init.shape).clone()


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.{name}`` (a matrix or batch of matrices) to have orthonormal columns
    (or rows, for a wide one). ``orthogonal_map``: ``"matrix_exp"`` (default for square),
    ``"cayley"`` or ``"householder"`` (default otherwise)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.dim() < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.dim()} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = ("matrix_exp" if weight.shape[-2] == weight.shape[-1]
                          else "householder")
    orth_enum = _OrthMaps.__members__.get(orthogonal_map)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
