"""Fetchers: turn what the index sampler gives (an index, a list of indices, or ``None`` for a
stream) into a sample or a collated batch. The main process and every worker read a dataset
through one of these, so both load the same batches."""
from __future__ import annotations

import itertools


class _MapDatasetFetcher:
    """``dataset[i]`` for each index (or ``dataset.__getitems__(indices)`` when it has one)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn
        self.many = getattr(dataset, "__getitems__", None) if auto_collation else None

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.many is not None:
            return self.collate_fn(self.many(index))
        return self.collate_fn([self.dataset[i] for i in index])


class _IterableDatasetFetcher:
    """The next ``len(index)`` samples of the stream (the next sample without batching); raises
    ``StopIteration`` when the stream has nothing left to give (or, with ``drop_last``, too
    little for a whole batch)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.stream, self.ended = iter(dataset), False
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last

    def fetch(self, index):
        if self.ended:   # an iterator is not asked again once it has said it is done
            raise StopIteration
        if not self.auto_collation:
            try:
                sample = next(self.stream)
            except StopIteration:
                self.ended = True
                raise
            return self.collate_fn(sample)
        data = list(itertools.islice(self.stream, len(index)))
        self.ended = len(data) < len(index)
        if not data or (self.drop_last and self.ended):
            raise StopIteration
        return self.collate_fn(data)


def create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    kind = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return kind(dataset, auto_collation, collate_fn, drop_last)
