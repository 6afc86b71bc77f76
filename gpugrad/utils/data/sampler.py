"""Samplers with PyTorch's names: they say which indices of a dataset a ``DataLoader`` reads, and
in which order (``SequentialSampler``, ``RandomSampler``, ``SubsetRandomSampler``,
``WeightedRandomSampler``), and how they are grouped into batches (``BatchSampler``)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..._creation import Generator, default_generator, multinomial, randint, randperm, tensor
from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


class Sampler:
    """Iterates over indices (or lists of indices, for batch samplers) of a dataset."""

    def __iter__(self):  # pragma: no cover - every sampler defines it
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _check_num_samples(num_samples):
    if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
        raise ValueError(f"num_samples should be a positive integer value, but got "
                         f"num_samples={num_samples}")


_CHUNK = 32   # PyTorch's RandomSampler draws ``randint(high=n, size=(32,))`` at a time


# each multinomial call checks and sums all the weights: larger chunks keep that cost small
_WEIGHTED_CHUNK = 4096


def _chunks(total, chunk=_CHUNK):
    """Sizes of the lazy draws that make up ``total`` samples: full chunks, then the rest."""
    yield from itertools.repeat(chunk, total // chunk)
    if total % chunk:
        yield total % chunk


class RandomSampler(Sampler):
    """A fresh permutation each epoch (or, with ``replacement``, ``num_samples`` independent
    draws), from ``generator``; without one, as PyTorch, each epoch seeds a private generator
    from one draw of the global one, so ``gpugrad.manual_seed`` makes the order reproducible and
    an epoch takes one number from the global stream whatever the data set's size. Without
    replacement, ``num_samples > len(data_source)`` chains
    permutations and cuts the last one short. Draws are made as iteration reaches them (chunks
    of 32 with replacement, one permutation at a time without), as PyTorch's are, so
    ``num_samples=int(1e10)`` (an "infinite" loader) costs no more memory than 100."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={replacement}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        _check_num_samples(self.num_samples)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def epoch_generator(self):
        """The generator of one epoch: the sampler's own, or a private one seeded from the
        global generator."""
        if self.generator is not None:
            return self.generator
        seed = int(randint(0, 2 ** 63 - 1, (), generator=default_generator))
        return Generator().manual_seed(seed)

    def permutation(self, generator=None):
        return randperm(len(self.data_source), generator=generator or self.epoch_generator())

    def __iter__(self):
        n, gen = len(self.data_source), self.epoch_generator()
        if self.replacement:
            for size in _chunks(self.num_samples):
                yield from randint(high=n, size=(size,), generator=gen).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from self.permutation(gen).tolist()
        yield from self.permutation(gen).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a fresh random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices into ``weights``, index ``i`` drawn with probability
    ``weights[i] / sum(weights)`` (with or without replacement)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_num_samples(num_samples)
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = (weights.detach().to(device="cpu", dtype="float64") if isinstance(weights, Tensor)
             else tensor(np.asarray(weights, dtype=np.float64)))
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        self.weights, self.num_samples = w, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self):
        if not self.replacement:   # at most len(weights) draws: one call
            yield from multinomial(self.weights, self.num_samples, False,
                                   generator=self.generator).tolist()
            return
        for size in _chunks(self.num_samples, _WEIGHTED_CHUNK):   # memory: one chunk
            yield from multinomial(self.weights, size, True, generator=self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last one shorter unless
    ``drop_last``."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        it = iter(self.sampler)
        while batch := list(itertools.islice(it, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


class _InfiniteConstantSampler(Sampler):
    """The sampler of an ``IterableDataset``: ``None`` forever (the stream decides the end)."""

    def __iter__(self):
        return itertools.repeat(None)

