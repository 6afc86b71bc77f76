"""Distances: F.pdist, F.normalize, cosine similarity and pairwise distance against numpy,
with gradcheck."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
import gpugrad.nn.functional as F
from gpugrad.autograd import gradcheck, gradgradcheck
from tests.nn._gradients import grads


def test_pdist(device, rng):
    rows = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]])
    y, (g,) = grads(F.pdist, rows, device=device)
    r2 = math.sqrt(2)
    np.testing.assert_allclose(y, [0, r2, r2], rtol=1e-15)
    # d |x_i - x_j| / d x_i is the unit vector from x_j to x_i (0 for equal rows)
    np.testing.assert_allclose(g, [[1 / r2, -1 / r2], [1 / r2, -1 / r2], [-r2, r2]], rtol=1e-15)
    for p, want in [(1, [0, 2, 2]), (math.inf, [0, 1, 1]), (0, [0, 2, 2])]:
        np.testing.assert_allclose(to_numpy(F.pdist(tensor(rows, device), p)), want)
    x = rng.standard_normal((4, 3))
    want = [np.linalg.norm(x[i] - x[j], 1.5) for i in range(4) for j in range(i + 1, 4)]
    np.testing.assert_allclose(to_numpy(F.pdist(tensor(x, device), 1.5)), want, rtol=1e-12)
    assert F.pdist(tensor(x[:1], device)).shape == (0,)
    a = tensor(x, device, requires_grad=True)
    assert gradcheck(F.pdist, (a,)) and gradgradcheck(F.pdist, (a,))
    for arr, p, msg in [(np.ones((2, 3, 4)), 2, "pdist only supports 2D tensors, got: 3D"),
                        (np.ones((2, 3)), -1, "pdist only supports non-negative p values")]:
        with pytest.raises(RuntimeError, match="^" + msg + "$"):
            F.pdist(tensor(arr), p)
    with pytest.raises(RuntimeError, match="^pdist only supports floating-point dtypes$"):
        F.pdist(gpugrad.ones(2, 3, dtype=gpugrad.int64))


def test_normalize_cosine_similarity_and_pairwise_distance_match_numpy(device, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((1, 4))
    T = lambda v: tensor(v, device)   # noqa: E731
    np.testing.assert_allclose(to_numpy(F.normalize(T(a))),
                               a / np.linalg.norm(a, axis=1, keepdims=True), rtol=1e-14)
    np.testing.assert_allclose(to_numpy(F.normalize(T(a), p=1, dim=0)),
                               a / np.abs(a).sum(0), rtol=1e-14)
    assert np.all(to_numpy(F.normalize(T(np.zeros((2, 3))))) == 0)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(to_numpy(F.cosine_similarity(T(a), T(b))), cos, rtol=1e-14)
    np.testing.assert_allclose(to_numpy(nn.CosineSimilarity(dim=0)(T(a.T), T(b.T))), cos,
                               rtol=1e-14)
    assert to_numpy(F.cosine_similarity(T(np.zeros((1, 3))), T(np.ones((1, 3))))).tolist() == [0]
    dist = np.linalg.norm(a - b + 1e-6, axis=-1)
    np.testing.assert_allclose(to_numpy(F.pairwise_distance(T(a), T(b))), dist, rtol=1e-14)
    np.testing.assert_allclose(to_numpy(nn.PairwiseDistance(p=1, keepdim=True)(T(a), T(b[0]))),
                               np.abs(a - b + 1e-6).sum(-1, keepdims=True), rtol=1e-14)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of "
                                           r"tensor b \(2\) at non-singleton dimension 0"):
        F.cosine_similarity(T(a), T(a[:2]))


def test_distances_gradcheck(rng):
    a = tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = tensor(rng.standard_normal((1, 4)), requires_grad=True)
    assert gradcheck(lambda x: F.normalize(x, dim=1), (a,))
    assert gradcheck(F.cosine_similarity, (a, b))
    assert gradcheck(lambda x, y: F.pairwise_distance(x, y, p=3), (a, b))
