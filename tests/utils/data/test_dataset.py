"""gpugrad.utils.data datasets: TensorDataset, Subset, random_split, ConcatDataset, StackDataset
and ChainDataset, with PyTorch's messages (and, when PyTorch is installed, its split lengths)."""
from __future__ import annotations

import pickle
import warnings

import pytest

import gpugrad
from gpugrad.utils.data import (
    ChainDataset,
    ConcatDataset,
    DataLoader,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from tests.utils.data._datasets import Range, SizedStream, Stream, gen, labels, pairs, perm


def test_subset_indexes_through_its_indices():
    sub = Subset(pairs(), [7, 2, 5])
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


def test_random_split_fractions_hand_out_the_remainder_round_robin():
    gpugrad.manual_seed(0)
    assert [len(s) for s in random_split(range(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert [len(s) for s in random_split(range(7), [0.1, 0.2, 0.3, 0.4])] == [1, 2, 2, 2]
    assert [len(s) for s in random_split(range(11), [0.5, 0.5])] == [6, 5]


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
    assert labels(DataLoader(pairs(3) + pairs(2), batch_size=4)) == [[0, 1, 2, 0], [1]]


def test_concat_dataset_errors():
    with pytest.raises(AssertionError, match="^datasets should not be an empty iterable$"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="^ConcatDataset does not support IterableDataset$"):
        ConcatDataset([Range(2), Stream(0, 2)])


def test_stack_dataset_tuples_and_dicts():
    t = StackDataset(Range(3), pairs(3))
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


def test_tensor_dataset():
    ds = pairs()
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(gpugrad.zeros(3), gpugrad.zeros(4))


def test_tensor_dataset_errors_are_pytorchs():
    with pytest.raises(AssertionError, match="^Size mismatch between tensors$"):
        TensorDataset(gpugrad.zeros(3), gpugrad.zeros(4))
    with pytest.raises(IndexError, match="^tuple index out of range$"):
        TensorDataset()


def test_objects_pickled_when_utils_data_was_one_module_still_load():
    # gpugrad.utils.data was one file, so a pickled dataset or sampler names its class
    # "gpugrad.utils.data"; the package re-exports every class under that name
    from gpugrad.utils.data import RandomSampler
    ds = Subset(pairs(4), [3, 1])
    data = pickle.dumps((ds, RandomSampler(ds, generator=gen(0))), protocol=2)
    for new in (b"gpugrad.utils.data.dataset\n", b"gpugrad.utils.data.sampler\n"):
        assert new in data
        data = data.replace(new, b"gpugrad.utils.data\n")
    back, sampler = pickle.loads(data)
    assert type(back) is Subset and type(back.dataset) is TensorDataset
    assert [back[i][1].item() for i in range(2)] == [3, 1]
    assert type(sampler) is RandomSampler and sorted(sampler) == [0, 1]
