"""Data loading with PyTorch's names: datasets (``Dataset``, ``IterableDataset``,
``TensorDataset``, ``StackDataset``, ``ConcatDataset``, ``ChainDataset``, ``Subset``,
``random_split``), samplers, ``default_collate``/``default_convert`` and ``DataLoader``.

``DataLoader`` over a ``TensorDataset`` with the default collate indexes each tensor once per batch
(one gather) instead of stacking ``batch_size`` single samples; the batches are the same.
"""
from __future__ import annotations

import bisect
import collections.abc
import copy
import itertools
import math
import re
import warnings

import numpy as np

from .._creation import arange, as_tensor, default_generator, multinomial, randint, randperm, tensor
from ..ops.shape.joining import stack
from ..tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "default_convert", "get_worker_info"]


# -- datasets -------------------------------------------------------------------------------------
class Dataset:
    """Anything with ``__getitem__(index)`` (and usually ``__len__``); ``a + b`` concatenates."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__``; ``a + b`` chains two streams."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors share their first size."""

    def __init__(self, *tensors):
        n = tensors[0].shape[0]   # no tensors: IndexError, as in PyTorch
        if any(t.shape[0] != n for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Sample ``i`` is ``tuple(d[i] for d in args)`` or ``{k: d[i] for k, d in kwargs}``."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via "
                             "``kwargs``) like input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = args or list(kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The samples of ``datasets`` one after another; ``cumulative_sizes[i]`` is where
    ``datasets[i + 1]`` starts."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        i = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[i][idx - (self.cumulative_sizes[i - 1] if i else 0)]


class ChainDataset(IterableDataset):
    """The streams of ``datasets`` (each an ``IterableDataset``) one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """``dataset`` seen through ``indices``: sample ``i`` is ``dataset[indices[i]]``."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` into non-overlapping ``Subset``s of the given ``lengths``, or of
    fractions of its length that sum to 1 (``floor(frac * n)`` each, the remainder handed out
    one by one from the first split on); one permutation drawn from ``generator``."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            counts.append(math.floor(n * frac))
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an "
                              f"empty dataset.", stacklevel=2)
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, order[end - length:end])
            for end, length in zip(itertools.accumulate(lengths), lengths)]


# -- samplers -------------------------------------------------------------------------------------
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


