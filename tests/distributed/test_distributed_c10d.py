"""torch.distributed's process-group API on MPI: every collective against numpy's result in 2
and 3 (an odd count) processes, groups of some ranks, async work handles, and a clear error when
the ranks disagree on a shape. Each job runs under mpiexec with a hard timeout."""
from __future__ import annotations

import pytest
from mpi_jobs import launch

import gpugrad
import gpugrad.distributed as dist


@pytest.mark.parametrize("n", [2, 3])
def test_every_collective_matches_numpy(n):
    done = launch(n, "collectives")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("collectives ok") == n


def test_without_a_process_group_the_calls_fail_as_pytorchs():
    assert dist.is_initialized() is False
    for call in (dist.get_rank, dist.get_world_size, dist.barrier,
                 lambda: dist.all_reduce(gpugrad.ones(2), op=dist.ReduceOp.SUM)):
        with pytest.raises(ValueError, match="^Default process group has not been initialized"):
            call()
    with pytest.raises(AssertionError, match="^Process group cannot be None$"):
        dist.destroy_process_group()
    assert dist.Backend("GLOO") == "gloo" and dist.Backend("MPI") == "mpi"
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.Backend("ucc")


def test_importing_it_loads_no_mpi():
    import subprocess
    import sys
    code = ("import sys, gpugrad.distributed as d, gpugrad.nn.parallel, "
            "gpugrad.utils.data.distributed; assert 'mpi4py' not in sys.modules; "
            "assert 'mpi4py.MPI' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
