"""The run, its JSON record, the printed report, the CPU/GPU crossover and the plot."""
from __future__ import annotations

import datetime
import importlib.util
import math
import os
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np

import gpugrad

from .. import _backend
from .. import cuda as gcuda
from .cases import DEVICES, LIBS, VARIANTS, Impl, _torch, has_cuda
from .timing import QUICK, measure, measure_memory


# -- the run, its record and its report --------------------------------------------------------
def _slug(s: str) -> str:
    s = re.sub(r"\((r|tm|c)\)|\bcpu\b|@.*$|\bprocessor\b", " ", s.lower())
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-") or "unknown"


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M).group(1).strip()
    except (OSError, AttributeError):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    info = {"cpu": cpu, "cores": cores, "logical_cpus": os.cpu_count(),
            "os": f"{platform.system()} {platform.machine()}", "gpu": None, "gpu_count": 0}
    try:
        with open("/proc/meminfo") as f:
            kb = int(re.search(r"MemTotal:\s+(\d+)", f.read()).group(1))
        info["memory_gb"] = round(kb / 2 ** 20, 1)
    except (OSError, AttributeError):
        pass
    if has_cuda():
        info.update(gpu=gcuda.get_device_name(0), gpu_count=gcuda.device_count())
    info["slug"] = (f"cuda-{_slug(info['gpu'])}" if info["gpu"]
                    else f"cpu-{_slug(cpu)}-{cores}c")
    return info