class RandomSampler(Sampler):
    """A fresh permutation each epoch (or, with ``replacement``, ``num_samples`` independent
    draws), from ``generator`` (default: the global one, so ``gpugrad.manual_seed`` makes the
    order reproducible). Without replacement, ``num_samples > len(data_source)`` chains
    permutations and cuts the last one short."""

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

    def permutation(self):
        return randperm(len(self.data_source), generator=self.generator or default_generator)

    def __iter__(self):
        n, gen = len(self.data_source), self.generator or default_generator
        if self.replacement:
            yield from randint(0, n, (self.num_samples,), generator=gen).tolist()
            return
        for _ in range(self.num_samples // n):
            yield from self.permutation().tolist()
        yield from self.permutation().tolist()[:self.num_samples % n]

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
        yield from multinomial(self.weights, self.num_samples, self.replacement,
                               generator=self.generator).tolist()

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


# -- collation ------------------------------------------------------------------------------------
_NP_STR_OR_OBJECT = re.compile(r"[SaUO]")
_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def _is_numpy(x):
    return type(x).__module__ == "numpy" and type(x).__name__ not in ("str_", "string_", "bytes_")


def _rebuild(elem, values):
    """``values`` in the container type of ``elem`` (a mapping or a sequence), or a plain
    dict/list where that type cannot be rebuilt."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            clone = copy.copy(elem)
            clone.update(values)
            return clone
        if isinstance(elem, collections.abc.Mapping):
            return type(elem)(values)
        if isinstance(elem, collections.abc.MutableSequence):
            clone = copy.copy(elem)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(elem)(values)
    except TypeError:
        return dict(values) if isinstance(elem, collections.abc.Mapping) else list(values)


def default_collate(batch):
    """Stack samples: tensors and numpy arrays -> one tensor with a new leading dimension,
    Python ints/bools -> an int64/bool tensor, floats -> a float64 tensor, numpy scalars -> a
    tensor of their dtype, strings stay a list; mappings, namedtuples and sequences are collated
    field by field (a tuple of fields comes back as a list, as in PyTorch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch))
    if _is_numpy(elem):
        if isinstance(elem, np.ndarray):
            if _NP_STR_OR_OBJECT.search(elem.dtype.str) is not None:
                raise TypeError(_COLLATE_ERROR.format(elem.dtype))
            return default_collate([as_tensor(b) for b in batch])
        if isinstance(elem, (np.bool_, np.number, np.object_)):
            return as_tensor(np.array(batch))
    if isinstance(elem, float):
        return tensor(list(batch), dtype="float64")
    if isinstance(elem, int):
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # namedtuple
        return type(elem)(*(default_collate(f) for f in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(b) != len(elem) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        # each field is collated as the tuple zip gives, so strings stay a tuple there
        fields = [default_collate(f) for f in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuild(elem, fields)
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def default_convert(data):
    """What a ``DataLoader`` with ``batch_size=None`` applies to each sample: numpy arrays and
    scalars become tensors (inside mappings, namedtuples and sequences too); the rest is kept."""
    if isinstance(data, Tensor):
        return data
    if _is_numpy(data):
        if isinstance(data, np.ndarray) and _NP_STR_OR_OBJECT.search(data.dtype.str):
            return data
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {k: default_convert(data[k]) for k in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data


def get_worker_info():
    """Always ``None``: data loading runs in the calling process (see ``DataLoader``)."""
    return None


# -- DataLoader -----------------------------------------------------------------------------------
class DataLoader:
    """Iterate over ``dataset`` in batches: ``for x, y in DataLoader(ds, batch_size=64,
    shuffle=True, generator=gpugrad.Generator().manual_seed(0))``.

    Loading always runs in the calling process: ``num_workers > 0`` is accepted (and checked as
    PyTorch checks it) but loads exactly as ``num_workers=0`` does, so ``get_worker_info()`` is
    ``None``, ``worker_init_fn`` is never called and an ``IterableDataset`` is read once, not
    once per worker. ``pin_memory`` and ``timeout`` have no effect.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing."
                             "let num_workers > 0 to enable multiprocessing, otherwise set "
                             "prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset, self.num_workers, self.prefetch_factor = dataset, num_workers, prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context, self.in_order = multiprocessing_context, in_order
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            given = [(name, value) for name, value, unset in (
                ("shuffle", shuffle, shuffle in (None, False)),
                ("sampler", sampler, sampler is None),
                ("batch_sampler", batch_sampler, batch_sampler is None)) if not unset]
            if given:
                name, value = given[0]
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"{name} option, but got {name}={value}")
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            sampler = (_InfiniteConstantSampler() if self._iterable
                       else RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        own_batches = batch_size is not None and batch_sampler is None
        if own_batches:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.generator = batch_size, drop_last, generator
        self.sampler, self.batch_sampler = sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self._fast = (type(dataset) is TensorDataset and collate_fn is default_collate
                      and own_batches   # a batch sampler the user passed is followed as is
                      and (type(sampler) is SequentialSampler
                           or (type(sampler) is RandomSampler and not sampler.replacement
                               and sampler._num_samples is None)))

    @property
    def _index_sampler(self):
        return self.batch_sampler if self.batch_sampler is not None else self.sampler

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
        return len(self._index_sampler)

    def __iter__(self):
        if self._fast:
            return self._gather_batches()
        if self._iterable:
            return self._stream_batches()
        return self._map_batches()

    def _map_batches(self):
        if self.batch_sampler is None:   # batch_size=None: sample by sample, converted
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        many = getattr(self.dataset, "__getitems__", None)
        for idx in self.batch_sampler:
            yield self.collate_fn(many(idx) if many else [self.dataset[i] for i in idx])

    def _stream_batches(self):
        it = iter(self.dataset)
        if self.batch_sampler is None:
            for sample in it:
                yield self.collate_fn(sample)
            return
        for idx in self.batch_sampler:
            data = list(itertools.islice(it, len(idx)))
            if not data or (self.drop_last and len(data) < len(idx)):
                return
            yield self.collate_fn(data)

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
            yield [t[idx] for t in self.dataset.tensors]
