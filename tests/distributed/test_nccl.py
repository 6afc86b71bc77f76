"""The NCCL backend in one process (NCCL refuses two processes on one GPU): the collectives and
DistributedDataParallel on CUDA tensors. With a GPU and CuPy's NCCL it runs on them; on the
simulated CuPy (docs/gpu.md) a stand-in communicator of one rank takes NCCL's place, which
checks the calls gpugrad makes (pointers, counts, dtypes, streams) but not NCCL itself.
Several GPUs are not tested here."""
from __future__ import annotations

import ctypes
import os
import socket

import numpy as np
import pytest
from conftest import cuda_available

import gpugrad
import gpugrad.distributed as dist
from gpugrad.distributed import _nccl

pytestmark = pytest.mark.gpu


class _OneRank:
    """cupy.cuda.nccl's NcclCommunicator for a world of one (simulated memory is host
    memory: a collective of one rank copies its input to its output)."""
    NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64, NCCL_INT8, NCCL_UINT8, NCCL_INT32, \
        NCCL_INT64 = range(7)
    NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN = range(4)
    SIZES = [2, 4, 8, 1, 1, 4, 8]
    calls: list = []

    @staticmethod
    def get_unique_id():
        return tuple(range(128))

    class NcclCommunicator:
        def __init__(self, ndev, uid, rank):
            assert ndev == 1 and rank == 0 and len(uid) == 128

        def _copy(self, name, src, dst, count, dtype, stream):
            assert isinstance(stream, int)
            _OneRank.calls.append(name)
            if src != dst:
                ctypes.memmove(dst, src, count * _OneRank.SIZES[dtype])

        def allReduce(self, s, r, count, dtype, op, stream):
            self._copy("allReduce", s, r, count, dtype, stream)

        def bcast(self, b, count, dtype, root, stream):
            self._copy("bcast", b, b, count, dtype, stream)

        def allGather(self, s, r, count, dtype, stream):
            self._copy("allGather", s, r, count, dtype, stream)

        def reduceScatter(self, s, r, count, dtype, op, stream):
            self._copy("reduceScatter", s, r, count, dtype, stream)

        def reduce(self, s, r, count, dtype, op, root, stream):
            self._copy("reduce", s, r, count, dtype, stream)

        def destroy(self):
            pass


@pytest.fixture
def nccl_world(monkeypatch):
    if not cuda_available():
        pytest.skip("no CUDA device (gpugrad.cuda.is_available() is false)")
    simulated = os.environ.get("GPUGRAD_CUPY_SIM") == "1"
    real = not simulated and _nccl.available()
    if not real:
        monkeypatch.setattr(_nccl, "_module", _OneRank)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=0,
                            world_size=1)
    yield
    dist.destroy_process_group()


def test_collectives_of_one_rank(nccl_world):
    assert dist.get_backend() == "nccl" and dist.get_world_size() == 1
    x = gpugrad.arange(6, dtype=gpugrad.float32, device="cuda")
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
        t = x.clone()
        dist.all_reduce(t, op=op)
        np.testing.assert_array_equal(t.cpu().numpy(), np.arange(6))
    dist.broadcast(t, src=0)
    out = [gpugrad.zeros(6, device="cuda")]
    dist.all_gather(out, x)
    np.testing.assert_array_equal(out[0].cpu().numpy(), np.arange(6))
    o = gpugrad.zeros(6, device="cuda")
    dist.reduce_scatter_tensor(o, x)
    np.testing.assert_array_equal(o.cpu().numpy(), np.arange(6))
    assert dist.all_reduce(x.clone(), async_op=True).wait()
    dist.barrier()


def test_ddp_on_one_gpu_gives_the_local_gradients(nccl_world):
    gpugrad.manual_seed(0)
    model = gpugrad.nn.Sequential(gpugrad.nn.Linear(3, 8), gpugrad.nn.Tanh(),
                                  gpugrad.nn.Linear(8, 2)).to("cuda")
    ref = gpugrad.nn.Sequential(gpugrad.nn.Linear(3, 8), gpugrad.nn.Tanh(),
                                gpugrad.nn.Linear(8, 2)).to("cuda")
    ref.load_state_dict(model.state_dict())
    net = gpugrad.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=0.0001)
    x = gpugrad.randn(5, 3, device="cuda")
    net(x).square().sum().backward()
    ref(x).square().sum().backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.cpu().numpy(), q.grad.cpu().numpy(), rtol=1e-6)
