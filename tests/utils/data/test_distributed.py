"""DistributedSampler: each rank's share of an epoch, as PyTorch's (padding, drop_last, the
shuffle shared by every rank and changed by set_epoch)."""
from __future__ import annotations

import pytest

from gpugrad.utils.data.distributed import DistributedSampler


@pytest.mark.parametrize("size,ranks,drop", [(10, 3, False), (10, 3, True), (2, 5, False),
                                             (12, 4, False), (7, 2, True)])
def test_unshuffled_shares_are_pytorchs(size, ranks, drop):
    torch_dist = pytest.importorskip("torch.utils.data.distributed")
    for r in range(ranks):
        ours = DistributedSampler(range(size), ranks, r, shuffle=False, drop_last=drop)
        theirs = torch_dist.DistributedSampler(range(size), ranks, r, shuffle=False,
                                               drop_last=drop)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("size,ranks", [(40, 3), (41, 2), (5, 4)])
def test_a_shuffled_epoch_is_partitioned_exactly(size, ranks):
    shares = [list(DistributedSampler(range(size), ranks, r, seed=3)) for r in range(ranks)]
    every = sum(shares, [])
    assert set(every) == set(range(size)) and len(every) == -(-size // ranks) * ranks
    assert len({len(s) for s in shares}) == 1
    dropped = [list(DistributedSampler(range(size), ranks, r, seed=3, drop_last=True))
               for r in range(ranks)]
    flat = sum(dropped, [])
    assert len(set(flat)) == len(flat) == size // ranks * ranks


def test_set_epoch_reshuffles_alike_on_every_rank():
    a = DistributedSampler(range(50), 2, 0, seed=1)
    b = DistributedSampler(range(50), 2, 1, seed=1)
    first = list(a) + list(b)
    a.set_epoch(1)
    b.set_epoch(1)
    second = list(a) + list(b)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second
    assert list(DistributedSampler(range(50), 2, 0, seed=1)) == first[:25]


def test_a_rank_outside_the_replicas_is_refused():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval "
                                         r"\[0, 2\]"):
        DistributedSampler(range(5), 3, 3)
