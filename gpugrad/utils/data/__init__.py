"""``gpugrad.utils.data``: data loading with PyTorch's names, laid out as ``torch.utils.data``:
datasets (``dataset``), samplers (``sampler``), ``DataLoader`` (``dataloader``) and, under
``_utils``, collation, fetching, the worker processes' loop and pinning."""
from __future__ import annotations

from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler",
           "DataLoader", "default_collate", "default_convert", "get_worker_info"]
