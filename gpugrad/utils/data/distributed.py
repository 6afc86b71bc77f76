"""``DistributedSampler``: each rank of a data-parallel job reads its own share of a dataset
(PyTorch's ``torch.utils.data.distributed``). With ``shuffle`` every rank draws the same
permutation (seeded by ``seed + epoch``; call ``set_epoch`` each epoch) and takes every
``num_replicas``-th index from its rank on. The epoch is padded with its first indices to a
multiple of ``num_replicas`` so every rank gets the same number of samples, or, with
``drop_last``, cut to one."""
from __future__ import annotations

import math

from ... import distributed as dist
from ..._creation import Generator, randperm
from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, "
                             f"{num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            pad = self.total_size - len(indices)
            if pad <= len(indices):
                indices += indices[:pad]
            else:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Shuffle differently in each epoch (the same on every rank)."""
        self.epoch = epoch
