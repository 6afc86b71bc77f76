"""Backward fusion: a region of elementwise nodes runs as one generated kernel.

An eager engine runs one kernel per node, and every gradient between two nodes makes a round
trip through memory. When backward reaches an elementwise node (``Op.elementwise``), the engine
asks :func:`run` to grow a *region* from it: the nodes below it whose every remaining incoming
edge comes from inside the region, that are elementwise too, and that nobody watches (no hooks,
no ``retain_grad``, not an ``autograd.grad`` input). The region has one entry, the gradient that
reached its head, so it can run at once. Its nodes' own backward formulas are traced
symbolically (``_trace``) into one expression DAG; gradients inside the region stay in
registers, and each gradient leaving it is written once, already summed over its edges. For
``(tanh(x) * sigmoid(x) + relu(x)).sum()`` that is one kernel reading three saved arrays and
writing x's gradient, where the unfused backward runs seven.

What users see does not change: ``grad_fn`` graphs, hooks (a hooked node is never fused), the
error of a second backward, the in-place-modification check and the release of saved values
all behave as unfused. Results agree to rounding (a sum of contributions may be added in a
different order). Regions are never built under ``create_graph=True`` or anomaly mode.

``set_mode``: ``"auto"`` (default) fuses on CUDA, where a launch and a memory pass are what
backward costs, and on the CPU the regions whose gradient has at least ``CPU_MIN_ELEMENTS``
elements: there the traced DAG is evaluated block by block (``_parallel.elementwise``), every
block's temporaries in cache, the blocks on the CPU's threads; ``"always"`` fuses on numpy at
every size (the test of the traced formulas without a GPU); ``"off"`` never fuses. The
environment variable ``GPUGRAD_FUSION`` sets the initial mode.
"""
from __future__ import annotations

import contextlib
import math
import os
import time
import warnings

import numpy as np

from .. import _cpu_kernels, _parallel
from . import _trace

MODES = ("auto", "always", "off")


class RegionCompileError(RuntimeError):
    """A generated region kernel did not compile (the region then runs unfused, with a
    warning; a bug to report, never a failed backward)."""
MAX_NODES = 256           # a longer chain is fused in pieces
# measured by bench/tuning/threads.py: below this a region's gradient runs unfused on the CPU
# in auto mode, and whole rather than by blocks in always mode (2-core development machine:
# fused was 0.99 of unfused at 2^19, 0.93 at 2^20, 0.76 from 2^22; under load it paid from 2^22)
CPU_MIN_ELEMENTS = 1 << 20
# with the compiled CPU loops (gpugrad/_cpu_kernels/region.py): regions from this size run as
# one compiled loop; smaller ones stay unfused in auto mode (a region's first run compiles it,
# ~0.1-0.3 s, which only pays where backward passes are long)
CPU_COMPILED_MIN_ELEMENTS = 1 << 14
_DTYPES = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_MISSING = object()


def _checked(mode):
    if mode not in MODES:
        raise ValueError(f"fusion mode must be one of {', '.join(map(repr, MODES))}, "
                         f"got {mode!r}")
    return mode


_mode = _checked(os.environ.get("GPUGRAD_FUSION", "auto"))
stats = {"regions": 0, "nodes": 0, "plans_built": 0, "kernels_compiled": 0,
         "compile_seconds": 0.0}


def mode() -> str:
    return _mode


def set_mode(new: str) -> None:
    """``"auto"`` (fuse on CUDA), ``"always"`` (on numpy too) or ``"off"``."""
    global _mode
    _mode = _checked(new)


@contextlib.contextmanager
def using(new: str):
    """``with fusion.using("off"): ...`` runs the block's backward passes in that mode."""
    old = _mode
    set_mode(new)
    try:
        yield
    finally:
        set_mode(old)


def reset_stats() -> None:
    """Zero the counters: regions run, nodes they held, plans traced, kernels compiled."""
    stats.update(regions=0, nodes=0, plans_built=0, kernels_compiled=0, compile_seconds=0.0)


def plans() -> list:
    """The traced regions cached so far (``Plan.source(ctype)`` shows a region's kernel)."""
    return [p for p in _plans.values() if p is not None]


def active(grad) -> bool:
    """Whether a backward seeded with array ``grad`` fuses (the engine asks once per call)."""
    return _mode == "always" or (_mode == "auto" and not isinstance(grad, _NUMPY))


