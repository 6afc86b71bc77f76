"""gpugrad.utils.data: TensorDataset, Subset, random_split, ConcatDataset, IterableDataset, the
samplers, default_collate/default_convert and the DataLoader (batching, shuffling, options), with
PyTorch's messages (and, when PyTorch is installed, its lengths and collated structures)."""
from __future__ import annotations

import collections
import re
import warnings

import numpy as np
import pytest

import gpugrad
from gpugrad.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    StackDataset,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)


def gen(seed):
    return gpugrad.Generator().manual_seed(seed)


def perm(n, seed):
    """The permutation a generator seeded with ``seed`` draws first."""
    return gpugrad.randperm(n, generator=gen(seed)).tolist()


def _dataset(n=10):
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


# -- Subset, random_split -------------------------------------------------------------------------
def test_subset_indexes_through_its_indices():
    sub = Subset(_dataset(), [7, 2, 5])
    assert len(sub) == 3 and sub[0][1].item() == 7 and sub[-1][1].item() == 5
    assert sub[[0, 2]][1].tolist() == [7, 5]                      # a list index, one gather
    assert [s[1].item() for s in sub.__getitems__([2, 1])] == [5, 2]
    assert labels(DataLoader(sub, batch_size=2)) == [[7, 2], [5]]


def test_subset_uses_the_datasets_getitems_when_it_has_one():
    class Batched(Range):
        def __getitems__(self, idx):
            return [100 + i for i in idx]

    assert Subset(Batched(10), [4, 1, 3]).__getitems__([0, 2]) == [104, 103]
    assert [b.tolist() for b in DataLoader(Subset(Batched(10), [4, 1, 3]), batch_size=2)] == [
        [104, 101], [103]]


def test_random_split_by_counts_cuts_one_seeded_permutation():
    a, b = random_split(Range(10), [3, 7], generator=gen(42))
    order = perm(10, 42)
    assert a.indices == order[:3] and b.indices == order[3:]
    assert [a[i] for i in range(3)] == order[:3]
    again = random_split(Range(10), [3, 7], generator=gen(42))
    assert [s.indices for s in again] == [a.indices, b.indices]
    assert random_split(Range(10), [3, 7], generator=gen(43))[0].indices != a.indices


def test_random_split_default_generator_follows_manual_seed():
    gpugrad.manual_seed(3)
    first = [s.indices for s in random_split(Range(9), [4, 5])]
    gpugrad.manual_seed(3)
    assert [s.indices for s in random_split(Range(9), [4, 5])] == first
    assert sorted(first[0] + first[1]) == list(range(9))


@pytest.mark.parametrize("n, fractions, lengths", [
    (10, [0.3, 0.7], [3, 7]),
    (11, [0.3, 0.3, 0.4], [4, 3, 4]),      # floors 3, 3, 4; the remainder goes to split 0
    (7, [0.25, 0.25, 0.25, 0.25], [2, 2, 2, 1]),
    (5, [0.5, 0.5], [3, 2]),
])
def test_random_split_by_fractions(n, fractions, lengths):
    parts = random_split(Range(n), fractions, generator=gen(0))
    assert [len(p) for p in parts] == lengths
    assert sum((p.indices for p in parts), []) == perm(n, 0)


