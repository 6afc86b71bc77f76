"""``gpugrad bench``: gpugrad against PyTorch and a hand-written numpy/CuPy floor, CPU and GPU.

Every benchmark case is defined once, in ``cases.py``. ``main`` (the ``gpugrad bench`` command)
times the cases with a plain interleaved timer (``timing.py``) and reports them
(``report.py``); the pytest-benchmark suites under ``bench/`` parametrize over the same ``Case``
objects. A case builds, for one implementation (a library on a device), a zero-argument *step*
that runs everything being measured (e.g. forward + backward + update).

Libraries: ``gpugrad``; ``torch`` (PyTorch eager, when importable); ``floor``: the same math
hand-written in numpy (CPU) or CuPy (GPU), without a graph; ``copy``: a device-to-device copy of
the same size (fused-kernel bandwidth cases). Ratios always compare medians of one run, with the
implementations interleaved round by round so that machine noise hits them alike.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from .cases import (
    DEVICES,
    LIBS,
    Case,
    Impl,
    cases,
    has_cuda,
    kernel_args,
    pairs,
    select,
    size_label,
)
from .report import check_targets, crossover, plot, ratios, report, run, set_threads
from .timing import FULL, QUICK, Clock, Settings, measure, measure_memory, sync_fn

__all__ = ["main", "Case", "Impl", "cases", "select", "pairs", "kernel_args", "size_label",
           "has_cuda", "measure", "measure_memory", "Clock", "Settings", "sync_fn",
           "set_threads", "run", "report", "ratios", "crossover", "check_targets", "plot",
           "QUICK", "FULL", "DEVICES", "LIBS"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="gpugrad bench", description="gpugrad vs PyTorch vs a numpy/CuPy floor, on CPU "
        "and GPU: a table of medians and ratios, cold and warm figures, CPU/GPU crossover.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="mode", action="store_const", const="quick",
                   help="the default: a subset that runs in under a minute on 2 CPU cores")
    g.add_argument("--full", dest="mode", action="store_const", const="full",
                   help="every case and size, more samples")
    p.add_argument("--cases", help="comma-separated globs on case ids, names or topics "
                   "(overhead, elementwise, kernels, mlp, graph, memory, bandwidth)")
    p.add_argument("--devices", default="cpu,cuda", help="default: cpu,cuda (cuda if present)")
    p.add_argument("--libs", default=",".join(LIBS), help="default: gpugrad,torch,floor")
    p.add_argument("--repeat", type=int, help="samples per implementation")
    p.add_argument("--threads", type=int, help="CPU threads for gpugrad, PyTorch and the BLAS "
                   "(default: each library's own; 1 gives steadier figures on a busy machine)")
    p.add_argument("--out", help="JSON record (default: <device>-<date>.json in bench/results/ "
                   "of a checkout, else in the current directory)")
    p.add_argument("--no-json", action="store_true", help="write no JSON record")
    p.add_argument("--plot", metavar="PNG", help="time vs size per device (needs matplotlib)")
    p.add_argument("--list", action="store_true", help="list the selected cases and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    a = p.parse_args(argv)
    mode = a.mode or "quick"
    catalogue = cases("full", gpu=True)     # every case and lib a name may refer to
    devices = _names(p, "--devices", a.devices, DEVICES)
    libs = _names(p, "--libs", a.libs, sorted({lib for c in catalogue for lib in c.libs}))
    if a.cases:
        known = sorted({c.name for c in catalogue} | {c.topic for c in catalogue})
        for pat in (x.strip() for x in a.cases.split(",") if x.strip()):
            if not select(catalogue, pat):
                p.error(f"--cases: unknown case {pat!r} (choose from {', '.join(known)}, a "
                        "case id of --list, or a glob on them)")
    if a.plot and importlib.util.find_spec("matplotlib") is None:
        p.error("--plot needs matplotlib, which is not installed (pip install matplotlib)")
    selected = select(cases(mode, gpu="cuda" in devices and has_cuda()), a.cases)
    if a.list:
        print("\n".join(f"{c.topic:12} {c.id}" for c in selected))
        return 0
    if not selected:
        p.error(f"no case matches --cases {a.cases!r} (see --list)")
    settings = QUICK if mode == "quick" else FULL
    if a.repeat:
        settings = Settings(**{**vars(settings), "repeat": a.repeat,
                               "min_repeat": min(a.repeat, settings.min_repeat)})
    log = None if a.quiet else (lambda s: print(s, file=sys.stderr, flush=True))
    warning = set_threads(a.threads) if a.threads else None
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    if not ("cuda" in devices and has_cuda()):
        if "cpu" not in devices:
            p.error("no usable CUDA device, and --devices leaves out the CPU")
        if log:
            log("no usable CUDA device: measuring the CPU only")
    record = run(selected, devices=devices, libs=libs, mode=mode,
                 settings=settings, log=log)
    print(report(record))
    if not a.no_json:
        name = f"{record['machine']['slug']}-{record['date']}.json"
        out = Path(a.out) if a.out else results_dir() / name
        out.parent.mkdir(parents=True, exist_ok=True)   # a folder --out names
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"\nrecord written to {out}")
    if a.plot:
        print(plot(record, a.plot))
    return 0


def results_dir() -> Path:
    """Where a record goes by default: ``bench/results/`` of the checkout gpugrad runs from,
    else the current directory (an installed gpugrad creates no folder)."""
    checkout = Path(__file__).resolve().parents[2] / "bench" / "results"
    return checkout if checkout.is_dir() else Path.cwd()


def _names(p, option, value, valid) -> tuple:
    """The comma-separated names of ``option``; an unknown one is an error naming it and the
    valid choices (exit status 2)."""
    names = tuple(x.strip() for x in value.split(",") if x.strip())
    for n in names:
        if n not in valid:
            p.error(f"{option}: unknown name {n!r} (choose from {', '.join(valid)})")
    return names


if __name__ == "__main__":
    sys.exit(main())

