"""Jobs the distributed tests start in several MPI processes (``python tests/mpi_jobs.py JOB``
under ``mpiexec``), and ``launch``, which starts them with a hard timeout so a hang can never
stall the suite. Each job checks its results with asserts on every rank: the job's exit status
is the verdict."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def mpiexec():
    import pytest
    pytest.importorskip("mpi4py")
    from gpugrad.distributed import run
    try:
        return run.mpiexec()
    except RuntimeError as e:
        pytest.skip(str(e))


def launch(n, job, *args, timeout=60, env=None):
    """Run ``job`` in ``n`` MPI processes; returns the CompletedProcess (stdout+stderr)."""
    cmd = [mpiexec(), "-n", str(n), sys.executable, str(pathlib.Path(__file__)), job, *args]
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
             **(env or {}))
    return subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout)


def run_gpugrad(*argv, timeout=60, cwd=None):
    """``gpugrad ARGS`` in a subprocess, with a hard timeout."""
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    return subprocess.run([sys.executable, "-m", "gpugrad", *argv], env=e, capture_output=True,
                          text=True, timeout=timeout, cwd=cwd)


# -- jobs ---------------------------------------------------------------------------------------

def collectives():
    import pytest

    import gpugrad as torch
    import gpugrad.distributed as dist
    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == "mpi"
    rng = np.random.default_rng(0)
    data = rng.standard_normal((n, 5, 3))      # every rank knows every rank's input
    mine = lambda: torch.tensor(data[r].copy())
    for op, ref in ((dist.ReduceOp.SUM, data.sum(0)), (dist.ReduceOp.AVG, data.mean(0)),
                    (dist.ReduceOp.MAX, data.max(0)), (dist.ReduceOp.MIN, data.min(0)),
                    (dist.ReduceOp.PRODUCT, data.prod(0))):
        t = mine()
        dist.all_reduce(t, op=op)
        np.testing.assert_allclose(t.numpy(), ref, rtol=1e-12)
    ints = torch.tensor(np.arange(4) + r)
    dist.all_reduce(ints)
    assert ints.tolist() == list(np.arange(4) * n + n * (n - 1) // 2)
    for src in range(n):
        t = mine()
        dist.broadcast(t, src=src)
        np.testing.assert_array_equal(t.numpy(), data[src])
    out = [torch.zeros(5, 3, dtype=torch.float64) for _ in range(n)]
    dist.all_gather(out, mine())
    np.testing.assert_array_equal(np.stack([o.numpy() for o in out]), data)
    flat = torch.zeros(n * 5, 3, dtype=torch.float64)
    dist.all_gather_into_tensor(flat, mine())
    np.testing.assert_array_equal(flat.numpy(), data.reshape(n * 5, 3))
    big = rng.standard_normal((n, n * 2, 3))          # rank i's input to reduce_scatter
    o = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter_tensor(o, torch.tensor(big[r].copy()))
    np.testing.assert_allclose(o.numpy(), big.sum(0)[2 * r:2 * r + 2], rtol=1e-12)
    o = torch.zeros(2, 3, dtype=torch.float64)
    dist.reduce_scatter(o, [torch.tensor(big[r][2 * i:2 * i + 2].copy()) for i in range(n)])
    np.testing.assert_allclose(o.numpy(), big.sum(0)[2 * r:2 * r + 2], rtol=1e-12)
    t = mine()
    dist.reduce(t, dst=n - 1)
    if r == n - 1:
        np.testing.assert_allclose(t.numpy(), data.sum(0), rtol=1e-12)
    got = [torch.zeros(5, 3, dtype=torch.float64) for _ in range(n)] if r == 0 else None
    dist.gather(mine(), got, dst=0)
    if r == 0:
        np.testing.assert_array_equal(np.stack([g.numpy() for g in got]), data)
    t = torch.zeros(5, 3, dtype=torch.float64)
    dist.scatter(t, [torch.tensor(d.copy()) for d in data] if r == 1 else None, src=1)
    np.testing.assert_array_equal(t.numpy(), data[r])
    works = [dist.all_reduce(mine(), async_op=True) for _ in range(3)]
    assert all(w.wait() for w in works) and all(w.is_completed() for w in works)
    t = mine()
    dist.all_reduce(t, async_op=True).wait()
    np.testing.assert_allclose(t.numpy(), data.sum(0), rtol=1e-12)
    dist.barrier()
    # a group of the odd ranks: the even ones are not members
    g = dist.new_group([i for i in range(n) if i % 2 == 1])
    t = mine()
    dist.all_reduce(t, group=g)
    if r % 2 == 1:
        odd = data[1::2].sum(0)
        np.testing.assert_allclose(t.numpy(), odd, rtol=1e-12)
        assert dist.get_rank(g) == r // 2 and dist.get_world_size(g) == n // 2
    else:
        np.testing.assert_array_equal(t.numpy(), data[r])
        assert dist.get_rank(g) == -1
    # a shape that differs between ranks is an error naming the ranks, on every rank
    with pytest.raises(ValueError, match=r"disagree.*rank 0: all_reduce of float64 \[3\]"):
        dist.all_reduce(torch.zeros(3 + r, dtype=torch.float64))
    with pytest.raises(ValueError, match="disagree"):
        dist.broadcast(torch.zeros(2), src=r)    # each rank names another root
    dist.destroy_process_group()
    assert not dist.is_initialized()
    print(f"rank {r} collectives ok", flush=True)


def _mlp(torch):
    return torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16),
                               torch.nn.Tanh(), torch.nn.Linear(16, 2)).double()


def ddp():
    import gpugrad as torch
    import gpugrad.distributed as dist
    from gpugrad.nn.parallel import DistributedDataParallel as DDP
    from gpugrad.utils.data import DataLoader, TensorDataset
    from gpugrad.utils.data.distributed import DistributedSampler
    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1 + r)                   # each rank starts elsewhere: DDP takes rank 0's
    model = _mlp(torch)
    net = DDP(model, bucket_cap_mb=0.001)      # several buckets, to exercise their order
    assert len(net._buckets) > 1 and net.module is model
    assert list(net.state_dict()) == ["module." + k for k in model.state_dict()]
    ref0 = _mlp(torch)
    ref0.load_state_dict({k[len("module."):]: v for k, v in net.state_dict().items()})
    g = np.random.default_rng(3)
    x = torch.tensor(g.standard_normal((6 * n, 3)))
    y = torch.tensor(g.standard_normal((6 * n, 2)))
    mse = torch.nn.functional.mse_loss
    # one step: the averaged gradients are the full batch's
    mse(ref0(x), y).backward()
    part = slice(6 * r, 6 * r + 6)
    mse(net(x[part]), y[part]).backward()
    for p, q in zip(model.parameters(), ref0.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-13)
    # no_sync: two local micro-batches, then one synchronised one = the three batches' sum
    for p, q in zip(model.parameters(), ref0.parameters()):
        p.grad = q.grad = None
    xs = [torch.tensor(g.standard_normal((2 * n, 3))) for _ in range(3)]
    for xb in xs:
        mse(ref0(xb), torch.zeros(2 * n, 2, dtype=torch.float64)).backward()
    with net.no_sync():
        for xb in xs[:2]:
            mse(net(xb[2 * r:2 * r + 2]), torch.zeros(2, 2, dtype=torch.float64)).backward()
    mse(net(xs[2][2 * r:2 * r + 2]), torch.zeros(2, 2, dtype=torch.float64)).backward()
    for p, q in zip(model.parameters(), ref0.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-13)
    # 50 steps over a DistributedSampler: the replicas stay identical
    data = TensorDataset(torch.tensor(g.standard_normal((40, 3))),
                         torch.tensor(g.standard_normal((40, 2))))
    sampler = DistributedSampler(data, seed=5)
    loader = DataLoader(data, batch_size=4, sampler=sampler)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    steps = 0
    while steps < 50:
        sampler.set_epoch(steps)
        for xb, yb in loader:
            opt.zero_grad()
            mse(net(xb), yb).backward()
            opt.step()
            steps += 1
    flat = torch.tensor(np.concatenate([p.detach().numpy().ravel()
                                        for p in model.parameters()]))
    every = [torch.zeros_like(flat) for _ in range(n)]
    dist.all_gather(every, flat)
    for e in every:
        np.testing.assert_array_equal(e.numpy(), flat.numpy())
    assert not np.array_equal(flat.numpy(), np.concatenate(
        [p.detach().numpy().ravel() for p in ref0.parameters()]))
    # the sampler partitions an epoch exactly (with padding to a multiple of the ranks)
    for size, drop in ((40, False), (41, False), (41, True)):
        s = DistributedSampler(range(size), seed=1, drop_last=drop)
        mine = torch.tensor(np.array(list(s), np.int64))
        got = [torch.zeros_like(mine) for _ in range(n)]
        dist.all_gather(got, mine)
        idx = np.concatenate([t.numpy() for t in got])
        if drop:
            assert len(set(idx)) == len(idx) == size // n * n
        else:
            assert set(idx) == set(range(size)) and len(idx) == -(-size // n) * n
    # find_unused_parameters: a branch no rank uses keeps .grad None; one rank uses: averaged
    torch.manual_seed(0)
    two = torch.nn.ModuleDict({"a": torch.nn.Linear(2, 2), "b": torch.nn.Linear(2, 2),
                               "c": torch.nn.Linear(2, 2)}).double()

    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = two

        def forward(self, x, use_b):
            out = self.m["a"](x)
            return self.m["b"](out) if use_b else out
    net2 = DDP(Branchy(), find_unused_parameters=True)
    xb = torch.ones(1, 2, dtype=torch.float64)
    net2(xb, use_b=(r == 0)).sum().backward()
    assert two["c"].weight.grad is None
    assert two["b"].weight.grad is not None and two["a"].weight.grad is not None
    solo = torch.nn.Linear(2, 2).double()
    solo.load_state_dict(two["b"].state_dict())
    solo(two["a"](xb)).sum().backward()
    np.testing.assert_allclose(two["b"].weight.grad.numpy(), solo.weight.grad.numpy() / n)
    dist.destroy_process_group()
    print(f"rank {r} ddp ok", flush=True)


def raises():
    """Rank 1 raises after a first collective; the others wait in the next one."""
    import gpugrad as torch
    import gpugrad.distributed as dist
    dist.init_process_group("mpi", timeout=float(os.environ.get("TIMEOUT", "20")))
    dist.all_reduce(torch.ones(2))
    if dist.get_rank() == 1:
        if os.environ.get("HANG"):
            import time
            time.sleep(120)
        raise ValueError("rank one gives up")
    dist.all_reduce(torch.ones(2))


if __name__ == "__main__":
    globals()[sys.argv[1]]()