def test_random_split_fraction_lengths_match_torch():
    torch = pytest.importorskip("torch")
    for n in (1, 2, 7, 10, 11, 101):
        for fractions in ([0.3, 0.7], [0.3, 0.3, 0.4], [0.1] * 10, [0.5, 0.25, 0.25]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ours = [len(p) for p in random_split(Range(n), fractions, generator=gen(0))]
                theirs = [len(p) for p in torch.utils.data.random_split(
                    range(n), fractions, generator=torch.Generator().manual_seed(0))]
            assert ours == theirs, (n, fractions)


def test_random_split_errors_and_empty_split_warning():
    with pytest.raises(ValueError, match="^Sum of input lengths does not equal the length of the "
                                         "input dataset!$"):
        random_split(Range(10), [3, 6])
    with pytest.raises(ValueError, match="^Fraction at index 0 is not between 0 and 1$"):
        random_split(Range(10), [1.5, -0.5])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        parts = random_split(Range(1), [0.5, 0.5])
    assert [len(p) for p in parts] == [1, 0]


# -- ConcatDataset, StackDataset, ChainDataset ----------------------------------------------------
def test_concat_dataset_indexes_across_its_parts():
    ds = ConcatDataset([Range(3), Range(0), Range(4)])
    assert len(ds) == 7 and ds.cumulative_sizes == [3, 3, 7]
    assert [ds[i] for i in range(7)] == [0, 1, 2, 0, 1, 2, 3]
    assert ds[-1] == 3 and ds[-7] == 0
    with pytest.raises(ValueError, match="^absolute value of index should not exceed dataset "
                                         "length$"):
        ds[-8]
    added = Range(2) + Range(3)
    assert isinstance(added, ConcatDataset) and [added[i] for i in range(5)] == [0, 1, 0, 1, 2]
    assert labels(DataLoader(_dataset(3) + _dataset(2), batch_size=4)) == [[0, 1, 2, 0], [1]]


def test_concat_dataset_errors():
    with pytest.raises(AssertionError, match="^datasets should not be an empty iterable$"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="^ConcatDataset does not support IterableDataset$"):
        ConcatDataset([Range(2), Stream(0, 2)])


def test_stack_dataset_tuples_and_dicts():
    t = StackDataset(Range(3), _dataset(3))
    assert len(t) == 3 and t[2][0] == 2 and t[2][1][1].item() == 2
    d = StackDataset(a=Range(3), b=Range(3))
    assert d[1] == {"a": 1, "b": 1}
    with pytest.raises(ValueError, match="^Size mismatch between datasets$"):
        StackDataset(Range(3), Range(4))
    with pytest.raises(ValueError, match="^At least one dataset should be passed$"):
        StackDataset()


def test_chain_dataset_streams_one_after_another():
    chained = Stream(0, 3) + Stream(10, 12)
    assert isinstance(chained, ChainDataset) and list(chained) == [0, 1, 2, 10, 11]
    assert len(SizedStream(0, 3) + SizedStream(5, 6)) == 4
    with pytest.raises(AssertionError, match="^ChainDataset only supports IterableDataset$"):
        list(ChainDataset([Stream(0, 1), Range(2)]))


# -- IterableDataset in a DataLoader --------------------------------------------------------------
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


# -- samplers -------------------------------------------------------------------------------------
def test_subset_random_sampler_permutes_its_indices():
    idx = [10, 20, 30, 40, 50]
    s = SubsetRandomSampler(idx, generator=gen(0))
    first, second = list(s), list(s)
    assert len(s) == 5 and first == [idx[i] for i in perm(5, 0)]
    assert sorted(second) == idx and second != first   # a fresh order each epoch
    assert list(SubsetRandomSampler(idx, generator=gen(0))) == first


def test_weighted_random_sampler_draws_by_weight():
    s = WeightedRandomSampler([1.0, 3.0], 4000, generator=gen(0))
    draws = list(s)
    assert len(s) == 4000 and set(draws) == {0, 1}
    assert abs(np.mean(draws) - 0.75) < 0.03             # P(1) = 3 / 4
    assert list(WeightedRandomSampler([1.0, 3.0], 4000, generator=gen(0))) == draws
    assert list(WeightedRandomSampler([0.0, 0.0, 2.0, 0.0], 5, generator=gen(1))) == [2] * 5
    without = list(WeightedRandomSampler([1.0, 0.0, 3.0, 2.0], 3, replacement=False,
                                         generator=gen(2)))
    assert sorted(without) == [0, 2, 3]                  # zero weight never drawn, none twice
    ws = WeightedRandomSampler(gpugrad.tensor([0.5, 0.5]), 3)
    assert ws.weights.dtype == gpugrad.float64 and len(list(ws)) == 3


def test_weighted_random_sampler_errors():
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=f"^num_samples should be a positive integer value, "
                                             f"but got num_samples={bad}$"):
            WeightedRandomSampler([1.0], bad)
    with pytest.raises(ValueError, match="^replacement should be a boolean value, but got "
                                         "replacement=1$"):
        WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match="^weights should be a 1d sequence but given weights "
                                         "have shape \\(2, 1\\)$"):
        WeightedRandomSampler([[1.0], [2.0]], 1)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        list(WeightedRandomSampler([1.0, 2.0], 3, replacement=False))


