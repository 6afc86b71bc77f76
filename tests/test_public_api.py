"""The public namespace is the one recorded in ``tests/data/public_api.txt`` (see
``public_api.py``): moving code between files must not add or drop a name users reach."""
from __future__ import annotations

import importlib
import pathlib

import public_api

RECORD = pathlib.Path(__file__).parent / "data" / "public_api.txt"


def test_public_namespace_matches_the_record():
    recorded = RECORD.read_text().split()
    now = public_api.public_names()
    missing = sorted(set(recorded) - set(now))
    added = sorted(set(now) - set(recorded))
    assert not missing and not added, (
        f"public names changed: missing {missing}, added {added}; if on purpose, rerun "
        f"`python tests/public_api.py > tests/data/public_api.txt`")


def test_every_recorded_name_resolves():
    import gpugrad
    for line in RECORD.read_text().split():
        ns, name = line.rsplit(".", 1)
        owner = gpugrad.Tensor if ns == "Tensor" else importlib.import_module(ns)
        assert hasattr(owner, name), line


def test_pytorch_facing_subpackages_import():
    for name in ("gpugrad.nn.functional", "gpugrad.nn.init", "gpugrad.nn.utils",
                 "gpugrad.nn.modules", "gpugrad.nn.modules.module", "gpugrad.linalg",
                 "gpugrad.special", "gpugrad.optim.lr_scheduler", "gpugrad.optim.swa_utils",
                 "gpugrad.autograd.graph", "gpugrad.autograd.forward_ad", "gpugrad.utils.data",
                 "gpugrad.distributions.constraints", "gpugrad.distributions.transforms",
                 "gpugrad.distributions.kl", "gpugrad.func", "gpugrad.cuda", "gpugrad.amp",
                 "gpugrad.utils.data.dataloader", "gpugrad.utils.data.dataset",
                 "gpugrad.utils.data.sampler", "gpugrad.nn.parallel", "gpugrad.accelerator",
                 "gpugrad.onnx"):
        importlib.import_module(name)


def test_torch_utils_data_submodules_hold_pytorchs_names():
    from gpugrad.utils.data import DataLoader
    from gpugrad.utils.data.dataloader import DataLoader as Loader
    from gpugrad.utils.data.dataloader import default_collate, get_worker_info
    from gpugrad.utils.data.dataset import ConcatDataset, Dataset, Subset, TensorDataset
    from gpugrad.utils.data.sampler import (
        BatchSampler,
        RandomSampler,
        SubsetRandomSampler,
        WeightedRandomSampler,
    )
    assert Loader is DataLoader and callable(default_collate) and callable(get_worker_info)
    assert issubclass(TensorDataset, Dataset) and Subset and ConcatDataset
    assert BatchSampler and RandomSampler and SubsetRandomSampler and WeightedRandomSampler
