"""``gpugrad bench``: gpugrad against PyTorch and a hand-written numpy/CuPy floor, CPU and GPU.

Every benchmark case is defined here once. ``main`` (the ``gpugrad bench`` command) times the
cases with a plain interleaved timer; the pytest-benchmark suites under ``bench/`` parametrize
over the same ``Case`` objects. A case builds, for one implementation (a library on a device), a
zero-argument *step* that runs everything being measured (e.g. forward + backward + update).

Libraries: ``gpugrad``; ``torch`` (PyTorch eager, when importable); ``floor``: the same math
hand-written in numpy (CPU) or CuPy (GPU), without a graph; ``copy``: a device-to-device copy of
the same size (fused-kernel bandwidth cases). Ratios always compare medians of one run, with the
implementations interleaved round by round so that machine noise hits them alike.
"""
from __future__ import annotations

import argparse
import datetime
import fnmatch
import functools
import gc
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

import gpugrad

from . import _backend, kernels
from . import cuda as gcuda

LIBS = ("gpugrad", "torch", "floor")
DEVICES = ("cpu", "cuda")


# -- what is installed -----------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _torch():
    """PyTorch, or None when it cannot be imported (its columns are then left out)."""
    try:
        import torch
        return torch
    except Exception:
        return None


@functools.lru_cache(maxsize=None)
def has_cuda() -> bool:
    return gcuda.is_available()


def available(lib: str, device: str) -> bool:
    if lib == "torch":
        t = _torch()
        return t is not None and (device == "cpu" or t.cuda.is_available())
    if device == "cpu":
        return lib != "copy"
    return has_cuda()


def _xp(device):
    """The array module holding a device's data (numpy when CuPy cannot reach the GPU)."""
    return _backend.cupy_module() if device == "cuda" and has_cuda() else np


@dataclass(frozen=True)
class Impl:
    lib: str      # gpugrad | torch | floor | copy
    device: str   # cpu | cuda

    @property
    def key(self) -> str:
        return f"{self.lib}-{self.device}"

    @property
    def label(self) -> str:
        if self.lib == "floor":
            return "numpy" if self.device == "cpu" else "cupy"
        return "d2d copy" if self.lib == "copy" else f"{self.lib} {self.device}"


@dataclass
class Case:
    topic: str            # overhead | elementwise | kernels | mlp | graph | memory | bandwidth
    name: str
    make: Callable        # make(impl, case) -> step
    size: int = 0
    unit: str = "n"       # what ``size`` counts: n elements, w width, ops graph nodes
    params: dict = field(default_factory=dict)
    libs: tuple = LIBS
    devices: tuple = DEVICES
    sweep: str | None = None   # cases of one sweep are plotted against size (crossover)

    @property
    def id(self) -> str:
        return f"{self.name}[{self.unit}={size_label(self.size)}]" if self.size else self.name

    def impls(self, devices=DEVICES, libs=None) -> list[Impl]:
        """The implementations of this case that can run here."""
        return [Impl(lib, d) for d in devices if d in self.devices for lib in self.libs
                if (libs is None or lib in libs or lib == "copy") and available(lib, d)]


def size_label(n: int) -> str:
    e = round(math.log10(n)) if n > 0 else 0
    return f"1e{e}" if n >= 10_000 and n == 10 ** e else str(n)


# -- data --------------------------------------------------------------------------------------
def _rand(device, shape, seed=0, low=None, high=None):
    """float32 normal (or uniform in [low, high)) data, made where the device's data lives."""
    xp = _xp(device)
    rng = xp.random.default_rng(seed)
    if low is None:
        return rng.standard_normal(shape, dtype=xp.float32)
    a = rng.random(shape, dtype=xp.float32)
    a *= high - low
    a += low
    return a


def _labels(device, n, classes, seed=1):
    xp = _xp(device)
    return xp.random.default_rng(seed).integers(0, classes, n, dtype=xp.int64)


