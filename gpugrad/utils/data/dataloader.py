"""``DataLoader``: batches of a dataset, in the order its sampler gives.

``DataLoader`` over a ``TensorDataset`` with the default collate indexes each tensor once per batch
(one gather) instead of stacking ``batch_size`` single samples; the batches are the same.
"""
from __future__ import annotations

import itertools
import math

from ..._creation import arange, empty, int64
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader", "get_worker_info"]


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
        _base_seed(self.generator)   # drawn and unused, as in PyTorch: the generator moves on
        # as it does in PyTorch, where workers are seeded from this draw
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


def _base_seed(generator):
    """The int64 each iterator draws, as PyTorch's does (its workers are seeded from it)."""
    return empty((), dtype=int64).random_(generator=generator).item()
