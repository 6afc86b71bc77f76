"""The benchmark cases: what each implementation (library x device) runs as one step."""
from __future__ import annotations

import fnmatch
import functools
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import gpugrad

from .. import _backend, kernels
from .. import cuda as gcuda
from . import models

LIBS = ("gpugrad", "torch", "floor")
UNFUSED = "unfused"   # gpugrad with backward fusion off (CUDA only: the CPU never fuses)
UFUNCS = "ufuncs"     # gpugrad with CuPy's ufuncs for the forward (kernels.lean off; CUDA only)
VARIANTS = (UNFUSED, UFUNCS)
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
    if lib in VARIANTS:
        return device == "cuda" and has_cuda()
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
        if self.lib in VARIANTS:
            return f"gpugrad {self.lib} {self.device}"
        return "d2d copy" if self.lib == "copy" else f"{self.lib} {self.device}"


@dataclass
class Case:
    topic: str   # overhead | elementwise | kernels | mlp | recurrent | models | graph | graphs |
    #              train | memory | bandwidth
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
    if lib in ("gpugrad", *VARIANTS):
        t = gpugrad.as_tensor(a)
    else:
        torch = _torch()
        t = torch.from_numpy(a) if isinstance(a, np.ndarray) else torch.from_dlpack(a)
        t = t.to(device)
    return t.requires_grad_() if requires_grad else t


def _module(lib):
    return gpugrad if lib in ("gpugrad", *VARIANTS) else _torch()


def _fusion_as(impl, step):
    """``step``, run with backward fusion off for the unfused column, with CuPy's ufuncs for
    the forward for the ufuncs column."""
    if impl.lib == UNFUSED:
        from ..autograd import fusion

        def unfused():
            with fusion.using("off"):
                return step()
        return unfused
    if impl.lib == UFUNCS:
        def ufuncs():
            kernels.lean.enabled = False
            try:
                return step()
            finally:
                kernels.lean.enabled = True
        return ufuncs
    return step


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
    return _fusion_as(impl, step)


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
    return _fusion_as(impl, step)


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
    step = _fusion_as(impl, step)
    step.clear = opt.zero_grad   # frees the grads held between steps (peak memory baseline)
    return step


def make_graphed(impl, case):
    """The base case's step captured once as a CUDA graph (PyTorch's recipe: three warm-up steps
    on a side stream, then capture); each timed step is one replay. gpugrad and PyTorch each
    replay their own graph."""
    step = {"chain100": make_chain, "mlp_small": make_mlp,
            "mlp_large": make_mlp}[case.params["base"]](impl, case)
    T = _module(impl.lib)
    side = T.cuda.Stream()
    side.wait_stream(T.cuda.current_stream())
    with T.cuda.stream(side):
        for _ in range(3):
            step()
    T.cuda.current_stream().wait_stream(side)
    g = T.cuda.CUDAGraph()
    with T.cuda.graph(g):
        step()

    def replay():
        g.replay()
    replay.graph = g   # keeps the graph (and its memory) alive with the step
    return replay


