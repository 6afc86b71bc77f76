"""gpugrad.utils.data samplers: sequential, random (with and without replacement), subset,
weighted and batch samplers, with PyTorch's messages."""
from __future__ import annotations

import itertools
import time
import tracemalloc

import numpy as np
import pytest

import gpugrad
from gpugrad.utils.data import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from tests.utils.data._datasets import Range, gen, pairs, perm


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


def test_an_infinite_random_sampler_draws_as_it_goes():
    # the "infinite loader" idiom: memory and time must not depend on num_samples
    ds, big = pairs(10), int(1e10)
    tracemalloc.start()
    start = time.perf_counter()
    try:
        sampler = RandomSampler(ds, replacement=True, num_samples=big, generator=gen(0))
        (x, y), = [next(iter(DataLoader(ds, batch_size=4, sampler=sampler)))]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20 and time.perf_counter() - start < 5
    assert len(sampler) == big and tuple(x.shape) == (4, 2)
    fresh = RandomSampler(ds, replacement=True, num_samples=big, generator=gen(0))
    first = list(itertools.islice(fresh, 100))
    assert y.tolist() == first[:4] and all(0 <= i < 10 for i in first)
    again = RandomSampler(ds, replacement=True, num_samples=big, generator=gen(0))
    assert list(itertools.islice(again, 100)) == first
    # chunks of 32 read the generator's stream as one draw of the same length would
    small = list(RandomSampler(ds, replacement=True, num_samples=100, generator=gen(0)))
    assert small == first == gpugrad.randint(10, (100,), generator=gen(0)).tolist()


def test_an_infinite_weighted_sampler_draws_as_it_goes():
    big = int(1e10)
    tracemalloc.start()
    try:
        s = WeightedRandomSampler([1.0, 3.0], big, generator=gen(0))
        first = list(itertools.islice(s, 5000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20 and len(s) == big and set(first) == {0, 1}
    assert first == list(WeightedRandomSampler([1.0, 3.0], 5000, generator=gen(0)))
    whole = gpugrad.multinomial(gpugrad.tensor([1.0, 3.0], dtype=gpugrad.float64), 5000, True,
                                generator=gen(0))
    assert first == whole.tolist()   # chunked draws: the same stream as one call


def test_a_gpt_style_loop_over_an_infinite_loader():
    torch = gpugrad   # written as a PyTorch training script would be
    torch.manual_seed(0)
    tokens = torch.randint(16, (200,))
    starts = torch.utils.data.TensorDataset(torch.arange(len(tokens) - 9))
    sampler = torch.utils.data.RandomSampler(starts, replacement=True, num_samples=int(1e10))
    loader = torch.utils.data.DataLoader(starts, batch_size=8, sampler=sampler)
    model = torch.nn.Sequential(torch.nn.Embedding(16, 32), torch.nn.Linear(32, 16))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for step, (start,) in zip(range(30), loader):
        if step % 2:   # every other batch drawn as nanoGPT draws it: randint(high, size)
            start = torch.randint(len(tokens) - 9, (8,))
        i = start[:, None] + torch.arange(8)
        x, y = tokens[i], tokens[i + 1]
        loss = torch.nn.functional.cross_entropy(model(x).view(-1, 16), y.view(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert len(losses) == 30 and all(np.isfinite(losses))
    assert np.mean(losses[-5:]) < np.mean(losses[:5])   # it learns the token frequencies
