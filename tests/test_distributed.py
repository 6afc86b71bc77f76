"""torch.distributed and torch.version as single-process scripts import them: no backend, so
no process group, failing with PyTorch's errors; the version answers like a CPU PyTorch's."""
from __future__ import annotations

import re

import pytest

import gpugrad


def test_distributed_has_no_process_group():
    from gpugrad.distributed import destroy_process_group, init_process_group
    dist = gpugrad.distributed
    assert dist.is_available() is False and dist.is_initialized() is False
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(gpugrad.ones(2), op=dist.ReduceOp.SUM)):
        with pytest.raises(ValueError, match="^Default process group has not been initialized"):
            call()
    with pytest.raises(RuntimeError, match="gpugrad has no torch.distributed backend"):
        init_process_group(backend="nccl")
    with pytest.raises(AssertionError, match="^Process group cannot be None$"):
        destroy_process_group()


def test_version():
    assert gpugrad.version.__version__ == gpugrad.__version__ and gpugrad.version.hip is None
    cuda = gpugrad.version.cuda
    assert cuda is None or re.fullmatch(r"\d+\.\d+", cuda)
    if gpugrad.cuda.is_available():
        assert cuda is not None