def make_train_epoch(impl, case):
    """One epoch of ``gpugrad train``'s default job (spirals, MLP 2-64-64-3, Adam, batch 64):
    gpugrad as the command runs it (on CUDA, the step replayed as a CUDA graph), PyTorch as the
    same loop written eagerly."""
    from .. import datasets  # layering: loaded by this case only (a sibling on the top layer)
    from .. import train as job  # layering: as above
    split, dev, bs = datasets.load("spirals"), impl.device, 64
    x0, y0 = split.x_train.numpy(), split.y_train.numpy()
    order0 = np.random.default_rng(0).permutation(len(y0))
    x, y, order = (_to(impl.lib, a, dev) for a in (_xp(dev).asarray(x0), _xp(dev).asarray(y0),
                                                   _xp(dev).asarray(order0)))
    T = _module(impl.lib)
    T.manual_seed(0)
    if impl.lib == "gpugrad":
        model = job.build_model(64, 2, 2, 3).to(dev)
        graphed = dev == "cuda"
        opt = T.optim.Adam(model.parameters(), lr=1e-2, capturable=graphed)
        loss_fn = T.nn.CrossEntropyLoss()
        if graphed:
            captured = job.CapturedStep(model, opt, loss_fn, x, y, bs)
            return lambda: captured.epoch(order)
    else:
        nn = T.nn
        model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                              nn.Linear(64, 3)).to(dev)
        opt, loss_fn = T.optim.Adam(model.parameters(), lr=1e-2), nn.CrossEntropyLoss()

    def epoch():
        total = 0.0
        for start in range(0, len(y0), bs):
            idx = order[start:start + bs]
            opt.zero_grad()
            loss = loss_fn(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            total = total + loss.detach()
        return total
    return epoch


def make_model(impl, case):
    """One training step of a real model (``bench/models.py``), the same code on both libraries."""
    return models.gpt_step(_module(impl.lib), impl.device, **case.params)


# Recurrent language model: one training step of embedding -> 2-layer LSTM (or GRU) ->
# linear decoder -> cross-entropy, backward, Adam step; float32, time-major, same init per lib.
def make_recurrent(impl, case):
    p, dev = case.params, impl.device
    vocab, emb, hidden, seq, batch = p["vocab"], p["emb"], p["hidden"], p["seq"], p["batch"]
    T = _module(impl.lib)
    T.manual_seed(0)
    nn = T.nn
    embed = nn.Embedding(vocab, emb)
    rnn = (nn.LSTM if case.name == "lstm" else nn.GRU)(emb, hidden, num_layers=2)
    head = nn.Linear(hidden, vocab)
    rng = np.random.default_rng(3)
    for prm in (*embed.parameters(), *rnn.parameters(), *head.parameters()):
        with T.no_grad():   # the same weights in both libraries
            prm.copy_(T.from_numpy(rng.uniform(-0.1, 0.1, tuple(prm.shape)).astype(np.float32)))
    model = nn.ModuleList([embed, rnn, head]).to(dev)
    tokens = _to(impl.lib, _xp(dev).asarray(_labels(dev, seq * batch, vocab, seed=4)
                                            .reshape(seq, batch)), dev)
    targets = _to(impl.lib, _xp(dev).asarray(_labels(dev, seq * batch, vocab, seed=5)), dev)
    opt = T.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        out, _ = rnn(embed(tokens))
        loss = loss_fn(head(out).reshape(-1, vocab), targets)
        loss.backward()
        opt.step()
        return loss
    step.clear = opt.zero_grad
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


# The recurrent cells' outputs, in (rows, hidden) states: h', c', act (5); d (4), dc; h', act
# (4); d_gi (3), d_gh (3), dh.
CELL_OUTPUTS = {"lstm_cell": 7, "lstm_cell_bwd": 5, "gru_cell": 5, "gru_cell_bwd": 7}


# Fused kernels: inputs for each kernel in ``kernels.REGISTRY`` (n elements per array).
def kernel_args(name, device, n):
    """Arguments of kernel ``name`` at ``n`` elements, or None when no recipe exists."""
    xp = _xp(device)
    r = functools.partial(_rand, device, (n,))
    one = xp.ones((), dtype=np.float32)
    if name in ("log_softmax", "log_softmax_bwd", "nll_fwd", "sum_rows"):
        C = min(n, 1000)
        z = _rand(device, (n // C, C))
        if name in ("log_softmax", "sum_rows"):
            return (z,)
        if name == "nll_fwd":
            return z, _labels(device, n // C, C), None, -100
        return z - xp.log(xp.exp(z).sum(axis=1, keepdims=True)), _rand(device, (n // C, C), 2)
    if name == "gemm":   # a toy model's product: (64, k) @ (k, 256), n / 4096 deep
        k = max(1, n // 4096)
        return _rand(device, (64, k)), _rand(device, (k, 256), 2)
    if name == "softmax_xent_bwd":
        C = min(n, 1000)
        z = _rand(device, (n // C, C))
        logp = z - xp.log(xp.exp(z).sum(axis=1, keepdims=True))
        return logp, _labels(device, n // C, C), one, C / n
    if name in CELL_OUTPUTS:   # one step of a cell over (n / 256, 256) units
        rows, k = max(1, n // 256), 4 if name.startswith("lstm") else 3
        g = functools.partial(_rand, device, (rows, k * 256))
        s = functools.partial(_rand, device, (rows, 256))
        return {"lstm_cell": lambda: (g(1), g(2), _rand(device, (k * 256,), 3), s(4)),
                "gru_cell": lambda: (g(1), g(2), _rand(device, (k * 256,), 3), s(4)),
                "lstm_cell_bwd": lambda: (_rand(device, (5, rows, 256), 1, 0.0, 1.0), s(2),
                                          s(3), s(4)),
                "gru_cell_bwd": lambda: (_rand(device, (4, rows, 256), 1, 0.0, 1.0), s(2),
                                         s(3))}[name]()
    recipes = {
        "add": lambda: (r(1), r(2)),
        "mul": lambda: (r(1), r(2)),
        "add_scalar": lambda: (r(1), 0.5),
        "mul_scalar": lambda: (r(1), 1.01),
        "relu": lambda: (r(1),),
        "tanh": lambda: (r(1),),
        "sigmoid": lambda: (r(1),),
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
    if kernel.name == "gemm":   # its output is (m, n), not shaped like an input
        a, b = args
        return int(a.nbytes + b.nbytes + a.shape[0] * b.shape[1] * a.itemsize)
    if kernel.name in CELL_OUTPUTS:   # outputs counted in (rows, hidden) states
        state = args[-1] if kernel.name != "gru_cell_bwd" else args[1]
        return int(sum(a.nbytes for a in args if a is not None)
                   + CELL_OUTPUTS[kernel.name] * state.nbytes)
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
    "gemm": lambda A, a, b: A.mm(a, b),   # cuBLAS
    "add": lambda A, x, y: A.add(x, y),
    "mul": lambda A, x, y: A.mul(x, y),
    "add_scalar": lambda A, x, s: A.add(x, s),
    "mul_scalar": lambda A, x, s: A.mul(x, s),
    "relu": lambda A, x: A.relu(x),
    "tanh": lambda A, x: A.tanh(x),
}


def make_kernel(impl, case):
    name, n = case.params["kernel"], case.size
    k = kernels.REGISTRY[name]
    args0 = kernel_args(name, impl.device, n)
    if args0 is None:
        raise NotImplementedError(f"no inputs recipe for kernel {name} in gpugrad/bench/cases.py")
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
    if impl.lib == "gpugrad":      # the dispatcher: numpy arrays run the compiled CPU loop
        # where there is one (else the reference), CuPy arrays the kernel
        step = functools.partial(getattr(kernels, name), *args)
    elif impl.lib == "floor":      # the reference's chain of numpy / CuPy ops
        step = functools.partial(k.ref, xp, *args)
    else:
        step = functools.partial(TORCH_KERNELS[name], _torch().ops.aten, *args)
    step.nbytes = bytes_moved(k, args0)
    return step


# Kernels that read one element of each row (n counts the rows' elements): not measured against
# the copy bandwidth, which would count bytes they never touch; their timing case remains.
GATHERS = frozenset({"nll_fwd", "gemm"})   # (gemm: compute, not memory, bounds it)


def cases(mode: str = "quick", gpu: bool | None = None) -> list[Case]:
    """Every case of a run: ``quick`` (under a minute on 2 CPU cores) or ``full``."""
    gpu = has_cuda() if gpu is None else gpu
    full = mode == "full"
    fused = LIBS + VARIANTS   # elementwise regions: fused, unfused and on CuPy's ufuncs
    out = [Case("overhead", "chain100", make_chain, 16, libs=fused)]
    for e in range(4, 9):
        if e <= 7 or (gpu and full):
            out.append(Case("elementwise", "elementwise", make_elementwise, 10 ** e, libs=fused,
                            sweep="elementwise", devices=DEVICES if e <= 7 else ("cuda",)))
    for topic, sizes in (("kernels", (6, 7) if full else (6,)),
                         ("bandwidth", (7, 8) if full else (7,))):
        for name in kernels.REGISTRY:
            if topic == "bandwidth" and name in GATHERS:
                continue
            libs = ("gpugrad", "floor") + (("torch",) if name in TORCH_KERNELS else ())
            for e in sizes:
                out.append(Case(topic, f"{topic.rstrip('s')}:{name}", make_kernel, 10 ** e,
                                params={"kernel": name}, **(
                                    {"libs": libs} if topic == "kernels" else
                                    {"libs": libs + ("copy",), "devices": ("cuda",)})))
    mlp = {"lr": 0.01}
    out.append(Case("mlp", "mlp_small", make_mlp, params={
        **mlp, "dims": (784, 256, 256, 10), "batch": 64}, libs=LIBS + (UFUNCS,)))
    out.append(Case("mlp", "mlp_large", make_mlp, params={
        **mlp, "dims": (1024, 1024, 1024, 10), "batch": 1024}, libs=LIBS + (UFUNCS,)))
    if full or gpu:
        for w in (64, 128, 256, 512, 1024) if full else (64, 128, 256, 512):
            out.append(Case("mlp", "mlp_sweep", make_mlp, w, "w", sweep="mlp_sweep", params={
                **mlp, "dims": (w, w, w, 10), "batch": w}))
    rnn_lm = {"vocab": 1000, "emb": 128, "hidden": 128, "seq": 32, "batch": 16}
    for name in ("lstm", "gru"):
        out.append(Case("recurrent", name, make_recurrent, params=rnn_lm,
                        libs=("gpugrad", "torch")))
    for n in (1000, 10_000) if full else (1000,):
        out.append(Case("graph", "graph", make_graph, n, "ops"))
    out.append(Case("train", "train:spirals", make_train_epoch, libs=("gpugrad", "torch")))
    out.append(Case("models", "gpt", make_model, params=dict(models.GPT),
                    libs=("gpugrad", "torch")))
    if gpu:   # a whole step replayed as one CUDA graph: gpugrad's against PyTorch's
        for base in (out[0], *(c for c in out if c.name in ("mlp_small", "mlp_large"))):
            out.append(Case("graphs", f"graphed:{base.name}", make_graphed, base.size,
                            base.unit, {**base.params, "base": base.name},
                            libs=("gpugrad", "torch"), devices=("cuda",)))
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


