"""nn.parallel as PyTorch scripts import it: DataParallel and data_parallel run the module on one
device; DistributedDataParallel fails as PyTorch does without a process group, and averages
gradients across MPI processes with one."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn as nn
from gpugrad.nn.parallel import DataParallel, DistributedDataParallel, data_parallel


def test_data_parallel_function_calls_the_module():
    lin = nn.Linear(2, 3)
    x = gpugrad.randn(4, 2)
    if not gpugrad.cuda.is_available():
        np.testing.assert_array_equal(to_numpy(data_parallel(lin, x)), to_numpy(lin(x)))
    assert nn.parallel.DataParallel is nn.DataParallel is DataParallel


def test_distributed_data_parallel_needs_a_process_group():
    with pytest.raises(ValueError, match="^Default process group has not been initialized, "
                                         "please make sure to call init_process_group"):
        DistributedDataParallel(nn.Linear(2, 2))
    assert issubclass(nn.parallel.DistributedDataParallel, nn.Module)


@pytest.mark.parametrize("n", [2, 3])
def test_distributed_data_parallel_averages_the_full_batch_gradient(n):
    """In n MPI processes: rank 0's weights everywhere, gradients after one step equal to the
    full batch's, no_sync accumulation, identical replicas after 50 steps over a
    DistributedSampler, find_unused_parameters (see tests/mpi_jobs.py, ``ddp``)."""
    from mpi_jobs import launch
    done = launch(n, "ddp", timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("ddp ok") == n
