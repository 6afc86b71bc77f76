"""PyTorch as the oracle (skipped without torch) over the top-level functions: stacking and shape
builders, numerics (cdist, searchsorted, histc, cummax, quantile, cov ...) and their gradients."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad

# -- PyTorch as an oracle -------------------------------------------------------------------------
ORACLE = {
    "tensordot": lambda m, a, b: m.tensordot(a, b, dims=([0], [0])),
    "atleast_3d": lambda m, a, b: m.atleast_3d(a[0]),
    "hstack": lambda m, a, b: m.hstack([a, a]),
    "vstack": lambda m, a, b: m.vstack([a[0], a[1]]),
    "dstack": lambda m, a, b: m.dstack([a, a]),
    "column_stack": lambda m, a, b: m.column_stack([a[0], a.T]),
    "block_diag": lambda m, a, b: m.block_diag(a, b[0]),
    "cartesian_prod": lambda m, a, b: m.cartesian_prod(a[0], b[0]),
    "combinations": lambda m, a, b: m.combinations(a[0], 3),
    "diag_embed": lambda m, a, b: m.diag_embed(a, -1, 0, 1),
    "cdist": lambda m, a, b: m.cdist(a.T, b.T),
    "cdist_p1": lambda m, a, b: m.cdist(a.T, b.T, p=1),
    "searchsorted": lambda m, a, b: m.searchsorted(m.sort(a[0]).values, b),
    "bucketize": lambda m, a, b: m.bucketize(a, m.sort(b[0]).values, right=True),
    "histc": lambda m, a, b: m.histc(a, 5),
    "cummax": lambda m, a, b: tuple(m.cummax(m.round(a), 1)),
    "cummin": lambda m, a, b: tuple(m.cummin(m.round(a), 0)),
    "fmax": lambda m, a, b: m.fmax(a, m.where(b[:, :3] > 0, b[:, :3], m.tensor(float("nan")))),
    "float_power": lambda m, a, b: m.float_power(a.abs(), 1.5),
    "quantile": lambda m, a, b: m.quantile(a, m.tensor([0.25, 0.6], dtype=a.dtype), dim=0),
    "nanquantile": lambda m, a, b: m.nanquantile(m.where(a > 1, a * 0 + float("nan"), a), 0.7,
                                                 interpolation="nearest"),
    "nanmedian": lambda m, a, b: m.nanmedian(m.where(a > 1, a * 0 + float("nan"), a)),
    "cov": lambda m, a, b: m.cov(a, correction=0),
    "corrcoef": lambda m, a, b: m.corrcoef(b),
    "logspace": lambda m, a, b: m.logspace(0, 2, 5, base=3.0),
    "matrix_exp": lambda m, a, b: m.matrix_exp(b[:, :2]),
    "renorm": lambda m, a, b: a.renorm(1, 1, 0.5),
    "sum_to_size": lambda m, a, b: a.sum_to_size(1, 3),
    "index_put": lambda m, a, b: a.index_put((m.tensor([0, 1, 0]),), b[0, :3],
                                             accumulate=True),
    "unique_consecutive": lambda m, a, b: m.unique_consecutive(
        m.round(a * 0.3), return_inverse=True, return_counts=True),
    "promote_types": lambda m, a, b: m.zeros(1, dtype=m.promote_types(m.float16, m.int64)),
    "bitwise": lambda m, a, b: (m.round(a * 10).long() << 2) ^ 5,
}


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_against_torch(name, rng):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    fn = ORACLE[name]
    ours = fn(gpugrad, gpugrad.tensor(a), gpugrad.tensor(b))
    theirs = fn(torch, torch.tensor(a), torch.tensor(b))
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype).replace("torch.", "")
        np.testing.assert_allclose(to_numpy(o), t.numpy(), rtol=1e-10, atol=1e-12)
