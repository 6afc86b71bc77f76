"""nn.parallel as PyTorch scripts import it: DataParallel and data_parallel run the module on one
device; DistributedDataParallel fails as PyTorch does without a process group."""
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
