"""Transforms onto structured spaces: the simplex (stick breaking), lower Cholesky factors,
positive definite matrices and Cholesky factors of correlation matrices."""
from __future__ import annotations

import math

import numpy as np

import gpugrad

from ..nn.functional import logsigmoid, pad
from ..ops.activation import softplus
from . import constraints
from .transforms import Transform
from .utils import finfo

__all__ = ["CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "StickBreakingTransform"]


def _too_few(shape, n):
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


def vec_to_tril_matrix(vec, diag=0):
    """The (..., n) vector laid row by row into the entries j <= i + diag (diag <= 0) of a
    (..., D, D) matrix, zeros elsewhere."""
    n = vec.shape[-1]
    d = 1
    while len(np.tril_indices(d, diag)[0]) < n:
        d += 1
    if len(np.tril_indices(d, diag)[0]) != n:
        raise ValueError("Input is not a flattened lower-diagonal number")
    rows, cols = np.tril_indices(d, diag)
    index = np.full(d * d, n, dtype=np.int64)   # n points at the zero appended below
    index[rows * d + cols] = np.arange(n)
    padded = gpugrad.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    index = gpugrad.tensor(index, device=vec.device)
    return padded.index_select(-1, index).reshape(tuple(vec.shape[:-1]) + (d, d))


def tril_matrix_to_vec(mat, diag=0):
    """The entries j <= i + diag of the (..., D, D) matrix, row by row, as a (..., n) vector."""
    d = mat.shape[-1]
    rows, cols = np.tril_indices(d, diag)
    index = gpugrad.tensor(rows * d + cols, device=mat.device)
    return mat.reshape(tuple(mat.shape[:-2]) + (d * d,)).index_select(-1, index)


def _stick_offset(x, k):
    """log(K - i) for i = 1..K-1: centres the sticks so x = 0 maps to the uniform simplex"""
    return gpugrad.arange(k, 0, -1, dtype=x.dtype, device=x.device).log()


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex: z_i = sigmoid(x_i - log(K - i)), y_i = z_i prod_{j<i}(1 - z_j),
    y_K = prod_j (1 - z_j); log |det J| = sum_i log y_i + log(1 - z_i) (triangular Jacobian)."""
    bijective = True
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        fi = finfo(x.dtype)
        z = gpugrad.sigmoid(x - _stick_offset(x, x.shape[-1]))
        z = z.clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))
        return pad(z, (0, 1), value=1.0) * pad((1 - z).cumprod(-1), (1, 0), value=1.0)

    def _inverse(self, y):
        """x_i = log y_i - log(1 - sum_{j<=i} y_j) + log(K - i)"""
        y_crop = y[..., :-1]
        rest = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - rest.log() + _stick_offset(y, y_crop.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        shifted = x - _stick_offset(x, x.shape[-1])
        return (-shifted + logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _too_few(shape, 1)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _too_few(shape, 1)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices -> lower Cholesky factors: y = tril(x, -1) + diag(exp(diag x)).
    (Not a bijection of the whole space: the upper triangle is dropped, as PyTorch does.)"""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices -> positive definite ones: y = L L^T, L = LowerCholeskyTransform()(x);
    the inverse goes through the Cholesky factor of y."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(gpugrad.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) -> Cholesky factors of D x D correlation matrices. r = tanh(x) fills the
    strict lower triangle row by row; each row is a signed stick breaking on the unit sphere:
    y_ij = r_ij sqrt(s_ij), y_ii = sqrt(s_ii), s_ij = 1 - sum_{k<j} y_ik^2 = prod_{k<j}(1 - r_ik^2).
    log |det J| = sum_{j<i} (log(1 - r_ij^2) + log(s_ij) / 2)."""
    bijective = True
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        s_sqrt = (1 - r * r).sqrt().cumprod(-1)
        eye = gpugrad.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * pad(s_sqrt[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y):
        """r_ij = y_ij / sqrt(1 - sum_{k<j} y_ik^2); x = atanh(r)"""
        s = pad((1 - (y * y).cumsum(-1))[..., :-1], (1, 0), value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(s, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        s = 1 - (y * y).cumsum(-1)   # s[i, j] here is s_i(j+1) above
        stick = 0.5 * tril_matrix_to_vec(s, diag=-2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape):
        _too_few(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        _too_few(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)
