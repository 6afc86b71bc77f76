"""Recording: the timing wrappers a profile swaps in, and the spans they record.

Nothing here runs while no profile records: ``install`` swaps the wrappers in (``Op.apply``,
``Function.apply``, every node class's ``_run``, the specialised direct functions behind the
hottest operators, and the engine's fused-region call) and ``uninstall`` puts the originals
back. A wrapper times the original call with ``perf_counter_ns`` and appends a ``Span``; spans
nest through a per-thread stack, so a span's parent is the span open when it began.

Names, as PyTorch's profiler shows them: a forward op is ``aten::<op>`` (``MulBackward0`` ->
``aten::mul``), a custom ``Function`` its class name; a backward node runs inside
``autograd::engine::evaluate_function: <node>`` with the node's own name (``MulBackward0``,
``torch::autograd::AccumulateGrad``) as its child.
"""
from __future__ import annotations

import os
import re
import sys
import threading
import time
import types

from .. import _backend

EVALUATE = "autograd::engine::evaluate_function: "
FUSED = "autograd::engine::fused_region: "
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_now = time.perf_counter_ns
_ids = iter(range(1, 1 << 62))


class Span:
    """One timed range: an op call, a backward node, a ``record_function`` block."""
    __slots__ = ("name", "kind", "parent", "start", "end", "shapes", "mem", "device_mem",
                 "stack", "cuda", "tid", "id")

    def __init__(self, name, kind, parent):
        self.name, self.kind, self.parent = name, kind, parent
        self.shapes = self.stack = self.cuda = None
        self.mem = self.device_mem = 0
        self.tid = threading.get_native_id()
        self.id = next(_ids)


