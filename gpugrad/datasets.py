"""Built-in toy data sets, generated on the fly (no download), the same for the same seed.

The default is ``spirals``: three interleaved 2-D spiral arms, one class each, which a linear
model cannot separate (about 1/3 accuracy) and a small MLP separates well.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ._creation import from_numpy

Split = namedtuple("Split", ["x_train", "y_train", "x_test", "y_test"])

__all__ = ["spirals", "moons", "load", "DATASETS", "Split"]


def spirals(n_per_class=1000, classes=3, noise=0.3, turns=1.25, seed=0):
    """Arrays ``x`` (N, 2) float32 and ``y`` (N,) int64: class k lies along the arm
    angle = 2 pi (k / classes + turns r) + noise, radius r in [0, 1]."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for k in range(classes):
        r = np.sqrt(rng.uniform(0.0, 1.0, n_per_class))   # sqrt: uniform density along the arm
        theta = 2 * math.pi * (k / classes + turns * r) + rng.normal(0.0, noise, n_per_class) * r
        xs.append(np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1))
        ys.append(np.full(n_per_class, k))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int64)


def moons(n_samples=2000, noise=0.1, seed=0):
    """Two interleaved half circles (scikit-learn's make_moons), classes 0 and 1."""
    rng = np.random.default_rng(seed)
    n0 = n_samples // 2
    a, b = rng.uniform(0, math.pi, n0), rng.uniform(0, math.pi, n_samples - n0)
    x = np.concatenate([np.stack([np.cos(a), np.sin(a)], 1),
                        np.stack([1 - np.cos(b), 0.5 - np.sin(b)], 1)])
    x += rng.normal(0.0, noise, x.shape)
    y = np.concatenate([np.zeros(n0), np.ones(n_samples - n0)])
    return x.astype(np.float32), y.astype(np.int64)


DATASETS = {"spirals": spirals, "moons": moons}


def load(name="spirals", test_fraction=0.25, seed=0, **kwargs) -> Split:
    """A shuffled train/test split of a built-in data set as gpugrad tensors (CPU)."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set '{name}' (choose from {', '.join(DATASETS)})")
    x, y = DATASETS[name](seed=seed, **kwargs)
    order = np.random.default_rng(seed + 1).permutation(len(y))
    n_test = int(round(len(y) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return Split(from_numpy(x[train]), from_numpy(y[train]), from_numpy(x[test]),
                 from_numpy(y[test]))
