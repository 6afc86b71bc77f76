"""DataLoader in the main process: batching, shuffling, samplers, IterableDataset streams, the fast
path of TensorDataset, and the options PyTorch checks, with its messages."""
from __future__ import annotations

import re

import numpy as np
import pytest

import gpugrad
from gpugrad.utils.data import (
    DataLoader,
    Dataset,
    IterableDataset,
    SubsetRandomSampler,
    default_collate,
)
from tests.utils.data._datasets import (
    Range,
    SizedStream,
    Stream,
    base_seed,
    gen,
    labels,
    pairs,
    perm,
    shuffled,
)


def test_dataloader_batches_an_iterable_dataset():
    assert [b.tolist() for b in DataLoader(Stream(0, 7), batch_size=3)] == [[0, 1, 2],
                                                                            [3, 4, 5], [6]]
    assert [b.tolist() for b in DataLoader(Stream(0, 7), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    assert [b.tolist() for b in DataLoader(Stream(0, 6), batch_size=3, drop_last=True)] == [
        [0, 1, 2], [3, 4, 5]]
    assert list(DataLoader(Stream(0, 3), batch_size=None)) == [0, 1, 2]   # no batching
    assert list(DataLoader(Stream(0, 0), batch_size=2)) == []
    loader = DataLoader(Stream(0, 5), batch_size=2, collate_fn=sum)
    assert list(loader) == [1, 5, 4] and list(loader) == [1, 5, 4]    # each epoch restarts


def test_dataloader_len_of_an_iterable_dataset():
    assert len(DataLoader(SizedStream(0, 7), batch_size=3)) == 3
    assert len(DataLoader(SizedStream(0, 7), batch_size=3, drop_last=True)) == 2
    assert len(DataLoader(SizedStream(0, 7), batch_size=None)) == 7
    with pytest.raises(TypeError):
        len(DataLoader(Stream(0, 7), batch_size=3))


def test_dataloader_refuses_sampling_options_for_an_iterable_dataset():
    with pytest.raises(ValueError, match="^DataLoader with IterableDataset: expected unspecified "
                                         "shuffle option, but got shuffle=True$"):
        DataLoader(Stream(0, 3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option, but got "
                                         "sampler=\\[0, 1\\]$"):
        DataLoader(Stream(0, 3), sampler=[0, 1])
    with pytest.raises(ValueError, match="expected unspecified batch_sampler option"):
        DataLoader(Stream(0, 3), batch_sampler=[[0, 1]])
    DataLoader(Stream(0, 3), shuffle=False)       # an explicit False is allowed, as in PyTorch


def test_dataloader_yields_lists_like_torch():
    batch = next(iter(DataLoader(pairs(), batch_size=4)))
    slow = next(iter(DataLoader(pairs(), batch_size=4, collate_fn=default_collate)))
    assert type(batch) is list and type(slow) is list
    assert batch[1].tolist() == slow[1].tolist() == [0, 1, 2, 3]


def test_dataloader_shuffle_order_is_the_generators_permutation():
    loader = DataLoader(pairs(), batch_size=4, shuffle=True, generator=gen(7))
    g = gen(7)
    for _ in range(2):   # each epoch: the iterator's base seed, then the sampler's permutation
        base_seed(g)
        order = gpugrad.randperm(10, generator=g).tolist()
        assert labels(loader) == [order[:4], order[4:8], order[8:]]
    dropped = DataLoader(pairs(), batch_size=4, shuffle=True, generator=gen(7), drop_last=True)
    assert labels(dropped) == [shuffled(10, 7)[:4], shuffled(10, 7)[4:8]] and len(dropped) == 2


def test_each_iterator_draws_a_base_seed_before_shuffling_as_in_pytorch():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    torch.empty((), dtype=torch.int64).random_(generator=g)
    theirs = [b.item() for b in torch.utils.data.DataLoader(
        range(8), shuffle=True, generator=torch.Generator().manual_seed(0))]
    assert theirs == torch.randperm(8, generator=g).tolist()        # the rule, in PyTorch
    for fast in (True, False):   # the TensorDataset fast path and the generic path alike
        ds = pairs(8) if fast else Range(8)
        ours = DataLoader(ds, shuffle=True, generator=gen(0), collate_fn=(
            None if fast else lambda b: b[0]))
        assert [b[1].item() if fast else b for b in ours] == shuffled(8, 0)
    # without a generator: the base seed from the global generator, then (PyTorch's
    # RandomSampler) one more draw of it seeds the epoch's private generator
    torch.manual_seed(4)
    torch.empty((), dtype=torch.int64).random_()
    seed = int(torch.empty((), dtype=torch.int64).random_())
    torch.manual_seed(4)
    assert [b.item() for b in torch.utils.data.DataLoader(range(8), shuffle=True)] == \
        torch.randperm(8, generator=torch.Generator().manual_seed(seed)).tolist()
    gpugrad.manual_seed(4)
    base_seed(gpugrad.default_generator)
    seed = int(gpugrad.randint(0, 2 ** 63 - 1, ()))
    expect = gpugrad.randperm(8, generator=gen(seed)).tolist()
    gpugrad.manual_seed(4)
    assert [b.item() for b in DataLoader(Range(8), shuffle=True)] == expect


def test_dataloader_with_a_sampler_or_a_batch_sampler():
    loader = DataLoader(pairs(), batch_size=3, sampler=[9, 0, 4, 4])
    assert labels(loader) == [[9, 0, 4], [4]] and len(loader) == 2
    sub = DataLoader(pairs(), batch_size=2, sampler=SubsetRandomSampler([1, 3, 5],
                                                                           generator=gen(0)))
    assert sum(labels(sub), []) == [[1, 3, 5][i] for i in perm(3, 0)]
    batches = DataLoader(pairs(), batch_sampler=[[5, 1], [2], [0, 0, 9]])
    assert labels(batches) == [[5, 1], [2], [0, 0, 9]] and len(batches) == 3
    assert batches.batch_size is None and batches.drop_last is False


def test_dataloader_without_batching_converts_each_sample():
    class Arrays(Range):
        def __getitem__(self, i):
            return np.full(2, i)

    samples = list(DataLoader(Arrays(3), batch_size=None))
    assert all(isinstance(s, gpugrad.Tensor) for s in samples)
    assert [s.tolist() for s in samples] == [[0, 0], [1, 1], [2, 2]]
    assert list(DataLoader(Range(3), batch_size=None, collate_fn=lambda i: -i)) == [0, -1, -2]
    assert len(DataLoader(Range(3), batch_size=None)) == 3


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_workers=-1), "^num_workers option should be non-negative; use num_workers=0 to "
                           "disable multiprocessing.$"),
    (dict(timeout=-1), "^timeout option should be non-negative$"),
    (dict(prefetch_factor=2), "^prefetch_factor option could only be specified in "
                              "multiprocessing.let num_workers > 0"),
    (dict(num_workers=1, prefetch_factor=-1), "^prefetch_factor option should be non-negative$"),
    (dict(persistent_workers=True), "^persistent_workers option needs num_workers > 0$"),
    (dict(sampler=[0], shuffle=True), "^sampler option is mutually exclusive with shuffle$"),
    (dict(batch_sampler=[[0]], batch_size=2), "^batch_sampler option is mutually exclusive with "
                                              "batch_size, shuffle, sampler, and drop_last$"),
    (dict(batch_sampler=[[0]], drop_last=True), "^batch_sampler option is mutually exclusive"),
    (dict(batch_size=None, drop_last=True), "^batch_size=None option disables auto-batching and "
                                            "is mutually exclusive with drop_last$"),
    (dict(batch_size=0), "^batch_size should be a positive integer value, but got "
                         "batch_size=0$"),
])
def test_dataloader_argument_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DataLoader(pairs(), **kwargs)