def test_random_sampler_with_replacement_and_num_samples():
    s = RandomSampler(Range(4), replacement=True, num_samples=50, generator=gen(0))
    draws = list(s)
    assert len(s) == 50 and len(draws) == 50 and set(draws) <= {0, 1, 2, 3}
    assert len(set(draws)) == 4                             # 50 draws hit all of 4 values
    longer = list(RandomSampler(Range(4), num_samples=10, generator=gen(1)))
    g = gen(1)   # without replacement: whole permutations, then the start of one more
    expect = sum((gpugrad.randperm(4, generator=g).tolist() for _ in range(3)), [])[:10]
    assert longer == expect
    assert list(RandomSampler(Range(5), generator=gen(2))) == perm(5, 2)
    assert len(RandomSampler(Range(5))) == 5


def test_random_sampler_errors():
    with pytest.raises(TypeError, match="^replacement should be a boolean value, but got "
                                        "replacement=0$"):
        RandomSampler(Range(3), replacement=0)
    with pytest.raises(ValueError, match="^num_samples should be a positive integer value, but "
                                         "got num_samples=0$"):
        RandomSampler(Range(3), num_samples=0)
    with pytest.raises(ValueError, match="num_samples=0$"):
        RandomSampler(Range(0))


def test_batch_sampler():
    assert list(BatchSampler(SequentialSampler(Range(7)), 3, False)) == [[0, 1, 2], [3, 4, 5],
                                                                          [6]]
    assert list(BatchSampler(range(7), 3, True)) == [[0, 1, 2], [3, 4, 5]]
    assert len(BatchSampler(range(7), 3, True)) == 2 and len(BatchSampler(range(7), 3, False)) == 3
    with pytest.raises(ValueError, match="^drop_last should be a boolean value, but got "
                                         "drop_last=1$"):
        BatchSampler(range(3), 2, 1)
    with pytest.raises(ValueError, match="^batch_size should be a positive integer value, but got "
                                         "batch_size=0$"):
        BatchSampler(range(3), 0, False)


# -- collation ------------------------------------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])


def test_default_collate_structures_follow_torch():
    out = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(out) is Point and out.x.tolist() == [1, 3] and out.x.dtype == gpugrad.int64
    assert out.y.dtype == gpugrad.float64
    pairs = default_collate([(1, "a"), (2, "b")])
    assert type(pairs) is list and pairs[0].tolist() == [1, 2] and pairs[1] == ("a", "b")
    ordered = default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["b", "a"]
    nested = default_collate([{"x": [gpugrad.ones(2), 1]}, {"x": [gpugrad.zeros(2), 2]}])
    assert nested["x"][0].shape == (2, 2) and nested["x"][1].tolist() == [1, 2]
    assert default_collate([True, False]).dtype == gpugrad.bool


def test_default_collate_numpy_keeps_dtypes():
    assert default_collate([np.float32(1), np.float32(2)]).dtype == gpugrad.float32
    assert default_collate([np.int32(1), np.int32(2)]).tolist() == [1, 2]
    assert default_collate([np.int32(1)]).dtype == gpugrad.int32
    arrays = default_collate([np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)])
    assert arrays.shape == (2, 2, 3) and arrays.dtype == gpugrad.float32


def test_default_collate_errors():
    with pytest.raises(TypeError, match="^default_collate: batch must contain tensors, numpy "
                                        "arrays, numbers, dicts or lists; found <class "
                                        "'NoneType'>$"):
        default_collate([None, None])
    with pytest.raises(TypeError, match="found <U1$"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal "
                                           "size$"):
        default_collate([[1, 2], [3]])


def test_default_collate_matches_torch_structure():
    torch = pytest.importorskip("torch")
    batch = [{"p": Point(np.float32(1.5), [1, 2]), "s": "u", "t": (3.0, np.arange(2))}] * 3
    ours, theirs = default_collate(batch), torch.utils.data.default_collate(batch)

    def shape(v):
        if isinstance(v, (gpugrad.Tensor, torch.Tensor)):
            return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), v.tolist())
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)) and not isinstance(v, str):
            return (type(v).__name__, [shape(x) for x in v])
        return v
    assert shape(ours) == shape(theirs)


