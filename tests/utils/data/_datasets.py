"""Small datasets and seeded generators shared by the tests of ``gpugrad.utils.data``."""
from __future__ import annotations

import gpugrad
from gpugrad.utils.data import Dataset, IterableDataset, TensorDataset


def gen(seed):
    return gpugrad.Generator().manual_seed(seed)


def perm(n, seed):
    """The permutation a generator seeded with ``seed`` draws first."""
    return gpugrad.randperm(n, generator=gen(seed)).tolist()


def base_seed(g):
    """What each DataLoader iterator draws from its generator first, as PyTorch's does."""
    return gpugrad.empty((), dtype=gpugrad.int64).random_(generator=g).item()


def shuffled(n, seed):
    """The order a shuffling DataLoader whose generator is seeded with ``seed`` reads ``n``
    samples in on its first epoch: the iterator's base seed is drawn, then the permutation."""
    g = gen(seed)
    base_seed(g)
    return gpugrad.randperm(n, generator=g).tolist()


def pairs(n=10):
    """``TensorDataset`` whose sample i is ``([2i, 2i + 1], i)``."""
    return TensorDataset(gpugrad.arange(2 * n, dtype=gpugrad.float32).reshape(n, 2),
                         gpugrad.arange(n))


def labels(loader):
    return [b[1].tolist() for b in loader]


class Range(Dataset):
    """Map-style: sample i is i (a Python int)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return i


class Stream(IterableDataset):
    """Iterable-style: the ints start, ..., stop - 1 (with a length only when asked for)."""

    def __init__(self, start, stop):
        self.start, self.stop = start, stop

    def __iter__(self):
        return iter(range(self.start, self.stop))


class SizedStream(Stream):
    def __len__(self):
        return self.stop - self.start
