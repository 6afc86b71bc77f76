"""F.interpolate's bicubic, trilinear, antialiased and 3-D modes against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F


def test_interpolate_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    cases = [((2, 3, 4, 5), dict(size=(7, 3), mode="bicubic")),
             ((2, 3, 6, 9), dict(scale_factor=0.6, mode="bicubic", align_corners=True)),
             ((2, 3, 6, 9), dict(scale_factor=0.4, mode="bilinear", antialias=True)),
             ((2, 3, 6, 9), dict(size=(4, 11), mode="bicubic", antialias=True)),
             ((2, 3, 6, 9), dict(size=(2, 3), mode="bilinear", antialias=True,
                                 align_corners=True)),
             ((1, 2, 3, 4, 5), dict(scale_factor=1.7, mode="trilinear")),
             ((1, 2, 3, 4, 5), dict(size=(5, 2, 7), mode="trilinear", align_corners=True)),
             ((1, 2, 3, 4, 5), dict(size=(5, 2, 7), mode="nearest")),
             ((1, 2, 3, 4, 5), dict(size=(6, 3, 4), mode="nearest-exact")),
             ((1, 2, 3, 4, 5), dict(size=(2, 3, 3), mode="area"))]
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-5)):
        for shape, kw in cases:
            x = rng.standard_normal(shape).astype(dtype)
            xt, xg = torch.tensor(x, requires_grad=True), gpugrad.tensor(x, requires_grad=True)
            yt, yg = torch.nn.functional.interpolate(xt, **kw), F.interpolate(xg, **kw)
            g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
            yt.backward(torch.tensor(g))
            yg.backward(gpugrad.tensor(g))
            np.testing.assert_allclose(to_numpy(yg), yt.detach().numpy(), rtol=tol, atol=tol)
            np.testing.assert_allclose(to_numpy(xg.grad), xt.grad.numpy(), rtol=tol, atol=tol)
            if kw["mode"] != "area":
                assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__
    up = nn.Upsample(scale_factor=2, mode="bicubic", align_corners=False)
    x = rng.standard_normal((1, 1, 3, 3))
    np.testing.assert_allclose(to_numpy(up(gpugrad.tensor(x))), torch.nn.Upsample(
        scale_factor=2, mode="bicubic")(torch.tensor(x)).numpy(), rtol=1e-12)