_NUMPY = (np.ndarray, np.generic)   # numpy hands back 0-d results as scalars


def min_size(grad) -> int | None:
    """For a backward seeded with array ``grad``: None when nothing fuses, else the least
    number of elements a region's gradient needs to fuse (0: every region)."""
    if _mode == "off":
        return None
    if _mode == "always" or not isinstance(grad, _NUMPY):
        return 0
    return CPU_COMPILED_MIN_ELEMENTS if _cpu_kernels.enabled() else CPU_MIN_ELEMENTS


# -- regions -----------------------------------------------------------------------------------
def _fusible(c, needed, targets) -> bool:
    return (c.elementwise and c._extra is None and c._in_meta is None and c.n_outputs == 1
            and (needed is None or c in needed) and (targets is None or c not in targets))


def _grow(head, deps, needed, targets) -> list:
    """The head, then every node all of whose remaining incoming edges come from the region,
    in an order where each node follows all its producers."""
    if head._in_meta is not None or head.n_outputs != 1:
        return [head]   # its gradients are summed to broadcast inputs' shapes: not one pass
    members, seen, count = [head], {head}, {}
    i = 0
    while i < len(members) and len(members) < MAX_NODES:
        for c, _ in members[i].next_functions:
            if c is None or c in seen:
                continue
            k = count[c] = count.get(c, 0) + 1
            if k == deps.get(c) and _fusible(c, needed, targets):
                seen.add(c)
                members.append(c)
        i += 1
    return members


_slot_names: dict = {}   # class -> its own __slots__ (the attributes its formula may read)


def _slot_values(m):
    cls = m.__class__
    names = _slot_names.get(cls)
    if names is None:
        s = cls.__dict__.get("__slots__", ())
        names = _slot_names[cls] = (s,) if isinstance(s, str) else tuple(s)
    return tuple([getattr(m, n, None) for n in names]) if names else ()


def _describe(members, grads, buffers, needed):
    """The region's key (what its kernel depends on) and the values a launch reads: the
    arrays (gradients in, saved values; each array once), the saved numbers, the outgoing
    edges grouped by destination. None when some value does not fit one elementwise pass."""
    g = grads[0]
    dtype = g.dtype
    if dtype not in _DTYPES:
        return None
    if isinstance(g, np.generic):
        g = np.asarray(g)
    cls, shape = g.__class__, g.shape
    index = {m: j for j, m in enumerate(members)}
    arrays, ids, params, groups, outgoing = [g], {}, [], {}, []
    key = [dtype.char]
    for j, m in enumerate(members):
        saved = m._saved
        if saved is None:
            m._check_saved()   # raises: the graph was freed
        if saved.__class__ is not tuple:
            return None   # packed by saved-tensor hooks: unpacked once, by the node itself
        if m._versions is not None:
            for e in m._versions:
                if e is not None and e[0].v != e[1]:
                    m._check_saved()   # raises: modified in place
        sig = [0 if j == 0 else -1]
        buf = buffers.get(m) if j else None
        if buf is not None and buf[0] is not None:
            b = buf[0]
            if isinstance(b, np.generic):
                b = np.asarray(b)
            if b.__class__ is not cls or b.shape != shape or b.dtype != dtype:
                return None
            sig[0] = len(arrays)
            arrays.append(b)
        for v in saved:
            if isinstance(v, np.generic) and cls is np.ndarray:
                v = np.asarray(v)   # a 0-d value numpy returned as a scalar
            if v is None:
                sig.append("n")
            elif v.__class__ is cls:
                if v.shape != shape or v.dtype != dtype:
                    return None
                k = ids.get(id(v))
                if k is None:
                    k = ids[id(v)] = len(arrays)
                    arrays.append(v)
                sig.append(k)
            elif isinstance(v, (int, float)) and not isinstance(v, complex):
                sig.append("p")
                params.append(v)
            else:
                return None
        edges = []
        for c, nr in m.next_functions:
            if c is None or (needed is not None and c not in needed):
                edges.append(None)
            elif c in index:
                edges.append(index[c])
            else:
                gi = groups.get((c, nr))
                if gi is None:
                    gi = groups[(c, nr)] = len(outgoing)
                    outgoing.append([c, nr, 0])
                outgoing[gi][2] += 1
                edges.append(-1 - gi)
        key.append((m.__class__, _slot_values(m), tuple(sig), tuple(edges)))
    return tuple(key), arrays, params, outgoing


