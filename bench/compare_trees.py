"""Per-op cost of two source trees of gpugrad, interleaved in one run.

A refactor that moves code (the layout work, a change of the op base) must not make each op
dearer. This times cases of ``gpugrad.bench`` (``chain100[n=16]``: per-op overhead;
``mlp_small``: one small training step) on the CPU in fresh processes that alternate between
the two trees (A B B A A B ...), so drift of the shared machine hits both alike, and prints each
tree's median and the ratio B / A.

    git worktree add /tmp/gpugrad-before <commit>
    python bench/compare_trees.py /tmp/gpugrad-before . --rounds 12
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

# one process: build the step of each case, warm it, then time `samples` samples of `number`
# calls each and print the per-call times as JSON
_CHILD = r"""
import json, sys, time
import importlib
C = importlib.import_module("gpugrad.bench.cases")
ids, samples = sys.argv[1].split(","), int(sys.argv[2])
clock = time.process_time if sys.argv[3] == "cpu" else time.perf_counter
out = {}
for case in C.cases("quick", gpu=False):
    if case.id not in ids:
        continue
    impl = next(i for i in case.impls(("cpu",), ("gpugrad",)) if i.lib == "gpugrad")
    step = case.make(impl, case)
    for _ in range(3):
        step()
    number, t = 1, 0.0
    while True:   # calibrate: a sample lasts at least 20 ms
        t0 = clock()
        for _ in range(number):
            step()
        t = clock() - t0
        if t >= 0.02:
            break
        number *= 2
    times = []
    for _ in range(samples):
        t0 = clock()
        for _ in range(number):
            step()
        times.append((clock() - t0) / number)
    out[case.id] = times
print(json.dumps(out))
"""


def run(tree: str, ids: str, samples: int, clock: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(tree), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", _CHILD, ids, str(samples), clock], env=env,
                         capture_output=True, text=True, check=True, cwd=os.path.abspath(tree))
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("tree_a", help="the tree before (a checkout of gpugrad)")
    p.add_argument("tree_b", help="the tree after")
    p.add_argument("--cases", default="chain100[n=16],mlp_small")
    p.add_argument("--rounds", type=int, default=10, help="processes per tree")
    p.add_argument("--samples", type=int, default=5, help="samples per process")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="cpu: the process's CPU time, less disturbed by other work on a shared "
                        "machine (single-threaded BLAS makes it the step's cost)")
    args = p.parse_args(argv)
    times: dict = {"A": {}, "B": {}}
    for r in range(args.rounds):
        order = ("A", "B") if r % 2 == 0 else ("B", "A")
        for side in order:
            tree = args.tree_a if side == "A" else args.tree_b
            for case, ts in run(tree, args.cases, args.samples, args.clock).items():
                times[side].setdefault(case, []).extend(ts)
    print(f"{'case':<18} {'A median':>10} {'B median':>10} {'B / A':>7}   "
          f"(A={args.tree_a}, B={args.tree_b}, {args.rounds} processes each, interleaved, "
          f"{args.clock} clock)")
    for case in times["A"]:
        a, b = statistics.median(times["A"][case]), statistics.median(times["B"][case])
        print(f"{case:<18} {a * 1e6:>8.1f}us {b * 1e6:>8.1f}us {b / a:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