def _to(lib, a, device, requires_grad=False):
    """A copy of array ``a`` as ``lib`` holds data on ``device`` (scalars pass through)."""
    if not hasattr(a, "shape"):
        return a
    a = a.copy()
    if lib in ("floor", "copy"):
        return a
    if lib == "gpugrad":
        t = gpugrad.as_tensor(a)
    else:
        torch = _torch()
        t = torch.from_numpy(a) if isinstance(a, np.ndarray) else torch.from_dlpack(a)
        t = t.to(device)
    return t.requires_grad_() if requires_grad else t


def _module(lib):
    return gpugrad if lib == "gpugrad" else _torch()


# -- the cases ---------------------------------------------------------------------------------
def chain(T, x):
    """100 elementwise ops: 25 x [mul 1.01, add 0.5, tanh, sub 0.1], then sum."""
    for _ in range(25):
        x = T.tanh(x * 1.01 + 0.5) - 0.1
    return x.sum()


def make_chain(impl, case):
    x0 = _rand(impl.device, (case.size,))
    if impl.lib == "floor":
        xp = _xp(impl.device)

        def step():
            x, ys = x0, []
            for _ in range(25):
                y = xp.tanh(x * 1.01 + 0.5)
                ys.append(y)
                x = y - 0.1
            loss, gx = x.sum(), xp.ones_like(x0)
            for y in reversed(ys):
                gx = gx * (1 - y * y) * 1.01
            return loss, gx
        return step
    T, x = _module(impl.lib), _to(impl.lib, x0, impl.device, True)

    def step():
        chain(T, x).backward()
        x.grad = None
    return step


def elementwise(T, x):
    return (T.tanh(x) * T.sigmoid(x) + T.relu(x)).sum()


def make_elementwise(impl, case):
    x0 = _rand(impl.device, (case.size,))
    if impl.lib == "floor":
        xp = _xp(impl.device)

        def step():
            t = xp.tanh(x0)
            s = xp.exp(-x0)
            s += 1
            xp.reciprocal(s, out=s)
            y = t * s
            y += xp.maximum(x0, 0)
            loss = y.sum()
            gx = t * t                       # d/dx = (1 - t^2) s + t s (1 - s) + [x > 0]
            xp.subtract(1, gx, out=gx)
            gx *= s
            u = 1 - s
            u *= s
            u *= t
            gx += u
            gx += x0 > 0
            return loss, gx
        return step
    T, x = _module(impl.lib), _to(impl.lib, x0, impl.device, True)

    def step():
        elementwise(T, x).backward()
        x.grad = None
    return step


def make_graph(impl, case):
    """Build a graph of ``case.size`` nodes on a tiny tensor, then drop it (no backward)."""
    x0 = _rand(impl.device, (16,))
    x = x0 if impl.lib == "floor" else _to(impl.lib, x0, impl.device, True)
    half = case.size // 2

    def step():
        y = x
        for _ in range(half):
            y = y * 1.01 + 0.5
    return step   # y, and with it the graph, is released as the step returns


# MLP: one SGD step (zero_grad, forward, cross-entropy, backward, update), float32.
def make_mlp(impl, case):
    dims, batch, dev = case.params["dims"], case.params["batch"], impl.device
    x0, t0 = _rand(dev, (batch, dims[0])), _labels(dev, batch, dims[-1])
    layers = []
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        w = _rand(dev, (b, a), seed=10 + i)
        w *= a ** -0.5
        layers.append((w, _xp(dev).zeros(b, dtype=np.float32)))
    if impl.lib == "floor":
        return _mlp_floor(_xp(dev), x0, t0, layers, case.params["lr"])
    T = _module(impl.lib)
    x, t = _to(impl.lib, x0, dev), _to(impl.lib, t0, dev)
    try:
        nn, optim = T.nn, T.optim
        seq = []
        for i, (w, _) in enumerate(layers):
            seq += [nn.ReLU()] if i else []
            seq.append(nn.Linear(w.shape[1], w.shape[0]))
        model = nn.Sequential(*seq).to(dev)
    except Exception as e:   # gpugrad.nn / optim not importable (yet)
        if impl.lib != "gpugrad":
            raise
        step = _mlp_ops(T, x, t, layers, dev, case.params["lr"])
        step.note = f"gpugrad.nn/optim not importable ({type(e).__name__}): built from ops"
        return step
    loss_fn = nn.CrossEntropyLoss()
    opt = optim.SGD(model.parameters(), lr=case.params["lr"])

    def step():
        opt.zero_grad()
        loss_fn(model(x), t).backward()
        opt.step()
    step.clear = opt.zero_grad   # frees the grads held between steps (peak memory baseline)
    return step