def test_dataloader_refuses_unknown_options():
    with pytest.raises(TypeError):
        DataLoader(pairs(), batchsize=4)


def test_dataloader_batches_in_order():
    loader = DataLoader(pairs(), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                                      [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == gpugrad.float32
    dropped = DataLoader(pairs(), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [len(b[1]) for b in dropped] == [4, 4]


def test_dataloader_batches_are_copies():
    ds = pairs()
    x, _ = next(iter(DataLoader(ds, batch_size=4)))
    x.zero_()
    assert ds.tensors[0][0].tolist() == [0.0, 1.0] and ds.tensors[0][1].tolist() == [2.0, 3.0]


def test_dataloader_shuffle_is_seeded():
    def epochs(seed, n=2):
        loader = DataLoader(pairs(), batch_size=3, shuffle=True,
                            generator=gpugrad.Generator().manual_seed(seed))
        return [[v for b in loader for v in b[1].tolist()] for _ in range(n)]

    a, b = epochs(0), epochs(0)
    assert a == b                                     # same seed, same order
    assert a[0] != a[1]                               # a new order each epoch
    assert sorted(a[0]) == list(range(10))            # every sample once
    assert epochs(1)[0] != a[0]
    gpugrad.manual_seed(5)
    first = [v for b in DataLoader(pairs(), batch_size=4, shuffle=True) for v in b[1].tolist()]
    gpugrad.manual_seed(5)
    again = [v for b in DataLoader(pairs(), batch_size=4, shuffle=True) for v in b[1].tolist()]
    assert first == again                             # the global seed drives the default


def test_generic_dataset_path_matches_the_fast_path():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return gpugrad.tensor([float(i)]), i * i

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [4, 9], [16]]
    assert batches[0][0].shape == (2, 1)
    ds = pairs()
    fast = list(DataLoader(ds, batch_size=4))
    slow = list(DataLoader(ds, batch_size=4, collate_fn=default_collate))
    for (a, b), (c, d) in zip(fast, slow):
        assert a.tolist() == c.tolist() and b.tolist() == d.tolist()


def test_iterable_dataset_refuses_shuffle():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match=re.escape(
            "DataLoader with IterableDataset: expected unspecified shuffle option, but got "
            "shuffle=True")):
        DataLoader(Stream(), shuffle=True)