def run(head, grads, deps, buffers, needed, targets, retain_graph):
    """Run the region headed by ``head`` (whose gradient is ``grads``) if there is one worth
    fusing. Returns ``(edges, gradients)`` for the engine to deliver, or None (run ``head``
    alone)."""
    members = _grow(head, deps, needed, targets)
    if len(members) < 2:
        return None
    described = _describe(members, grads, buffers, needed)
    if described is None:
        return None
    key, arrays, params, outgoing = described
    try:
        plan = _plans.get(key, _MISSING)
    except TypeError:   # an attribute that is not a plain value (unhashable): never fused
        return None
    if plan is _MISSING:
        if len(_plans) >= _MAX_PLANS:
            _plans.clear()
        plan = _plans[key] = _build(members, key, len(arrays), len(params), len(outgoing))
    if plan is None:
        return None
    try:
        outs = plan.run(arrays, params, grads[0].shape, grads[0].dtype)
    except RegionCompileError as e:   # nothing has changed yet: this region runs unfused
        _plans[key] = None
        warnings.warn(f"{e}; this region's nodes run one by one", UserWarning, stacklevel=2)
        return None
    for m in members[1:]:
        buffers.pop(m, None)
    if not retain_graph:
        for m in members:
            m._saved = None
            if m.temps:
                m._release()
    stats["regions"] += 1
    stats["nodes"] += len(members)
    edges, values = [], []
    outs = iter(outs)
    for (c, nr, count), has in zip(outgoing, plan.has_output):
        edges.append((c, nr))
        values.append(next(outs) if has else None)
        for _ in range(count - 1):
            edges.append((c, nr))
            values.append(None)
    return edges, values


# -- plans: what a region key compiles to ----------------------------------------------------
_MAX_PLANS = 512
_plans: dict = {}   # region key -> Plan, or None when its formulas cannot be traced


