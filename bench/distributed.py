"""Data parallelism on MPI, CPU processes: all-reduce bandwidth against message size beside a
raw mpi4py ``Allreduce`` of the same buffer (the floor), and the DistributedDataParallel step
of an MLP in 1 and 2 processes, with how much of the gradients' all-reduce the buckets hid
behind backward.

    python bench/distributed.py [--nproc 2] [--out bench/results/distributed-<date>.json]

It starts itself under mpiexec (``--nproc`` ranks, and 1 rank for the single-process step);
each rank runs the same timings, rank 0 reports. Targets: gpugrad's ``all_reduce`` within 1.1x
of the raw call at >= 1 MB; the DDP step's overhead over the local step no more than the pure
all-reduce time of its gradients (overlap %: the share of that all-reduce time backward hid)."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import platform
import subprocess
import sys
import time

import numpy as np

SIZES = [2 ** k for k in range(12, 27, 2)]     # bytes: 4 KB .. 64 MB
CASES = {"default job (MLP 2-64-64-3, batch 64)": dict(width=64, depth=2, inputs=2, batch=64,
                                                       bucket_cap_mb=25),
         "wide MLP (2-1024x4-3, batch 256)": dict(width=1024, depth=4, inputs=2, batch=256,
                                                  bucket_cap_mb=1)}


def _medians(fns, reps, barrier):
    """Medians of ``fns`` timed in turn, the order reversed every other round (the machine's
    drift hits them alike)."""
    times = [[] for _ in fns]
    for i in range(reps):
        order = list(enumerate(fns))
        for j, fn in (order if i % 2 else order[::-1]):
            barrier()
            t = time.perf_counter()
            fn()
            times[j].append(time.perf_counter() - t)
    return [float(np.median(t)) for t in times]


def bandwidth():
    from mpi4py import MPI

    import gpugrad as torch
    import gpugrad.distributed as dist
    from gpugrad.distributed import distributed_c10d
    comm = MPI.COMM_WORLD.Dup()
    rows = []
    for nbytes in SIZES:
        buf = np.ones(nbytes // 4, np.float32)
        t = torch.from_numpy(np.ones(nbytes // 4, np.float32))
        raw = lambda buf=buf: comm.Allreduce(MPI.IN_PLACE, buf, MPI.SUM)
        ours = lambda t=t: dist.all_reduce(t)

        def unchecked(t=t):
            distributed_c10d._CHECK = False
            dist.all_reduce(t)
            distributed_c10d._CHECK = True
        for _ in range(3):
            raw()
            ours()
        reps = int(min(200, max(10, 2e8 // nbytes)))
        t_raw, t_ours, t_unchecked = _medians([raw, ours, unchecked], reps, comm.Barrier)
        rows.append({"bytes": nbytes, "raw_s": t_raw, "gpugrad_s": t_ours,
                     "unchecked_s": t_unchecked, "raw_GBps": nbytes / t_raw / 1e9,
                     "gpugrad_GBps": nbytes / t_ours / 1e9, "ratio": t_ours / t_raw,
                     "unchecked_ratio": t_unchecked / t_raw})
    return rows


def ddp_step(width, depth, inputs, batch, bucket_cap_mb, steps=30):
    import gpugrad as torch
    import gpugrad.distributed as dist
    from gpugrad.nn.parallel import DistributedDataParallel
    from gpugrad.train import build_model
    n = dist.get_world_size()
    torch.manual_seed(0)
    model = build_model(width, depth, inputs, 3)
    x = torch.randn(batch // n, inputs)
    y = torch.randint(0, 3, (batch // n,))
    loss_fn = torch.nn.CrossEntropyLoss()
    net = DistributedDataParallel(model, bucket_cap_mb=bucket_cap_mb) if n > 1 else model

    def step(m):
        for p in model.parameters():
            p.grad = None
        loss_fn(m(x), y).backward()

    grads = [b.flat for b in net._buckets] if n > 1 else []

    def allreduce():
        for g in grads:
            dist.all_reduce(torch.from_numpy(g))
    for _ in range(3):
        step(net)
        step(model)
    local, ddp, comm, waited = [], [], [], []
    for _ in range(steps):
        for fn, out in ((lambda: step(model), local), (lambda: step(net), ddp),
                        (allreduce, comm)):
            dist.barrier()
            before = net.comm_stats["wait_s"] if n > 1 else 0.0
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
            if out is ddp and n > 1:
                waited.append(net.comm_stats["wait_s"] - before)
    local_s, ddp_s, comm_s = (float(np.median(v)) for v in (local, ddp, comm))
    wait_s = float(np.median(waited)) if waited else 0.0
    exposed = max(ddp_s - local_s, 0.0)
    return {"processes": n, "params": sum(p.numel() for p in model.parameters()),
            "buckets": len(grads), "local_step_s": local_s, "ddp_step_s": ddp_s,
            "allreduce_s": comm_s if n > 1 else 0.0, "overhead_s": exposed if n > 1 else 0.0,
            "overlap_pct": (100 * max(0.0, 1 - exposed / comm_s) if n > 1 and comm_s > 0
                            else None),
            "end_of_backward_wait_s": wait_s,
            "hidden_pct": (100 * max(0.0, 1 - wait_s / comm_s) if n > 1 and comm_s > 0
                           else None)}


def worker(nproc_label):
    import gpugrad.distributed as dist
    dist.init_process_group("mpi")
    out = {"bandwidth": bandwidth() if dist.get_world_size() > 1 else [],
           "ddp": {name: ddp_step(**kw) for name, kw in CASES.items()}}
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps(out), flush=True)
    dist.destroy_process_group()


def _launch(n):
    from gpugrad.distributed.run import mpiexec
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root))
    done = subprocess.run([mpiexec(), "-n", str(n), sys.executable, __file__, "--worker"],
                          env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--out", default=None)
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        return worker(args.nproc)
    one, many = _launch(1), _launch(args.nproc)
    print(f"all-reduce, {args.nproc} CPU processes (float32, median; ratio = gpugrad / raw "
          "mpi4py Allreduce)")
    print(f"{'bytes':>10} {'raw GB/s':>9} {'gpugrad GB/s':>13} {'ratio':>6} "
          f"{'ratio, GPUGRAD_DIST_CHECK=0':>28}")
    for r in many["bandwidth"]:
        print(f"{r['bytes']:>10} {r['raw_GBps']:>9.2f} {r['gpugrad_GBps']:>13.2f} "
              f"{r['ratio']:>6.2f} {r['unchecked_ratio']:>28.2f}")
    print("\nDDP step (median ms); overhead = DDP step - local step of the same shard")
    for name in CASES:
        a, b = one["ddp"][name], many["ddp"][name]
        print(f"{name}: {a['params']:,} parameters, {b['buckets']} bucket(s)\n"
              f"  1 process: step {a['local_step_s'] * 1e3:.2f}\n"
              f"  {args.nproc} processes: local {b['local_step_s'] * 1e3:.2f}, DDP "
              f"{b['ddp_step_s'] * 1e3:.2f}, overhead {b['overhead_s'] * 1e3:.2f}, all-reduce "
              f"alone {b['allreduce_s'] * 1e3:.2f}, overlap {b['overlap_pct']:.0f}%\n"
              f"  wait for the all-reduces after the last gradient "
              f"{b['end_of_backward_wait_s'] * 1e3:.2f}: {b['hidden_pct']:.0f}% of the "
              "all-reduce time hidden behind backward")
    record = {"date": datetime.date.today().isoformat(), "machine": platform.processor()
              or platform.machine(), "cores": os.cpu_count(), "nproc": args.nproc,
              "one": one, "many": many}
    out = args.out or str(pathlib.Path(__file__).parent / "results" /
                          f"cpu-{os.cpu_count()}c-distributed-{record['date']}.json")
    pathlib.Path(out).write_text(json.dumps(record, indent=1))
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