def _mlp_ops(T, x, t, layers, dev, lr):
    params = [(_to("gpugrad", w, dev, True), _to("gpugrad", b, dev, True)) for w, b in layers]
    rows = T.arange(x.shape[0], device=dev)

    def step():
        h = x
        for i, (w, b) in enumerate(params):
            h = (T.relu(h) if i else h) @ w.t() + b
        (-T.log_softmax(h, 1)[rows, t].mean()).backward()
        with T.no_grad():
            for p in (p for wb in params for p in wb):
                p -= lr * p.grad
                p.grad = None
    return step


def _mlp_floor(xp, x, t, layers, lr):
    rows = xp.arange(x.shape[0])

    def step():
        hs, h = [], x
        for i, (w, b) in enumerate(layers):
            hs.append(h)
            h = h @ w.T
            h += b
            if i < len(layers) - 1:
                xp.maximum(h, 0, out=h)
        m = h.max(axis=1, keepdims=True)
        e = xp.exp(h - m)
        s = e.sum(axis=1, keepdims=True)
        loss = (xp.log(s) + m).mean() - h[rows, t].mean()
        g = e                         # d loss / d logits = (softmax - onehot) / batch
        g /= s
        g[rows, t] -= 1
        g /= len(rows)
        for i in reversed(range(len(layers))):
            w, b = layers[i]
            gw, gb = g.T @ hs[i], g.sum(axis=0)
            if i:
                g = g @ w
                g *= hs[i] > 0
            gw *= lr
            w -= gw
            gb *= lr
            b -= gb
        return loss
    return step