class Plan:
    """A traced region: its DAG and outputs, its kernels (per device), its CPU evaluation."""

    def __init__(self, nodes, outputs, has_output, n_inputs, n_params):
        self.nodes, self.outputs, self.has_output = nodes, outputs, has_output
        self.n_inputs, self.n_params = n_inputs, n_params
        self.live = _trace.live(nodes, outputs)
        self._functions: dict = {}
        self._cpu: dict = {}   # (dtype, which inputs are one value) -> compiled loop or None

    def source(self, ctype: str) -> str:
        from .._cuda_kernels import read_source
        return _trace.cuda_source(read_source("backward_region.cu"), self.nodes, self.outputs,
                                  self.n_inputs, self.n_params, ctype, "backward_region")

    def run(self, arrays, params, shape, dtype):
        if arrays[0].__class__ is np.ndarray:
            n = math.prod(shape)
            if self.outputs and n >= CPU_COMPILED_MIN_ELEMENTS and _cpu_kernels.enabled():
                outs = self._compiled(arrays, params, shape, dtype, n)
                if outs is not None:
                    return outs
            if self.outputs and n >= CPU_MIN_ELEMENTS:
                outs = self._blocks(arrays, params, dtype)
                if outs is not None:
                    return outs
            return _trace.evaluate(self.nodes, self.live, self.outputs, arrays, params, dtype,
                                   shape, np)
        return self._launch(arrays, params, shape, dtype)

    def _compiled(self, arrays, params, shape, dtype, n):
        """The region as one compiled loop over the flattened arrays (None when it has no
        compiled form, or an array is neither contiguous nor one value expanded)."""
        inputs = []
        for a in arrays:
            if a.flags.c_contiguous:
                inputs.append(a.reshape(-1))
            elif a.size and not any(a.strides):
                inputs.append(a.reshape(-1)[0])   # one value: passed as that value
            else:
                return None
        scalars = tuple(a.__class__ is not np.ndarray for a in inputs)
        key = (dtype.char, scalars)
        fn = self._cpu.get(key, _MISSING)
        if fn is _MISSING:
            fn = self._cpu[key] = _cpu_kernels.compile_region(self.nodes, self.live, self.outputs,
                                                              scalars, self.n_params, dtype.type)
            if fn is not None:
                stats["kernels_compiled"] += 1
        if fn is None:
            return None
        scalar = dtype.type
        outs = [np.empty(n, dtype) for _ in self.outputs]
        _cpu_kernels.launch(fn, inputs, [scalar(p) for p in params], outs, n)
        return [o.reshape(shape) for o in outs]

    def _blocks(self, arrays, params, dtype):
        """The CPU evaluation over blocks of the gradient, on the CPU's threads (None when an
        array is neither contiguous nor one value expanded: then it runs whole)."""
        nodes, live, outputs = self.nodes, self.live, self.outputs

        def block(*parts):
            n = next(p.size for p in parts if p.__class__ is np.ndarray)
            outs = _trace.evaluate(nodes, live, outputs, parts, params, dtype, (n,), np)
            return outs[0] if len(outs) == 1 else tuple(outs)
        outs = _parallel.elementwise(block, arrays, alone=True)
        if outs is None:
            return None
        return [outs] if len(self.outputs) == 1 else list(outs)

    def _launch(self, arrays, params, shape, dtype):
        from .. import _backend, _cuda_kernels
        cp = _backend.cupy_module()
        device = arrays[0].device
        with device:
            fn = self._functions.get(device.id)
            if fn is None:
                start = time.perf_counter()
                try:
                    module = cp.RawModule(code=self.source(_DTYPES[dtype]),
                                          options=_cuda_kernels.NVRTC_OPTIONS)
                    fn = module.get_function("backward_region")
                except Exception as e:   # NVRTC's error, with its log
                    raise RegionCompileError(f"a fused backward region did not compile "
                                             f"({type(e).__name__}: {str(e)[:500]})") from e
                self._functions[device.id] = fn
                stats["kernels_compiled"] += 1
                stats["compile_seconds"] += time.perf_counter() - start
            args, outs = self.arguments(arrays, params, shape, dtype, cp)
            n = args[-1]
            if n:
                fn((_cuda_kernels._grid(int(n), device.id),), (_cuda_kernels.THREADS,),
                   tuple(args))
        return outs


    def arguments(self, arrays, params, shape, dtype, xp):
        """The kernel's arguments in its parameter order, and the outputs it will fill."""
        args = []
        for a in arrays:
            if a.flags.c_contiguous:
                args += (a, _ONE)
            elif a.size and not any(a.strides):   # one value, expanded: read, never copied
                args += (a, _ZERO)
            else:
                args += (xp.ascontiguousarray(a), _ONE)
        scalar = dtype.type
        args += [scalar(p) for p in params]
        outs = [xp.empty(shape, dtype) for _ in self.outputs]
        args += outs
        args.append(np.int64(outs[0].size if outs else 0))
        return args, outs


_ONE, _ZERO = np.int64(1), np.int64(0)


def _build(members, key, n_inputs, n_params, n_groups):
    """Trace each member's backward formula into one DAG (None when some formula cannot be)."""
    stats["plans_built"] += 1
    tracer = _trace.Tracer()
    ns = _trace.SymNS(tracer)
    inputs = [tracer.input(k) for k in range(n_inputs)]
    upstream: list[list] = [[] for _ in members]
    leaving: list[list] = [[] for _ in range(n_groups)]
    p = 0
    try:
        for j, m in enumerate(members):
            cls, _, sig, edges = key[1 + j]
            if sig[0] >= 0:
                upstream[j].append(inputs[sig[0]])
            saved = []
            for s in sig[1:]:
                if s == "n":
                    saved.append(None)
                elif s == "p":
                    saved.append(tracer.param(p))
                    p += 1
                else:
                    saved.append(inputs[s])
            if not upstream[j]:
                continue   # no gradient reaches it: it sends none either
            gy = _sum(upstream[j])
            out = m.backward(ns, gy, *saved) if saved else m.backward(ns, gy)
            if out.__class__ is not tuple:
                out = (out,)
            if len(out) != len(edges):
                return None
            for e, gx in zip(edges, out):
                if e is None or gx is None:
                    continue
                gx = tracer.lift(gx)
                (upstream[e] if e >= 0 else leaving[-1 - e]).append(gx)
    except _trace.TraceError:
        return None
    except Exception:   # noqa: BLE001 - a formula symbols cannot pass through runs unfused,
        return None     # where it meets real arrays (and raises there if it is wrong)
    outputs = [_sum(terms).index for terms in leaving if terms]
    return Plan(tracer.nodes, outputs, [bool(t) for t in leaving], n_inputs, n_params)


def _sum(terms):
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total
