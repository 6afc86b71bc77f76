"""PyTorch as the oracle (skipped without torch) over scatter / index_*, gpugrad.linalg, the
scans, remainders, flips and nan-reductions, and Tensor methods such as kthvalue, mode, unique and
repeat_interleave: the same calls in PyTorch and in gpugrad give the same values, gradients and
node names."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from tests.ops._tensors import t


# -- PyTorch as the oracle -----------------------------------------------------------------------
def _same(fn, *arrays, second=True):
    """fn(gpugrad) == fn(torch): values, gradients and (second) gradients of the gradients."""
    torch = pytest.importorskip("torch")
    ours = [t(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    y, z = fn(gpugrad, ours), fn(torch, theirs)
    np.testing.assert_allclose(to_numpy(y), z.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = np.cos(np.arange(z.numel())).reshape(tuple(z.shape))
    g = gpugrad.autograd.grad(y, ours, t(seed), create_graph=second, allow_unused=True)
    h = torch.autograd.grad(z, theirs, torch.tensor(seed), create_graph=second,
                            allow_unused=True)
    for a, b in zip(g, h):
        np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-9, atol=1e-11)
    if not second:
        return
    w = [np.sin(np.arange(a.size)).reshape(a.shape) for a in arrays]
    sg = sum((a * t(v)).sum() for a, v in zip(g, w) if a.requires_grad)
    sh = sum((b * torch.tensor(v)).sum() for b, v in zip(h, w) if b.requires_grad)
    # sg is 0 when no gradient depends on an input (the op is linear in them): PyTorch's
    # second derivatives must then be zero too
    g2 = [None] * len(ours) if isinstance(sg, int) else gpugrad.autograd.grad(
        sg, ours, allow_unused=True)
    h2 = [np.zeros(a.shape) for a in arrays] if isinstance(sh, int) else torch.autograd.grad(
        sh, theirs, allow_unused=True, materialize_grads=True)
    for a, b in zip(g2, h2):
        got = np.zeros(b.shape) if a is None else to_numpy(a)
        want = b if isinstance(b, np.ndarray) else b.numpy(force=True)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


R = np.random.default_rng(7)
M = R.standard_normal((3, 3)) + 3 * np.eye(3)
V = R.standard_normal((2, 3))
W = R.standard_normal((2, 3))
I_PERM, I_DUP = np.array([[1, 0, 1], [0, 1, 0]]), np.array([[0, 1, 0], [0, 0, 0]])


def _i(lib, a):
    return lib.tensor(a)


ORACLE = [
    ("scatter", lambda L, a: a[0].scatter(0, _i(L, I_PERM), a[1]), (V, W)),
    ("scatter_value", lambda L, a: a[0].scatter(1, _i(L, I_DUP), 0.5), (V,)),
    ("scatter_add", lambda L, a: L.scatter_add(a[0], 0, _i(L, I_DUP), a[1]), (V, W)),
    *[(f"scatter_reduce_{r}_{inc}", lambda L, a, r=r, inc=inc: a[0].scatter_reduce(
        0, _i(L, I_DUP), a[1], r, include_self=inc), (V, W))
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    ("index_add", lambda L, a: a[0].index_add(1, _i(L, np.array([2, 2, 0])), a[1], alpha=3),
     (V, W)),
    ("index_fill", lambda L, a: a[0].index_fill(1, _i(L, np.array([2, 0])), a[1][0, 0]),
     (V, W)),
    ("index_copy", lambda L, a: a[0].index_copy(1, _i(L, np.array([2, 0, 1])), a[1]), (V, W)),
    ("take_along_dim", lambda L, a: L.take_along_dim(a[0], _i(L, np.array([[2], [0]])), 1),
     (V,)),
    ("inv", lambda L, a: L.linalg.inv(a[0]), (M,)),
    ("det", lambda L, a: L.linalg.det(a[0]), (M,)),
    ("slogdet", lambda L, a: L.linalg.slogdet(a[0])[1], (M,)),
    ("solve", lambda L, a: L.linalg.solve(a[0], a[1].mT), (M, V)),
    ("cholesky", lambda L, a: L.linalg.cholesky(a[0] @ a[0].mT), (M,)),
    ("cross", lambda L, a: L.linalg.cross(a[0], a[1]), (V, W)),
    ("matrix_norm_2", lambda L, a: L.linalg.matrix_norm(a[0], 2), (M,)),
    ("matrix_power", lambda L, a: L.linalg.matrix_power(a[0], -3), (M,)),
    ("kron", lambda L, a: L.kron(a[0], a[1]), (V, W)),
    ("cumprod", lambda L, a: L.cumprod(a[0], 1), (V,)),
    ("logcumsumexp", lambda L, a: L.logcumsumexp(a[0], 1), (V,)),
    ("hypot", lambda L, a: L.hypot(a[0], a[1]), (V, W)),
    ("logaddexp", lambda L, a: L.logaddexp(a[0], a[1]), (V, W)),
    ("xlogy", lambda L, a: L.xlogy(a[0], a[1].abs()), (V, W)),
    ("fmod", lambda L, a: L.fmod(a[0], a[1]), (V, W)),
    ("remainder", lambda L, a: L.remainder(a[0], 0.3), (V,)),
    ("diagonal", lambda L, a: a[0].diagonal(1, 0, 1), (M,)),
    ("rot90", lambda L, a: L.rot90(a[0], 3), (V,)),
    ("diff", lambda L, a: L.diff(a[0], 2, 1, append=a[1]), (V, W)),
]


@pytest.mark.parametrize("name, fn, arrays", ORACLE, ids=[o[0] for o in ORACLE])
def test_against_pytorch(name, fn, arrays):
    _same(fn, *arrays, second=name != "matrix_norm_2")


@pytest.mark.parametrize("call", [
    # kthvalue's index among ties is unspecified in PyTorch: its values only
    lambda m, x: m.kthvalue(x, 2, 0).values, lambda m, x: x.mode(0),
    lambda m, x: m.aminmax(x, dim=1),
    lambda m, x: x.unfold(1, 2, 1), lambda m, x: x.repeat_interleave(3, dim=1),
    lambda m, x: m.unique(x.round(), return_inverse=True, return_counts=True)])
def test_more_methods_against_pytorch(call, rng):
    torch = pytest.importorskip("torch")
    x = rng.integers(0, 4, size=(5, 4)).astype(np.float64)
    mine = call(gpugrad, gpugrad.tensor(x))
    theirs = call(torch, torch.tensor(x))
    mine = mine if isinstance(mine, tuple) else (mine,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    for a, b in zip(mine, theirs, strict=True):
        np.testing.assert_array_equal(to_numpy(a), b.numpy())
