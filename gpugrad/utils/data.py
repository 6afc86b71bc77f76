"""Minimal data loading: ``Dataset``, ``TensorDataset``, samplers and ``DataLoader``.

``DataLoader`` over a ``TensorDataset`` with the default collate indexes each tensor once per batch
(one gather) instead of stacking ``batch_size`` single samples; the batches are the same.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .._creation import arange, default_generator, randperm, tensor
from ..ops.shape import stack
from ..tensor import Tensor

__all__ = ["Dataset", "TensorDataset", "Sampler", "SequentialSampler", "RandomSampler",
           "BatchSampler", "DataLoader", "default_collate"]


class Dataset:
    """Anything with ``__getitem__(index)`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors share their first size."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Sampler:
    def __iter__(self):  # pragma: no cover - every sampler defines it
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation each epoch, drawn from ``generator`` (default: the global one, so
    ``gpugrad.manual_seed`` makes the order reproducible)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        if replacement or num_samples is not None:
            raise NotImplementedError("RandomSampler: only permutations (replacement=False, "
                                      "num_samples=None) are supported")
        self.data_source = data_source
        self.generator = generator

    def permutation(self):
        return randperm(len(self.data_source), generator=self.generator or default_generator)

    def __iter__(self):
        return iter(self.permutation().tolist())

    def __len__(self):
        return len(self.data_source)


class BatchSampler(Sampler):
    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)


def default_collate(batch):
    """Stack samples: tensors -> one tensor, numbers -> a tensor, tuples/lists/dicts -> the same
    structure of collated fields."""
    first = batch[0]
    if isinstance(first, Tensor):
        return stack(list(batch))
    if isinstance(first, np.ndarray):
        return stack([tensor(b) for b in batch])
    if isinstance(first, bool):
        return tensor(list(batch))
    if isinstance(first, numbers.Integral):
        return tensor(list(batch))
    if isinstance(first, numbers.Real):
        return tensor(list(batch), dtype="float64")
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, dict):
        return {k: default_collate([b[k] for b in batch]) for k in first}
    if isinstance(first, (tuple, list)):
        if any(len(b) != len(first) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(list(f)) for f in zip(*batch)]
        return tuple(fields) if isinstance(first, tuple) else fields
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                    f"or lists; found {type(first).__name__}")


class DataLoader:
    """Iterate over ``dataset`` in batches: ``for x, y in DataLoader(ds, batch_size=64,
    shuffle=True, generator=gpugrad.Generator().manual_seed(0))``. Single process."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, generator=None, **_ignored):
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        self.dataset = dataset
        self.batch_size = None if batch_sampler is not None else batch_size
        self.drop_last = drop_last
        self.num_workers = num_workers
        self.generator = generator
        if sampler is None:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        self.sampler = sampler
        if batch_sampler is None and batch_size is not None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn or default_collate
        self._fast = (type(dataset) is TensorDataset and self.collate_fn is default_collate
                      and type(batch_sampler) is BatchSampler
                      and type(sampler) in (SequentialSampler, RandomSampler))

    def __len__(self):
        if self.batch_sampler is None:
            return len(self.sampler)
        return len(self.batch_sampler)

    def __iter__(self):
        if self._fast:
            return self._gather_batches()
        if self.batch_sampler is None:   # batch_size=None: samples one by one, uncollated
            return (self.dataset[i] for i in self.sampler)
        return (self.collate_fn([self.dataset[i] for i in idx]) for idx in self.batch_sampler)

    def _gather_batches(self):
        """TensorDataset + default collate: each batch is one indexed gather per tensor (a copy,
        as stacking would give)."""
        n, bs = len(self.dataset), self.batch_size
        device = self.dataset.tensors[0].device
        if type(self.sampler) is RandomSampler:
            order = self.sampler.permutation().to(device)
        else:
            order = arange(n, device=device)
        stop = n - n % bs if self.drop_last else n
        for start in range(0, stop, bs):
            idx = order[start:start + bs]
            yield tuple(t[idx] for t in self.dataset.tensors)