class Recorder:
    """The spans of one recording window (a whole profile, or one active cycle of a schedule)."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False,
                 use_cuda=False):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        events = _cuda_events() if use_cuda else None
        self.cuda, self._elapsed = events or (None, None)   # event factory, ms between two
        self.spans: list = []
        self._local = threading.local()
        self.t0 = _now()
        self.t1 = None
        self.cuda_ref = None
        if self.cuda is not None:
            self.cuda_ref = self.cuda()
            self.cuda_ref.record()

    def _stack(self) -> list:
        st = getattr(self._local, "stack", None)
        if st is None:
            st = self._local.stack = []
        return st

    def begin(self, name, kind="cpu_op", args=None, kw=None) -> Span:
        st = self._stack()
        s = Span(name, kind, st[-1] if st else None)
        if self.record_shapes and args is not None:
            s.shapes = shapes_of(args, kw)
        if self.with_stack:
            s.stack = user_stack()
        st.append(s)
        if self.cuda is not None:
            e = self.cuda()
            e.record()
            s.cuda = [e, None]
        s.start = _now()
        return s

    def end(self, s: Span, out=None) -> None:
        s.end = _now()
        if s.cuda is not None:
            e = self.cuda()
            e.record()
            s.cuda[1] = e
        st = self._stack()
        if st and st[-1] is s:
            st.pop()
        elif s in st:   # an inner span left open (its thread raised through it): close all
            del st[st.index(s):]
        if self.profile_memory and out is not None:
            s.mem, s.device_mem = nbytes(out)
        self.spans.append(s)

    def discard(self, s: Span) -> None:
        """Drop a span that turned out not to have run (its stack entry only)."""
        st = self._stack()
        if st and st[-1] is s:
            st.pop()

    def close(self) -> None:
        """Stop the clock; on CUDA wait for the recorded events so their times can be read."""
        self.t1 = _now()
        if self.cuda is not None:
            from .. import cuda
            cuda.synchronize()

    def cuda_times(self, s: Span):
        """(start offset from the window's reference, duration) in microseconds, or None."""
        if s.cuda is None or s.cuda[1] is None:
            return None
        elapsed = self._elapsed
        return elapsed(self.cuda_ref, s.cuda[0]) * 1e3, elapsed(s.cuda[0], s.cuda[1]) * 1e3


class NvtxRecorder:
    """What ``emit_nvtx`` installs in a recorder's place: each span pushes an NVTX range under
    its name (``aten::mul``, ``MulBackward0``, a ``record_function`` label) and pops it at its
    end, so Nsight Systems shows them; nothing is timed or kept."""

    def __init__(self, nvtx):
        self.push, self.pop = nvtx.RangePush, nvtx.RangePop

    def begin(self, name, kind="cpu_op", args=None, kw=None):
        self.push(name)
        return name

    def end(self, s, out=None) -> None:
        self.pop()

    def discard(self, s) -> None:
        self.pop()


def nvtx_module():
    """CuPy's NVTX binding (``cupy.cuda.nvtx``), None without CuPy."""
    cp = _backend.cupy_module()
    return getattr(cp.cuda, "nvtx", None) if cp is not None else None


def _cuda_events():
    """(event factory, milliseconds between two recorded events) when a CUDA device is in
    use, else None (CPU activity only)."""
    cp = _backend.cupy_module()
    if cp is None:
        return None
    from .. import cuda
    if not cuda.is_available():
        return None
    return cp.cuda.Event, cp.cuda.get_elapsed_time


# -- what a span records ---------------------------------------------------------------------
def _shape(a) -> list:
    s = getattr(a, "shape", None)
    return list(s) if isinstance(s, tuple) else []


def shapes_of(args, kw=None) -> list:
    """PyTorch's "Input Shapes": one list per argument, [] for numbers and non-tensors."""
    out = [_shape(a) for a in args]
    if kw:
        out.extend(_shape(v) for v in kw.values() if hasattr(v, "shape"))
    return out


def nbytes(out) -> tuple:
    """(host bytes, device bytes) of an op's result arrays or tensors."""
    host = dev = 0
    for v in (out if isinstance(out, (tuple, list)) else (out,)):
        a = getattr(v, "_data", v)
        n = getattr(a, "nbytes", None)
        if n is None:
            continue
        if a.__class__.__module__.startswith("numpy"):
            host += int(n)
        else:
            dev += int(n)
    return host, dev


def user_stack(limit: int = 8) -> list:
    """The caller's frames outside gpugrad, innermost first, as "file(line): function"."""
    f, out = sys._getframe(2), []
    while f is not None and len(out) < limit:
        code = f.f_code
        if not code.co_filename.startswith((_PKG_DIR, "<gpugrad")):
            out.append(f"{code.co_filename}({f.f_lineno}): {code.co_name}")
        f = f.f_back
    return out


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_names: dict = {}


def forward_name(cls) -> str:
    """``aten::mul`` for ``MulBackward0``: the op's name as PyTorch's profiler shows it."""
    name = _names.get(cls)
    if name is None:
        n = cls.__name__
        i = n.rfind("Backward")
        if i > 0:
            name = "aten::" + _CAMEL.sub("_", n[:i]).lower()
        else:
            name = n
        _names[cls] = name
    return name


# -- the wrappers ----------------------------------------------------------------------------
class _State:
    recorder: Recorder | None = None   # the recorder every wrapper appends to, while installed
    saved: list | None = None          # (owner, attribute, original) to restore


state = _State()


def _timed(rec, name, fn, args, kw):
    s = rec.begin(name, "cpu_op", args, kw)
    try:
        out = fn(*args, **kw)
    except BaseException:
        rec.end(s)
        raise
    rec.end(s, out)
    return out


def _profiled_apply(orig):
    def apply(cls, *args, **kw):
        rec = state.recorder
        if rec is None:
            return orig(cls, *args, **kw)
        s = rec.begin(forward_name(cls), "cpu_op", args, kw)
        try:
            out = orig(cls, *args, **kw)
        except BaseException:
            rec.end(s)
            raise
        rec.end(s, out)
        return out
    apply.__wrapped__ = orig
    return classmethod(apply)


def _profiled_function_apply(orig):
    def apply(cls, *args, **kw):
        rec = state.recorder
        if rec is None:
            return orig(cls, *args, **kw)
        return _timed(rec, cls.__name__, lambda *a, **k: orig(cls, *a, **k), args, kw)
    apply.__wrapped__ = orig
    return classmethod(apply)


def _profiled_run(orig):
    def _run(self, grads, create_graph):
        rec = state.recorder
        if rec is None:
            return orig(self, grads, create_graph)
        name = self.name()
        outer = rec.begin(EVALUATE + name)
        inner = rec.begin(name, "cpu_op", grads)
        try:
            out = orig(self, grads, create_graph)
        except BaseException:
            rec.end(inner)
            rec.end(outer)
            raise
        rec.end(inner, out)
        rec.end(outer)
        return out
    _run.__wrapped__ = orig
    return _run


def _profiled_fusion(orig):
    def run(head, grads, *rest):
        rec = state.recorder
        if rec is None:
            return orig(head, grads, *rest)
        s = rec.begin(FUSED + head.name(), "cpu_op", grads)
        try:
            out = orig(head, grads, *rest)
        except BaseException:
            rec.end(s)
            raise
        if out is not None:   # None: nothing fused, the engine runs the node itself
            rec.end(s, out[1])
        else:
            rec.discard(s)
        return out
    run.__wrapped__ = orig
    return run


def _profiled_direct(orig, cls, args):
    rec = state.recorder
    if rec is None:
        return orig(*args)
    s = rec.begin(forward_name(cls), "cpu_op", args)
    try:
        out = orig(*args)
    except BaseException:
        rec.end(s)
        raise
    rec.end(s, out)
    return out


# The specialised direct functions (``Tensor.__mul__``, ``gpugrad.exp`` ...) are generated, each
# with its own globals holding ``_cls``; they are bound under many names (operators, module
# functions, aliases). Swapping the code of the function object itself reaches every binding.
_TRAMPOLINE_SRC = ("def direct(*args):\n"
                   "    return _profiled_direct(_profiled_original, _cls, args)\n")
_tns: dict = {}
exec(compile(_TRAMPOLINE_SRC, "<gpugrad profiler>", "exec"), _tns)
TRAMPOLINE = _tns["direct"].__code__
del _tns


def _is_direct(f) -> bool:
    return (f.__class__ is types.FunctionType
            and f.__code__.co_filename.startswith("<gpugrad apply:")
            and "_cls" in f.__globals__)


_direct_cache: list = [-1, []]   # [number of modules loaded when scanned, functions found]


def direct_functions() -> list:
    """Every generated direct function reachable from gpugrad's modules and their classes
    (scanned again only when modules were imported since the last scan)."""
    if _direct_cache[0] == len(sys.modules):
        return _direct_cache[1]
    found, seen = [], set()
    for mname, mod in list(sys.modules.items()):
        if not (mname == "gpugrad" or mname.startswith("gpugrad.")) or mod is None:
            continue
        for v in list(vars(mod).values()):
            spaces = (vars(v).values(),) if isinstance(v, type) else ()
            for f in (v, *(w for space in spaces for w in space)):
                if _is_direct(f) and id(f) not in seen:
                    seen.add(id(f))
                    found.append(f)
    _direct_cache[:] = [len(sys.modules), found]
    return found


def node_classes() -> list:
    """Every node class defining its own ``_run`` (the engine's per-node entry point)."""
    from ..autograd.graph import Node
    out, stack = [], [Node]
    while stack:
        c = stack.pop()
        stack.extend(c.__subclasses__())
        if c is not Node and "_run" in c.__dict__:
            out.append(c)
    return out


def _patch(saved, owner, attr, new):
    old = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
    saved.append((owner, attr, old))
    setattr(owner, attr, new(old))


def install(recorder: Recorder) -> None:
    """Swap the wrappers in (once); later calls only change the recorder they append to."""
    if state.saved is None:
        from ..autograd import fusion
        from ..autograd.function import Function
        from ..ops import _op
        saved: list = []
        try:
            _patch(saved, _op.Op, "apply", lambda m: _profiled_apply(m.__func__))
            _patch(saved, Function, "apply", lambda m: _profiled_function_apply(m.__func__))
            for cls in node_classes():
                _patch(saved, cls, "_run", _profiled_run)
            _patch(saved, fusion, "run", _profiled_fusion)
            for f in direct_functions():
                f.__globals__["_profiled_direct"] = _profiled_direct
                f.__globals__["_profiled_original"] = types.FunctionType(
                    f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
                saved.append((f, "__code__", f.__code__))
                f.__code__ = TRAMPOLINE
        except BaseException:
            _restore(saved)
            raise
        state.saved = saved
    state.recorder = recorder


def _restore(saved) -> None:
    for owner, attr, old in reversed(saved):
        setattr(owner, attr, old)
        if attr == "__code__":
            owner.__globals__.pop("_profiled_direct", None)
            owner.__globals__.pop("_profiled_original", None)


def uninstall() -> None:
    """Put every original back."""
    state.recorder = None
    saved, state.saved = state.saved, None
    if saved is not None:
        _restore(saved)


def begin_range(name: str, args=None):
    """Open a user range (``record_function``) on the recording profile: (recorder, span)."""
    rec = state.recorder
    if rec is None:
        return None
    return rec, rec.begin(name, "user_annotation", args)