# Fused kernels: inputs for each kernel in ``kernels.REGISTRY`` (n elements per array).
def kernel_args(name, device, n):
    """Arguments of kernel ``name`` at ``n`` elements, or None when no recipe exists."""
    xp = _xp(device)
    r = functools.partial(_rand, device, (n,))
    one = xp.ones((), dtype=np.float32)
    if name == "softmax_xent_bwd":
        C = min(n, 1000)
        z = _rand(device, (n // C, C))
        logp = z - xp.log(xp.exp(z).sum(axis=1, keepdims=True))
        return logp, _labels(device, n // C, C), one, C / n
    recipes = {
        "relu_bwd": lambda: (r(1), r(2)),
        "leaky_relu_bwd": lambda: (r(1), r(2), 0.01),
        "sigmoid_bwd": lambda: (r(1, 0.0, 1.0), r(2)),
        "tanh_bwd": lambda: (r(1, -1.0, 1.0), r(2)),
        "gelu_bwd": lambda: (r(1), r(2), False),
        "silu_bwd": lambda: (r(1), r(2)),
        "mul_bwd": lambda: (r(1), r(2), r(3)),
        "div_bwd": lambda: (r(1), r(2, 0.5, 2.0), r(3)),
        "pow_bwd": lambda: (r(1, 0.5, 2.0), r(2), 3.0),
        "mse_bwd": lambda: (r(1), r(2), one, 1.0 / n),
        "accumulate_grad": lambda: (r(1), r(2)),
        "sgd_step": lambda: (r(1), r(2), r(3), 0.01, 0.9, 0.0, 1e-4, False, False),
        "adam_step": lambda: (r(1), r(2), r(3), r(4, 0.0, 1.0), 1e-3, 0.9, 0.999, 1e-8, 0.01, 10,
                              True),
    }
    return recipes[name]() if name in recipes else None


def bytes_moved(kernel, args) -> int:
    """Bytes a fused kernel must read and write: inputs, in-place arguments twice, outputs."""
    arrays = [(i, a) for i, a in enumerate(args) if hasattr(a, "nbytes")]
    total = sum(a.nbytes * (2 if i in kernel.inplace else 1) for i, a in arrays)
    return int(total + kernel.outputs * arrays[0][1].nbytes)


# PyTorch's own fused backward for the kernels it has one for (torch.ops.aten).
TORCH_KERNELS = {
    "relu_bwd": lambda A, y, gy: A.threshold_backward(gy, y, 0),
    "leaky_relu_bwd": lambda A, x, gy, s: A.leaky_relu_backward(gy, x, s, False),
    "sigmoid_bwd": lambda A, y, gy: A.sigmoid_backward(gy, y),
    "tanh_bwd": lambda A, y, gy: A.tanh_backward(gy, y),
    "gelu_bwd": lambda A, x, gy, tanh: A.gelu_backward(gy, x, approximate=(
        "tanh" if tanh else "none")),
    "silu_bwd": lambda A, x, gy: A.silu_backward(gy, x),
    "mse_bwd": lambda A, x, t, gy, scale: A.mse_loss_backward(gy, x, t, 1),   # 1: mean
    "accumulate_grad": lambda A, dst, src: dst.add_(src),
}


def make_kernel(impl, case):
    name, n = case.params["kernel"], case.size
    k = kernels.REGISTRY[name]
    args0 = kernel_args(name, impl.device, n)
    if args0 is None:
        raise NotImplementedError(f"no inputs recipe for kernel {name} in gpugrad/bench.py")
    xp = _xp(impl.device)
    if impl.lib == "copy":
        src = _rand(impl.device, (n,))
        dst = xp.empty_like(src)
        if xp is np:
            step = functools.partial(np.copyto, dst, src)
        else:
            step = functools.partial(dst.data.copy_from_device_async, src.data, src.nbytes)
        step.nbytes = 2 * src.nbytes
        return step
    args = tuple(_to("floor" if impl.lib == "gpugrad" else impl.lib, a, impl.device)
                 for a in args0)
    if impl.lib == "gpugrad":      # numpy arrays run the reference, CuPy arrays the kernel
        step = functools.partial(k, *args)
    elif impl.lib == "floor":      # the reference's chain of numpy / CuPy ops
        step = functools.partial(k.ref, xp, *args)
    else:
        step = functools.partial(TORCH_KERNELS[name], _torch().ops.aten, *args)
    step.nbytes = bytes_moved(k, args0)
    return step


def cases(mode: str = "quick", gpu: bool | None = None) -> list[Case]:
    """Every case of a run: ``quick`` (under a minute on 2 CPU cores) or ``full``."""
    gpu = has_cuda() if gpu is None else gpu
    full = mode == "full"
    out = [Case("overhead", "chain100", make_chain, 16)]
    for e in range(4, 9):
        if e <= 7 or (gpu and full):
            out.append(Case("elementwise", "elementwise", make_elementwise, 10 ** e,
                            sweep="elementwise", devices=DEVICES if e <= 7 else ("cuda",)))
    for topic, sizes in (("kernels", (6, 7) if full else (6,)),
                         ("bandwidth", (7, 8) if full else (7,))):
        for name in kernels.REGISTRY:
            libs = ("gpugrad", "floor") + (("torch",) if name in TORCH_KERNELS else ())
            for e in sizes:
                out.append(Case(topic, f"{topic.rstrip('s')}:{name}", make_kernel, 10 ** e,
                                params={"kernel": name}, **(
                                    {"libs": libs} if topic == "kernels" else
                                    {"libs": libs + ("copy",), "devices": ("cuda",)})))
    mlp = {"lr": 0.01}
    out.append(Case("mlp", "mlp_small", make_mlp, params={
        **mlp, "dims": (784, 256, 256, 10), "batch": 64}))
    out.append(Case("mlp", "mlp_large", make_mlp, params={
        **mlp, "dims": (1024, 1024, 1024, 10), "batch": 1024}))
    if full or gpu:
        for w in (64, 128, 256, 512, 1024) if full else (64, 128, 256, 512):
            out.append(Case("mlp", "mlp_sweep", make_mlp, w, "w", sweep="mlp_sweep", params={
                **mlp, "dims": (w, w, w, 10), "batch": w}))
    for n in (1000, 10_000) if full else (1000,):
        out.append(Case("graph", "graph", make_graph, n, "ops"))
    by_id = {c.id: c for c in out}
    for base in ["elementwise[n=1e6]", "mlp_small"] + (
            ["elementwise[n=1e7]", "mlp_large", "graph[ops=1000]"] if full else []):
        c = by_id[base]
        out.append(Case("memory", f"memory:{c.name}", c.make, c.size, c.unit, c.params))
    return out


def select(all_cases, patterns) -> list[Case]:
    """Cases whose id, name or topic is, or matches the glob of, one of the comma-separated
    ``patterns`` (ids contain brackets: ``elementwise[n=1e6]`` is taken literally)."""
    if not patterns:
        return list(all_cases)
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    return [c for c in all_cases if any(
        p in (c.id, c.name, c.topic) or fnmatch.fnmatch(c.id, p) or fnmatch.fnmatch(c.name, p)
        for p in pats)]


def pairs(selected, devices=DEVICES, libs=None) -> list[tuple[Case, Impl]]:
    return [(c, i) for c in selected for i in c.impls(devices, libs)]


# -- timing ------------------------------------------------------------------------------------
def sync_fn(impl):
    """What makes the host wait for the device (None on the CPU)."""
    if impl.device == "cpu":
        return None
    return _torch().cuda.synchronize if impl.lib == "torch" else gcuda.synchronize


def _events(impl):
    """(make a timing event, elapsed seconds between two) for a CUDA implementation."""
    if impl.device == "cpu":
        return None
    if impl.lib == "torch":
        cuda = _torch().cuda
        return (lambda: cuda.Event(enable_timing=True)), (lambda a, b: a.elapsed_time(b) / 1e3)
    cp = _backend.cupy_module()
    return cp.cuda.Event, (lambda a, b: cp.cuda.get_elapsed_time(a, b) / 1e3)


class Clock:
    """Seconds per call of ``step`` over ``number`` calls: wall clock (perf_counter, the device
    synchronized before start and stop) and, on a GPU, CUDA-event time."""

    def __init__(self, impl):
        self.sync, self.events = sync_fn(impl), _events(impl)

    def __call__(self, step, number=1):
        sync, ev = self.sync, self.events
        if sync:
            sync()
        if ev:
            e0, e1 = ev[0](), ev[0]()
            e0.record()
        t0 = time.perf_counter()
        for _ in range(number):
            step()
        if ev:
            e1.record()
        if sync:
            sync()
        wall = (time.perf_counter() - t0) / number
        return wall, (ev[1](e0, e1) / number if ev else None)


@dataclass
class Settings:
    repeat: int = 21          # samples per implementation (fewer past max_case_s)
    min_time: float = 0.005   # seconds per sample: fast steps are called ``number`` times
    max_case_s: float = 1.5   # stop sampling a case after this long (once min_repeat are in)
    min_repeat: int = 5


QUICK = Settings()
FULL = Settings(repeat=41, min_time=0.02, max_case_s=20.0, min_repeat=9)


def _compiled() -> float:
    from . import _cuda_kernels
    return sum(getattr(_cuda_kernels, "COMPILE_SECONDS", {}).values())


def _err(e) -> str:
    return f"{type(e).__name__}: {e}"[:300]


def measure(case, impls, settings=QUICK) -> dict:
    """Time ``case`` on each implementation: the cold first call, then interleaved samples."""
    entries, runs = {}, []
    for impl in impls:
        e = entries[impl.key] = {"lib": impl.lib, "device": impl.device, "label": impl.label}
        try:
            step, clock = case.make(impl, case), Clock(impl)
            compiled = _compiled() if impl.device == "cuda" else 0.0
            e["cold_s"] = clock(step)[0]
            if impl.device == "cuda" and impl.lib == "gpugrad":
                e["compile_s"] = _compiled() - compiled
            warm = clock(step)[0]
            number = max(1, min(10 ** 6, math.ceil(settings.min_time / max(warm, 1e-9))))
            for attr in ("nbytes", "note"):
                if hasattr(step, attr):
                    e[attr] = getattr(step, attr)
            runs.append((step, clock, number, e, []))
        except Exception as ex:
            e["error"] = _err(ex)
    start = time.perf_counter()
    for r in range(settings.repeat):
        for run in runs if r % 2 == 0 else runs[::-1]:   # interleaved, alternating order
            step, clock, number, e, samples = run
            if "error" not in e:
                try:
                    samples.append(clock(step, number))
                except Exception as ex:
                    e["error"] = _err(ex)
        if r + 1 >= settings.min_repeat and time.perf_counter() - start > settings.max_case_s:
            break
    for _, _, number, e, samples in runs:
        if samples and "error" not in e:
            wall = [w for w, _ in samples]
            e.update(median_s=statistics.median(wall), min_s=min(wall), number=number,
                     samples_s=wall)
            if samples[0][1] is not None:
                e["gpu_median_s"] = statistics.median(g for _, g in samples)
            if "nbytes" in e:
                e["gbps"] = e["nbytes"] / e.get("gpu_median_s", e["median_s"]) / 1e9
    del runs
    _free()
    return entries


def _free():
    gc.collect()
    if has_cuda():
        _backend.cupy_module().get_default_memory_pool().free_all_blocks()
    t = sys.modules.get("torch")
    if t is not None and t.cuda.is_available():
        t.cuda.empty_cache()


# -- peak memory -------------------------------------------------------------------------------
def _status_bytes(key):
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.M).group(1)) * 1024


def _rss_peak(step):
    """Peak resident memory above the start while ``step`` runs (Linux), else None."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")                     # resets VmHWM to the current RSS
        base = _status_bytes("VmRSS")
        step()
        return _status_bytes("VmHWM") - base
    except (OSError, AttributeError):
        return None


def _traced_peak(step):
    import tracemalloc
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    step()
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def peak_here(case, impl) -> dict:
    """Peak memory one warm step of ``case`` needs beyond its inputs and parameters."""
    step, sync = case.make(impl, case), sync_fn(impl)
    step()
    if hasattr(step, "clear"):
        step.clear()
    if sync:
        sync()
    gc.collect()
    if impl.device == "cuda":
        mem = _torch().cuda if impl.lib == "torch" else gcuda
        mem.reset_peak_memory_stats()
        base = mem.memory_allocated()
        step()
        sync()
        return {"peak_bytes": mem.max_memory_allocated() - base,
                "method": f"{'torch' if impl.lib == 'torch' else 'gpugrad'}.cuda allocator"}
    out = {}
    rss = _rss_peak(step)
    if rss is not None:
        out.update(peak_bytes=rss, method="RSS high-water mark, large blocks mmapped")
    if impl.lib != "torch":   # tracemalloc sees numpy's allocations, not PyTorch's
        out["traced_peak_bytes"] = _traced_peak(step)
        out.setdefault("peak_bytes", out["traced_peak_bytes"])
        out.setdefault("method", "tracemalloc")
    return out


def _memory_child(case_id, keys):
    """Runs in a fresh process: glibc's malloc is told to mmap (and so return to the OS) every
    block over 64 kB, which makes the RSS high-water mark count what numpy and PyTorch hold."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 64 * 1024)   # M_MMAP_THRESHOLD (fixed: no dynamic raise)
        libc.mallopt(-1, 64 * 1024)   # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass
    case = next(c for c in cases("full", has_cuda()) + cases("quick", has_cuda())
                if c.id == case_id)
    out = {}
    for key in keys:
        try:
            out[key] = peak_here(case, Impl(*key.split("-", 1)))
        except Exception as e:
            out[key] = {"error": _err(e)}
    print(json.dumps(out))


def measure_memory(case, impls) -> dict:
    """Peak memory of each implementation, measured in one fresh Python process per case."""
    entries = {i.key: {"lib": i.lib, "device": i.device, "label": i.label} for i in impls}
    root = str(Path(gpugrad.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    code = (f"from gpugrad.bench import _memory_child; "
            f"_memory_child({case.id!r}, {[i.key for i in impls]!r})")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=env, timeout=600)
        found = json.loads(p.stdout.strip().splitlines()[-1]) if p.returncode == 0 else {}
        for key, e in entries.items():
            why = (p.stderr.strip().splitlines() or ["no result"])[-1][-300:]
            e.update(found.get(key, {"error": why}))
    except (subprocess.SubprocessError, ValueError, IndexError) as ex:
        for e in entries.values():
            e["error"] = _err(ex)
    return entries


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
    return out


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def set_threads(n: int) -> str | None:
    """Limit PyTorch's and the BLAS's CPU threads to ``n``; returns a warning, or None."""
    for var in THREAD_VARS:
        os.environ[var] = str(n)   # for the memory subprocesses
    t = _torch()
    if t is not None:
        t.set_num_threads(n)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return ("threadpoolctl is not installed: numpy's BLAS keeps its threads (install it, or "
                "set OPENBLAS_NUM_THREADS before starting)")
    threadpool_limits(n)
    return None


def threads() -> dict:
    t = sys.modules.get("torch")
    return {"torch": t.get_num_threads() if t is not None else None,
            **{v: os.environ[v] for v in THREAD_VARS if v in os.environ}}


def ratios(impls: dict) -> dict:
    """gpugrad over each reference on the same device, and gpugrad's CPU time over its GPU's."""
    med = {k: e["median_s"] for k, e in impls.items() if "median_s" in e}
    out = {}
    for dev in DEVICES:
        g = med.get(f"gpugrad-{dev}")
        for ref in ("torch", "floor", "copy"):
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
    ("cuda", "fused kernels (worst) vs d2d copy bandwidth", "bandwidth:*", "gpugrad-cuda",
     "copy-cuda", ">=", 0.8),
    ("cuda", "large MLP step vs PyTorch eager", "mlp_large", "gpugrad-cuda", "torch-cuda", "<=",
     1.1),
    ("cuda", "1e7 elementwise backward vs PyTorch eager", "elementwise[n=1e7]", "gpugrad-cuda",
     "torch-cuda", "<=", 0.7),
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
    cols = [f"{lib}-{d}" for d in devs for lib in LIBS
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
    p.add_argument("--threads", type=int, help="CPU threads for PyTorch and the BLAS (default: "
                   "each library's own; 1 gives steadier figures on a busy machine)")
    p.add_argument("--out", help="JSON record (default bench/results/<device>-<date>.json)")
    p.add_argument("--no-json", action="store_true", help="write no JSON record")
    p.add_argument("--plot", metavar="PNG", help="time vs size per device (needs matplotlib)")
    p.add_argument("--list", action="store_true", help="list the selected cases and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    a = p.parse_args(argv)
    mode = a.mode or "quick"
    devices = tuple(d for d in a.devices.split(",") if d in DEVICES)
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
    record = run(selected, devices=devices, libs=tuple(a.libs.split(",")), mode=mode,
                 settings=settings, log=log)
    print(report(record))
    if not a.no_json:
        out = Path(a.out or f"bench/results/{record['machine']['slug']}-{record['date']}.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(record, indent=1) + "\n")
        print(f"\nrecord written to {out}")
    if a.plot:
        print(plot(record, a.plot))
    return 0


if __name__ == "__main__":
    sys.exit(main())