def versions() -> dict:
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "gpugrad": gpugrad.__version__, "cupy": None, "torch": None}
    cp = _backend.cupy_module()
    if cp is not None:
        out["cupy"] = cp.__version__
        if has_cuda():
            out["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
    try:   # without importing PyTorch when this run did not use it
        from importlib.metadata import version
        out["torch"] = version("torch")
    except Exception:
        pass
    # whether the CPU columns ran the compiled loops
    from .. import _cpu_kernels
    _cpu_kernels.get("adam_step")
    out["cpu_kernels"] = _cpu_kernels.status()
    try:
        from importlib.metadata import version
        out["numba"] = version("numba")
    except Exception:
        out["numba"] = None
    return out


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def set_threads(n: int) -> str | None:
    """Run gpugrad's and PyTorch's CPU work, and the BLAS's, on ``n`` threads; returns a
    warning, or None."""
    for var in THREAD_VARS:
        os.environ[var] = str(n)   # for the memory subprocesses
    t = _torch()
    if t is not None:
        t.set_num_threads(n)
    gpugrad.set_num_threads(n)     # elementwise threads, and the BLAS through threadpoolctl
    if importlib.util.find_spec("threadpoolctl") is None:
        return ("threadpoolctl is not installed: numpy's BLAS keeps its threads (install it, or "
                "set OPENBLAS_NUM_THREADS before starting)")
    return None


def threads() -> dict:
    t = sys.modules.get("torch")
    return {"torch": t.get_num_threads() if t is not None else None,
            "gpugrad": gpugrad.get_num_threads(),
            **{v: os.environ[v] for v in THREAD_VARS if v in os.environ}}


def ratios(impls: dict) -> dict:
    """gpugrad over each reference on the same device, and gpugrad's CPU time over its GPU's."""
    med = {k: e["median_s"] for k, e in impls.items() if "median_s" in e}
    out = {}
    for dev in DEVICES:
        g = med.get(f"gpugrad-{dev}")
        for ref in ("torch", "floor", "copy", *VARIANTS):
            if g and f"{ref}-{dev}" in med:
                out[f"gpugrad-{dev}/{ref}-{dev}"] = g / med[f"{ref}-{dev}"]
    if "gpugrad-cpu" in med and "gpugrad-cuda" in med:
        out["gpugrad-cpu/gpugrad-cuda"] = med["gpugrad-cpu"] / med["gpugrad-cuda"]
    return out


def crossover(results, gpu) -> list[dict]:
    """Per sweep and library, the size from which the GPU is faster (log-log interpolation)."""
    if not gpu:
        return [{"note": "no CUDA device: CPU/GPU crossover not measured"}]
    out, sweeps = [], {}
    for r in results:
        if r.get("sweep"):
            sweeps.setdefault(r["sweep"], []).append(r)
    for sweep, rows in sweeps.items():
        rows.sort(key=lambda r: r["size"])
        for lib in ("gpugrad", "torch"):
            pts = [(r["size"], r["impls"][f"{lib}-cpu"]["median_s"],
                    r["impls"][f"{lib}-cuda"]["median_s"]) for r in rows
                   if "median_s" in r["impls"].get(f"{lib}-cpu", {})
                   and "median_s" in r["impls"].get(f"{lib}-cuda", {})]
            if not pts:
                continue
            wins = [c < g for _, g, c in pts]
            entry = {"sweep": sweep, "lib": lib, "sizes": [p[0] for p in pts],
                     "gpu_wins": wins, "crossover_size": None}
            if all(wins):
                entry["note"] = f"GPU faster at every size measured (from {pts[0][0]})"
            elif not wins[-1]:
                entry["note"] = f"CPU faster up to the largest size measured ({pts[-1][0]})"
            else:
                i = max(j for j, w in enumerate(wins) if not w) + 1
                (s0, c0, g0), (s1, c1, g1) = pts[i - 1], pts[i]
                r0, r1 = math.log(g0 / c0), math.log(g1 / c1)
                x = math.log(s0) + (math.log(s1) - math.log(s0)) * r0 / (r0 - r1)
                entry["crossover_size"] = round(math.exp(x))
                entry["note"] = f"GPU faster from about {entry['crossover_size']:.3g}"
            out.append(entry)
    return out


TARGETS = (   # (device, what, case id, numerator, denominator, "<=" or ">=", limit)
    ("cpu", "100-op chain vs PyTorch", "chain100[n=16]", "gpugrad-cpu", "torch-cpu", "<=", 0.7),
    ("cpu", "small MLP step vs PyTorch", "mlp_small", "gpugrad-cpu", "torch-cpu", "<=", 1.0),
    ("cpu", "large MLP step vs numpy floor", "mlp_large", "gpugrad-cpu", "floor-cpu", "<=", 1.15),
    ("cpu", "1e7 elementwise backward vs PyTorch", "elementwise[n=1e7]", "gpugrad-cpu",
     "torch-cpu", "<=", 0.9),
    ("cpu", "2-layer LSTM language-model step vs PyTorch", "lstm", "gpugrad-cpu", "torch-cpu",
     "<=", 1.5),
    ("cuda", "fused kernels (worst) vs d2d copy bandwidth", "bandwidth:*", "gpugrad-cuda",
     "copy-cuda", ">=", 0.8),
    ("cuda", "large MLP step vs PyTorch eager", "mlp_large", "gpugrad-cuda", "torch-cuda", "<=",
     1.1),
    ("cuda", "2-layer LSTM language-model step vs PyTorch eager", "lstm", "gpugrad-cuda",
     "torch-cuda", "<=", 1.0),
    ("cuda", "1e7 elementwise backward vs PyTorch eager", "elementwise[n=1e7]", "gpugrad-cuda",
     "torch-cuda", "<=", 0.7),
    ("cuda", "small MLP step eager vs PyTorch eager", "mlp_small", "gpugrad-cuda", "torch-cuda",
     "<=", 1.1),
    ("cuda", "100-op chain eager vs PyTorch eager", "chain100[n=16]", "gpugrad-cuda",
     "torch-cuda", "<=", 1.0),
    # a denominator "<impl>@<case>" is that implementation's median in another case
    ("cuda", "small MLP step replayed vs PyTorch eager", "graphed:mlp_small", "gpugrad-cuda",
     "torch-cuda@mlp_small", "<=", 0.35),
    ("cuda", "small MLP step replayed vs PyTorch's CUDA graph", "graphed:mlp_small",
     "gpugrad-cuda", "torch-cuda", "<=", 1.0),
    ("cuda", "large MLP step replayed vs PyTorch's CUDA graph", "graphed:mlp_large",
     "gpugrad-cuda", "torch-cuda", "<=", 1.0),
    ("cuda", "gpugrad train epoch vs the same loop in PyTorch eager", "train:spirals",
     "gpugrad-cuda", "torch-cuda", "<=", 1 / 3),
)


def check_targets(results) -> list[dict]:
    by_id = {r["id"]: r for r in results}
    out = []
    for dev, what, cid, num, den, op, limit in TARGETS:
        t = {"device": dev, "target": what, "case": cid, "ratio": f"{num} / {den}",
             "op": op, "limit": limit, "value": None, "met": None}
        if cid == "bandwidth:*":   # achieved GB/s over copy GB/s, worst kernel at its largest n
            largest = {}
            for r in results:
                if r["topic"] == "bandwidth" and r["size"] >= largest.get(r["name"], (0,))[0]:
                    largest[r["name"]] = (r["size"], r)
            vals = [(r["impls"][num]["gbps"] / r["impls"][den]["gbps"], r["id"])
                    for _, r in largest.values()
                    if "gbps" in r["impls"].get(num, {}) and "gbps" in r["impls"].get(den, {})]
            if vals:
                t["value"], t["worst_case"] = min(vals)
        elif "@" in den:
            impl, other = den.split("@")
            a = by_id.get(cid, {}).get("impls", {}).get(num, {}).get("median_s")
            b = by_id.get(other, {}).get("impls", {}).get(impl, {}).get("median_s")
            if a and b:
                t["value"] = a / b
        elif cid in by_id and f"{num}/{den}" in by_id[cid]["ratios"]:
            t["value"] = by_id[cid]["ratios"][f"{num}/{den}"]
        if t["value"] is not None:
            t["met"] = t["value"] <= limit if op == "<=" else t["value"] >= limit
            t["off_by"] = t["value"] / limit - 1 if op == "<=" else 1 - t["value"] / limit
        out.append(t)
    return out


def _round(x):
    if isinstance(x, float):
        return float(f"{x:.5g}")
    if isinstance(x, dict):
        return {k: _round(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_round(v) for v in x]
    return x


def run(selected, *, devices=DEVICES, libs=None, mode="quick", settings=QUICK,
        log=None) -> dict:
    """Measure ``selected`` cases; returns the record that ``--out`` writes as JSON."""
    gpu = "cuda" in devices and has_cuda()
    results, started = [], time.perf_counter()
    for i, case in enumerate(selected):
        impls = case.impls(devices, libs)
        if not impls:
            continue
        t0 = time.perf_counter()
        entries = (measure_memory(case, impls) if case.topic == "memory"
                   else measure(case, impls, settings))
        results.append({"id": case.id, "topic": case.topic, "name": case.name,
                        "size": case.size, "unit": case.unit, "sweep": case.sweep,
                        "params": {k: v for k, v in case.params.items()},
                        "impls": entries, "ratios": ratios(entries)})
        if log:
            log(f"[{i + 1}/{len(selected)}] {case.id}  {time.perf_counter() - t0:.1f} s")
    today = datetime.date.today().isoformat()
    record = {"schema": 1, "date": today, "mode": mode, "machine": machine(),
              "versions": versions(), "threads": threads(), "settings": vars(settings),
              "elapsed_s": time.perf_counter() - started, "results": results,
              "crossover": crossover(results, gpu), "targets": check_targets(results)}
    return _round(record)


def fmt_time(s) -> str:
    if s is None:
        return "-"
    for unit, f in (("s", 1), ("ms", 1e-3), ("us", 1e-6)):
        if s >= f or unit == "us":
            return f"{s / f:.3g} {unit}"


def fmt_bytes(b) -> str:
    if b is None:
        return "-"
    for unit, f in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if abs(b) >= f:
            return f"{b / f:.3g} {unit}"
    return f"{b} B"


def _table(header, rows) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    line = lambda r: "  ".join(str(x).rjust(w) if i else str(x).ljust(w)
                               for i, (x, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), "  ".join("-" * w for w in widths)] + [line(r)
                                                                          for r in rows])


RATIO_COLUMNS = {"gpugrad-cpu/torch-cpu": "gg/torch", "gpugrad-cpu/floor-cpu": "gg/numpy",
                 "gpugrad-cuda/torch-cuda": "gg/torch cuda", "gpugrad-cuda/floor-cuda": "gg/cupy",
                 "gpugrad-cuda/unfused-cuda": "fused/unfused",
                 "gpugrad-cuda/ufuncs-cuda": "lean/ufuncs",
                 "gpugrad-cpu/gpugrad-cuda": "cpu/cuda"}


def report(record) -> str:
    """The tables ``main`` prints: warm medians and ratios, cold first calls, memory,
    bandwidth, crossover and targets."""
    m, v, res = record["machine"], record["versions"], record["results"]
    head = (f"{m['cpu']} ({m['cores']} cores){', ' + m['gpu'] if m['gpu'] else ''}; "
            f"python {v['python']}, numpy {v['numpy']}, torch {v['torch'] or '-'}, "
            f"cupy {v['cupy'] or '-'}, gpugrad {v['gpugrad']}; torch threads "
            f"{record['threads']['torch'] or '-'}; {record['date']}, {record['mode']}")
    out = [head]
    timed = [r for r in res if r["topic"] not in ("memory", "bandwidth")]
    devs = [d for d in DEVICES if any(k.endswith(d) for r in timed for k in r["impls"])]
    cols = [f"{lib}-{d}" for d in devs for lib in LIBS + VARIANTS
            if any(f"{lib}-{d}" in r["impls"] for r in timed)]
    names = {c: Impl(*c.split("-", 1)).label for c in cols}
    rat = [k for k in RATIO_COLUMNS if any(k in r["ratios"] for r in timed)]
    cell = lambda e, key: ("err" if "error" in e else fmt_time(e.get(key))) if e else ""
    if timed:
        out += ["", "Warm medians (ratios < 1: gpugrad faster)", _table(
            ["case"] + [names[c] for c in cols] + [RATIO_COLUMNS[k] for k in rat],
            [[r["id"]] + [cell(r["impls"].get(c), "median_s") for c in cols]
             + [f"{r['ratios'][k]:.2f}" if k in r["ratios"] else "" for k in rat]
             for r in timed])]
        cold = [c for c in cols if any("cold_s" in r["impls"].get(c, {}) for r in timed)]
        out += ["", "Cold: first call after setup (on a GPU incl. kernel compile or cache load)",
                _table(["case"] + [names[c] for c in cold] + (
                    ["kernel compile"] if "gpugrad-cuda" in cold else []),
                    [[r["id"]] + [cell(r["impls"].get(c), "cold_s") for c in cold] + (
                        [fmt_time(r["impls"]["gpugrad-cuda"].get("compile_s"))
                         if "gpugrad-cuda" in r["impls"] else ""]
                        if "gpugrad-cuda" in cold else []) for r in timed])]
    mem = [r for r in res if r["topic"] == "memory"]
    if mem:
        mcols = [c for c in cols + [f"{lib}-{d}" for d in DEVICES for lib in LIBS]
                 if any(c in r["impls"] for r in mem)]
        mcols = list(dict.fromkeys(mcols))
        out += ["", "Peak memory of one warm step, above what was allocated before it", _table(
            ["case"] + [Impl(*c.split("-", 1)).label for c in mcols],
            [[r["id"]] + [("err" if "error" in r["impls"].get(c, {}) else
                           fmt_bytes(r["impls"].get(c, {}).get("peak_bytes")))
                          if c in r["impls"] else "" for c in mcols] for r in mem])]
    bw = [r for r in res if r["topic"] == "bandwidth"]
    if bw:
        keys = ("gpugrad-cuda", "floor-cuda", "torch-cuda", "copy-cuda")
        rows = []
        for r in bw:
            gbps = [r["impls"].get(k, {}).get("gbps") for k in keys]
            share = f"{100 * gbps[0] / gbps[3]:.0f}%" if gbps[0] and gbps[3] else ""
            rows.append([r["id"]] + [f"{x:.0f}" if x else "" for x in gbps] + [share])
        out += ["", "Fused kernels on the GPU: achieved GB/s (bytes read + written over "
                "CUDA-event time)", _table(
                    ["case", "kernel", "cupy chain", "torch", "d2d copy", "kernel/copy"], rows)]
    out += ["", "CPU/GPU crossover"] + [
        f"  {c['sweep']} ({c['lib']}): {c['note']}" if "sweep" in c else f"  {c['note']}"
        for c in record["crossover"]]
    out += ["", "Targets (ratios from this run)"]
    for t in record["targets"]:
        if t["value"] is None:
            state = "not measured"
        else:
            how = f"{t['value']:.2f} {t['op']} {t['limit']}"
            state = f"met ({how})" if t["met"] else f"MISSED by {100 * t['off_by']:.0f}% ({how})"
        out.append(f"  [{t['device']}] {t['target']}: {state}")
    return "\n".join(out)


def plot(record, path) -> str:
    """Time vs size per device for each sweep (log-log), crossover marked; returns a message."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib)"
    sweeps = {}
    for r in record["results"]:
        if r.get("sweep"):
            sweeps.setdefault(r["sweep"], []).append(r)
    if not sweeps:
        return "no size sweep in this run: no plot"
    fig, axes = plt.subplots(1, len(sweeps), figsize=(6 * len(sweeps), 4.5), squeeze=False)
    for ax, (sweep, rows) in zip(axes[0], sweeps.items()):
        rows.sort(key=lambda r: r["size"])
        keys = list(dict.fromkeys(k for r in rows for k in r["impls"]))
        for k in keys:
            pts = [(r["size"], r["impls"][k]["median_s"]) for r in rows
                   if "median_s" in r["impls"].get(k, {})]
            if pts:
                lib, dev = k.split("-", 1)
                ax.plot(*zip(*pts), marker="o", label=Impl(lib, dev).label,
                        color=f"C{(LIBS + ('copy',)).index(lib)}",
                        linestyle="-" if dev == "cuda" else "--")
        for c in record["crossover"]:
            if c.get("sweep") == sweep and c.get("crossover_size"):
                ax.axvline(c["crossover_size"], color="gray", linestyle=":")
        unit = "width (= batch)" if rows[0]["unit"] == "w" else "elements"
        ax.set(xscale="log", yscale="log", xlabel=unit, ylabel="seconds per step",
               title=f"{sweep}: {record['machine']['cpu']}" + (
                   f" vs {record['machine']['gpu']}" if record["machine"]["gpu"] else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot written to {path}"


