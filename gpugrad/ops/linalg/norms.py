"""Norms and distances: ``gpugrad.linalg``'s vector_norm, matrix_norm, norm, svdvals and cond;
dist and cdist.
"""
from __future__ import annotations

import math

from ..._arguments import expect_tensors
from ..._exports import export, tensor_method
from ...tensor import Tensor, scalar_name
from ...tensor_inplace import inplace
from .._op import Op
from .decompositions import svd
from .solvers import inv_ex


class LinalgSvdBackward0(Op):
    """S = the singular values of A, descending (svdvals); gA = U diag(gS) Vh"""
    __slots__ = ("u", "vh")
    saves = (0,)
    saved_names = ("A",)
    temps = ("u", "vh")

    def forward(self, xp, a):
        self.u, s, self.vh = xp.linalg.svd(a, full_matrices=False)
        return s

    def backward(self, F, gs, a):
        if F.fast:
            return F.matmul(self.u * gs[..., None, :], self.vh)
        # under create_graph, U and Vh as differentiable functions of A (full SVD: decompositions)
        from .decompositions import svd
        u, _, vh = svd(a, full_matrices=False)
        return F.matmul(u * F.expand_dims(gs, -2), vh)


def svdvals(A):
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return LinalgSvdBackward0.apply(A)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    from ..reduction.reduce import LinalgVectorNormBackward0, _axes
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        "str")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {scalar_name(x.dtype).capitalize()}")
    axes = _axes(dim, x.ndim)
    if ord == -math.inf:   # the smallest magnitude, as a composition
        from ..reduction.extrema import amin
        axes = tuple(range(x.ndim)) if axes is None else axes
        rest = [d for d in range(x.ndim) if d not in axes]
        flat = x.abs().permute(*rest, *axes).reshape(*(x.shape[d] for d in rest), -1)
        y = amin(flat, -1) if flat.ndim else flat
        return y.reshape(*(1 if d in axes else n for d, n in enumerate(x.shape))) if keepdim else y
    return LinalgVectorNormBackward0.apply(x, ord=float(ord), axes=axes, keepdims=keepdim)


def _two_dims(fn, A, dim):
    dims = tuple(dim)
    if len(dims) != 2:
        raise RuntimeError(f"{fn}: dim must be a 2-tuple. Got {' '.join(map(str, dims))}")
    d0, d1 = (A._dim(d) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"{fn}: dims must be different. Got ({dims[0]}, {dims[1]})")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    from ..reduction.extrema import amax, amin
    from ..reduction.reduce import sum as sum_
    from ..shape.views import unsqueeze
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    d0, d1 = _two_dims("linalg.matrix_norm", A, dim)
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        y = sum_(s, -1) if ord == "nuc" else (amax if ord == 2 else amin)(s, -1)
        if keepdim:
            for d in sorted((d0, d1)):
                y = unsqueeze(y, d)
        return y
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
    pick = amax if ord > 0 else amin
    y = pick(sum_(A.abs(), inner, keepdim=True), outer, keepdim=True)
    return y if keepdim else y.squeeze((d0, d1))


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    if ord is None:
        if dim is not None and len(dim) == 2:
            return matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.ndim}D.")
        dim = (0,) if A.ndim == 1 else (-2, -1)
    if len(dim) == 1:
        return vector_norm(A, ord, dim, keepdim, dtype=dtype)
    return matrix_norm(A, ord, dim, keepdim, dtype=dtype)


def _kind_name(dtype):
    return scalar_name(dtype).capitalize()


# -- distances ------------------------------------------------------------------------------------
@export("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """d[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p, from the differences (exact for every
    p; the gradient at a zero distance is 0, as PyTorch's)."""
    if x1.ndim < 2 or x2.ndim < 2:
        bad, name = (x1, "X1") if x1.ndim < 2 else (x2, "X2")
        raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {bad.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype.kind != "f" or x2.dtype.kind != "f":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_kind_name(x1.dtype)}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    return vector_norm(diff, p, -1)


@export("dist", method=True)
def dist(input, other, p=2):
    """||input - other||_p over all entries"""
    expect_tensors("dist", ("input", "other"), input, other)
    return vector_norm(input - other, p)


# -- compositions -------------------------------------------------------------------------------
_COND_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1)


def cond(A, p=None):
    """kappa_p(A) = ||A||_p ||A^-1||_p; for p = None, 2, -2 the ratio of extreme singular values
    (any shape). A singular A gives inf for the norms that need A^-1."""
    from ..pointwise.minmax import where
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or (not isinstance(p, str) and p in (2, -2)):
        s = svd(A, full_matrices=False).S
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    if not (p in ("fro", "nuc") if isinstance(p, str) else p in _COND_ORDS[2:]):
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.cond(ord={p}): A must be batches of square matrices, but "
                           f"they are {A.shape[-2]} by {A.shape[-1]} matrices")
    inverse, info = inv_ex(A)
    value = matrix_norm(A, p) * matrix_norm(where(Tensor._make(
        (info._data != 0)[..., None, None]), 0.0, inverse), p)
    return where(Tensor._make(info._data != 0), math.inf, value)


OPS = [LinalgSvdBackward0]


# -- Tensor methods -------------------------------------------------------------------------------
@tensor_method("renorm")
def _renorm(self, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm, scaled to norm maxnorm."""
    from ..pointwise import minmax
    if self.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {self.ndim} "
                           f"dimensions")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    d = self._dim(dim)
    norms = vector_norm(self, p, [i for i in range(self.ndim) if i != d], keepdim=True)
    factor = minmax.where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
    return self * factor


tensor_method("renorm_")(
    lambda s, p, dim, maxnorm: inplace(s, lambda t: _renorm(t, p, dim, maxnorm)))


@export("renorm")
def renorm(input, p, dim, maxnorm):
    return input.renorm(p, dim, maxnorm)