def test_default_convert_turns_numpy_into_tensors():
    out = default_convert({"a": np.arange(3), "b": (np.float32(2.0), "s"), "c": 5})
    assert isinstance(out["a"], gpugrad.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert type(out["b"]) is list and out["b"][0].dtype == gpugrad.float32 and out["b"][1] == "s"
    assert out["c"] == 5
    p = default_convert(Point(np.array(1), 2))
    assert type(p) is Point and isinstance(p.x, gpugrad.Tensor) and p.y == 2
    strings = np.array(["a", "b"])
    assert default_convert(strings) is strings


# -- DataLoader options ---------------------------------------------------------------------------
def test_dataloader_yields_lists_like_torch():
    batch = next(iter(DataLoader(_dataset(), batch_size=4)))
    slow = next(iter(DataLoader(_dataset(), batch_size=4, collate_fn=default_collate)))
    assert type(batch) is list and type(slow) is list
    assert batch[1].tolist() == slow[1].tolist() == [0, 1, 2, 3]


def test_dataloader_shuffle_order_is_the_generators_permutation():
    loader = DataLoader(_dataset(), batch_size=4, shuffle=True, generator=gen(7))
    g = gen(7)
    for _ in range(2):   # epoch k uses the generator's k-th permutation
        order = gpugrad.randperm(10, generator=g).tolist()
        assert labels(loader) == [order[:4], order[4:8], order[8:]]
    dropped = DataLoader(_dataset(), batch_size=4, shuffle=True, generator=gen(7), drop_last=True)
    assert labels(dropped) == [perm(10, 7)[:4], perm(10, 7)[4:8]] and len(dropped) == 2


def test_dataloader_with_a_sampler_or_a_batch_sampler():
    loader = DataLoader(_dataset(), batch_size=3, sampler=[9, 0, 4, 4])
    assert labels(loader) == [[9, 0, 4], [4]] and len(loader) == 2
    sub = DataLoader(_dataset(), batch_size=2, sampler=SubsetRandomSampler([1, 3, 5],
                                                                           generator=gen(0)))
    assert sum(labels(sub), []) == [[1, 3, 5][i] for i in perm(3, 0)]
    batches = DataLoader(_dataset(), batch_sampler=[[5, 1], [2], [0, 0, 9]])
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


def test_dataloader_workers_run_in_process_with_the_same_batches():
    plain = labels(DataLoader(_dataset(), batch_size=3, shuffle=True, generator=gen(1)))
    calls = []
    workers = DataLoader(_dataset(), batch_size=3, shuffle=True, generator=gen(1), num_workers=4,
                         persistent_workers=True, prefetch_factor=3, pin_memory=True,
                         worker_init_fn=calls.append)
    assert labels(workers) == plain and workers.prefetch_factor == 3
    assert DataLoader(_dataset(), num_workers=2).prefetch_factor == 2
    assert get_worker_info() is None and calls == []
    assert [b.tolist() for b in DataLoader(Stream(0, 4), batch_size=2, num_workers=3)] == [
        [0, 1], [2, 3]]                                  # read once, not once per worker


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
        DataLoader(_dataset(), **kwargs)


def test_dataloader_refuses_unknown_options():
    with pytest.raises(TypeError):
        DataLoader(_dataset(), batchsize=4)


# -- data loading ---------------------------------------------------------------------------------
def test_tensor_dataset():
    ds = _dataset()
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(gpugrad.zeros(3), gpugrad.zeros(4))


def test_dataloader_batches_in_order():
    loader = DataLoader(_dataset(), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                                      [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == gpugrad.float32
    dropped = DataLoader(_dataset(), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [len(b[1]) for b in dropped] == [4, 4]


def test_dataloader_batches_are_copies():
    ds = _dataset()
    x, _ = next(iter(DataLoader(ds, batch_size=4)))
    x.zero_()
    assert ds.tensors[0][0].tolist() == [0.0, 1.0] and ds.tensors[0][1].tolist() == [2.0, 3.0]


def test_dataloader_shuffle_is_seeded():
    def epochs(seed, n=2):
        loader = DataLoader(_dataset(), batch_size=3, shuffle=True,
                            generator=gpugrad.Generator().manual_seed(seed))
        return [[v for b in loader for v in b[1].tolist()] for _ in range(n)]

    a, b = epochs(0), epochs(0)
    assert a == b                                     # same seed, same order
    assert a[0] != a[1]                               # a new order each epoch
    assert sorted(a[0]) == list(range(10))            # every sample once
    assert epochs(1)[0] != a[0]
    gpugrad.manual_seed(5)
    first = [v for b in DataLoader(_dataset(), batch_size=4, shuffle=True) for v in b[1].tolist()]
    gpugrad.manual_seed(5)
    again = [v for b in DataLoader(_dataset(), batch_size=4, shuffle=True) for v in b[1].tolist()]
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
    ds = _dataset()
    fast = list(DataLoader(ds, batch_size=4))
    slow = list(DataLoader(ds, batch_size=4, collate_fn=default_collate))
    for (a, b), (c, d) in zip(fast, slow):
        assert a.tolist() == c.tolist() and b.tolist() == d.tolist()


def test_default_collate_structures():
    out = default_collate([{"x": gpugrad.ones(2), "y": 1}, {"x": gpugrad.zeros(2), "y": 2}])
    assert out["x"].shape == (2, 2) and out["y"].tolist() == [1, 2]
    assert default_collate([1.5, 2.5]).dtype == gpugrad.float64
    assert default_collate(["a", "b"]) == ["a", "b"]


# -- default_collate ------------------------------------------------------------------------------
def test_collate_keeps_string_fields_as_the_tuple_zip_gives():
    out = default_collate([(1, "a"), (2, "b")])
    assert type(out) is list and out[0].tolist() == [1, 2] and out[1] == ("a", "b")
    nested = default_collate([{"k": [(1, "x")]}, {"k": [(2, "y")]}])
    assert nested["k"][0][0].tolist() == [1, 2] and nested["k"][0][1] == ("x", "y")
    named = default_collate([Point("p", 1.0), Point("q", 2.0)])
    assert type(named) is Point and named.x == ("p", "q") and named.y.dtype == gpugrad.float64
    batches = list(DataLoader([(1, "a"), (2, "b"), (3, "c")], batch_size=2))
    assert [b[1] for b in batches] == [("a", "b"), ("c",)]


def test_collate_dtypes_and_shapes():
    assert default_collate([1.0, 2.5]).dtype == gpugrad.float64
    assert default_collate([1, 2]).dtype == gpugrad.int64
    assert default_collate([True, False]).dtype == gpugrad.bool
    assert default_collate([1, 2.5]).dtype == gpugrad.float32   # first element decides: int
    assert default_collate([np.float32(1), np.float32(2)]).dtype == gpugrad.float32
    assert default_collate([np.array([1, 2]), np.array([3, 4])]).shape == (2, 2)
    assert default_collate(["a", "b"]) == ["a", "b"]
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal "
                                           "size$"):
        default_collate([[1, 2, 3], [4, 5]])


# -- datasets -------------------------------------------------------------------------------------
def test_tensor_dataset_errors_are_pytorchs():
    with pytest.raises(AssertionError, match="^Size mismatch between tensors$"):
        TensorDataset(gpugrad.zeros(3), gpugrad.zeros(4))
    with pytest.raises(IndexError, match="^tuple index out of range$"):
        TensorDataset()


def test_random_split_fractions_hand_out_the_remainder_round_robin():
    gpugrad.manual_seed(0)
    assert [len(s) for s in random_split(range(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert [len(s) for s in random_split(range(7), [0.1, 0.2, 0.3, 0.4])] == [1, 2, 2, 2]
    assert [len(s) for s in random_split(range(11), [0.5, 0.5])] == [6, 5]


def test_iterable_dataset_refuses_shuffle():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match=re.escape(
            "DataLoader with IterableDataset: expected unspecified shuffle option, but got "
            "shuffle=True")):
        DataLoader(Stream(), shuffle=True)
