"""Stream capture: CUDA graphs recorded from work queued on a capturing stream, as CuPy's
``Stream.begin_capture()`` / ``end_capture()`` make them, with CUDA's rules.

What a capture does here. Each device operation queued on a capturing stream (the current stream
of the thread that issues it) runs at once, with numpy, only so that its shapes, dtypes and
errors are those of the real call; it is also recorded as one step of the graph, which re-runs
the same numpy computation on the same buffers when the graph is launched (reading what they
hold then) and writes into the same output arrays. Results that are views of an input record
nothing; Python scalars are baked in, as kernel arguments are. When the capture ends, what the
eager run did is taken back, because a GPU does not execute captured work: memory that existed
before the capture and was written during it gets its old contents back, and arrays whose
contents captured work produces hold garbage until the graph runs (NaN for floating and complex
dtypes, bytes 0x5A for the others), so that code reading them too early sees it.

CUDA's rules (its error codes, and whether an error invalidates the capture) and CuPy's (which
calls it refuses before CUDA sees them, so that the capture goes on) are kept where CuPy's
source and CUDA's documentation say what happens; ``docs/gpu.md`` lists them and what the
simulation cannot tell.

This module knows streams only by their attributes (``ptr``, ``_non_blocking``, ``_capture``):
``_streams`` defines them and registers the null stream here.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from . import _errors
from ._errors import CUDADriverError, CUDARuntimeError

MODE_GLOBAL, MODE_THREAD_LOCAL, MODE_RELAXED = 0, 1, 2          # cudaStreamCaptureMode
STATUS_NONE, STATUS_ACTIVE, STATUS_INVALIDATED = 0, 1, 2        # cudaStreamCaptureStatus
_ENDED = -1
LEGACY = (0, 1)     # the legacy default stream: CuPy's ``Stream.null`` (0), cudaStreamLegacy (1)

ACTIVE = 0          # live capture sequences in any thread: the one check an op pays without one
_LIVE: list = []
_IDS = itertools.count(1)
_tls = threading.local()
_NULL = [None]      # the null stream object, registered by _streams


# -- the current stream (thread-local, as CuPy's) ---------------------------------------------
def current_stream():
    s = getattr(_tls, "stream", None)
    return _NULL[0] if s is None else s


def set_current_stream(stream):
    _tls.stream = stream


# -- capture sequences ------------------------------------------------------------------------
class Sequence:
    """One capture: the streams in it (the origin, then those forked into it through events),
    its steps, and what the eager run changed that end_capture takes back."""

    def __init__(self, origin, mode):
        self.id = next(_IDS)
        self.origin, self.mode = origin, mode
        self.thread = threading.get_ident()
        self.status = STATUS_ACTIVE
        self.streams = [origin]
        self.steps: list[Step] = []
        self.saved: dict[int, tuple] = {}    # id(root) -> (root, its pre-capture contents)
        self.kept: dict[int, tuple] = {}     # id(object) -> (object, put, its pre-capture state)
        self.born: set[int] = set()          # id(root) of memory that captured work fills
        self.fresh: list = []                # those roots, garbage until the graph runs
        self.host_funcargs: list = []
        self.clock = 0                       # fork/join bookkeeping: work and waits in order
        self.last: dict[int, int] = {}       # id(stream) -> clock of its last work
        self.edges: list[tuple] = []         # (source stream, its clock, waiter, waiter's clock)

    @property
    def blocking(self):
        """A stream created without ``non_blocking`` takes part: the legacy stream would wait
        for it, so CUDA refuses any use of the legacy stream meanwhile."""
        return any(not s._non_blocking for s in self.streams)

    def invalidate(self):
        if self.status == STATUS_ACTIVE:
            self.status = STATUS_INVALIDATED

    def protect(self, a):
        """Keep the pre-capture contents of the memory numpy array ``a`` lies in, before
        captured work writes it (end_capture puts them back)."""
        root = root_of(a)
        key = id(root)
        if key in self.born or key in self.saved or not root.flags.writeable:
            return
        self.saved[key] = (root, root.copy(order="K"))

    def keep(self, obj, get, put):
        """Keep state of ``obj`` that captured work changes on the device (a generator's):
        end_capture puts it back with ``put``."""
        if id(obj) not in self.kept:
            self.kept[id(obj)] = (obj, put, get())

    def adopt(self, a):
        """Memory that captured work fills: undefined until the graph runs."""
        root = root_of(a)
        if id(root) not in self.born:
            self.born.add(id(root))
            self.fresh.append(root)

    def add(self, step, stream):
        self.steps.append(step)
        self.clock += 1
        self.last[id(stream)] = self.clock

    def unjoined(self):
        """Streams forked into the capture whose last work the origin never waited for."""
        reach = {id(self.origin): float("inf")}
        changed = True
        while changed:
            changed = False
            for src, at, waiter, when in self.edges:
                if when <= reach.get(id(waiter), -1) and at > reach.get(id(src), -1):
                    reach[id(src)] = at
                    changed = True
        return [s for s in self.streams[1:] if self.last.get(id(s), -1) > reach.get(id(s), -1)]

    def close(self):
        """End the sequence: its streams stop capturing and the eager run is taken back."""
        global ACTIVE
        if self.status == _ENDED:
            return
        _LIVE.remove(self)
        ACTIVE -= 1
        for s in self.streams:
            s._capture = None
        self.status = _ENDED
        for root, old in self.saved.values():
            np.copyto(root, old)
        for _, put, state in self.kept.values():
            put(state)
        for root in self.fresh:
            garbage(root)
        self.saved.clear()
        self.kept.clear()

    def __repr__(self):
        return f"<capture sequence {self.id} on stream {self.origin.ptr}>"


def garbage(a):
    """Fill ``a`` with values that cannot pass for results: NaN, or bytes 0x5A."""
    if not a.flags.writeable or a.size == 0:
        return
    if a.dtype.kind in "fc":
        a[...] = np.nan
    elif a.dtype.itemsize == 1:
        a.view(np.uint8)[...] = 0x5A
    elif a.dtype.kind in "iu":
        a[...] = np.frombuffer(b"\x5a" * a.dtype.itemsize, a.dtype)[0]


def root_of(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


# -- what CUDA and CuPy refuse ------------------------------------------------------------------
def _implicit(error):
    """The legacy stream used while a blocking stream captures: CUDA refuses, and the capture
    is invalidated."""
    hit = [s for s in _LIVE if s.blocking]
    if hit:
        for s in hit:
            s.invalidate()
        raise error(_errors.IMPLICIT)


def sequence_for(stream, error=CUDADriverError):
    """The capture recording work queued on ``stream``, or None when the work runs now. CuPy
    launches kernels through the driver API (``CUDADriverError``); copies, events and graph
    launches go through the runtime (``error=CUDARuntimeError``)."""
    seq = stream._capture
    if seq is not None:
        if seq.status == STATUS_INVALIDATED:
            raise error(_errors.INVALIDATED)
        return seq
    if stream.ptr in LEGACY and ACTIVE:
        _implicit(error)
    return None


def recording(stream=None, error=CUDADriverError):
    """The capture recording this thread's next device op (on ``stream``, else the current
    stream), or None: no capture, or inside a kernel launch (a kernel is one step, whatever
    its reference does)."""
    if getattr(_tls, "opaque", 0):
        return None
    return sequence_for(current_stream() if stream is None else stream, error)


def allocated_now(a):
    """A new array while this thread's stream captures: undefined until the graph runs."""
    seq = None if getattr(_tls, "opaque", 0) else current_stream()._capture
    if seq is not None:
        seq.adopt(a)


def is_capturing(stream):
    """``runtime.streamIsCapturing``: True while ``stream`` captures; CuPy raises RuntimeError
    once the capture was invalidated, CUDA refuses the query on the legacy stream while a
    blocking stream captures."""
    if stream.ptr in LEGACY:
        if ACTIVE:
            _implicit(CUDARuntimeError)
        return False
    seq = stream._capture
    if seq is None:
        return False
    if seq.status == STATUS_INVALIDATED:
        raise RuntimeError("the stream was capturing, but an error has invalidated the "
                           "capture sequence")
    return True


def status(stream):
    seq = stream._capture
    return STATUS_NONE if seq is None else seq.status


def _checking():
    return ACTIVE and not getattr(_tls, "opaque", 0)


def refuse_transfer(what, stream=None):
    """CuPy's check before a copy between host and device (cupy/cuda/memory.pyx): ``what`` is
    'H2D transfers', 'D2H transfers' or 'synchronous API calls'. Raised before CUDA is called,
    so the capture goes on."""
    if _checking() and is_capturing(current_stream() if stream is None else stream):
        raise RuntimeError(f"the current stream is capturing, so {what} are disallowed")


def refuse_library(name):
    """CuPy's check in the ``setStream`` of cuBLAS, cuRAND, cuSOLVER and cuSPARSE
    (cupy_backends/cuda/libs/*.pyx): no library call during capture."""
    if _checking() and is_capturing(current_stream()):
        raise NotImplementedError(f"calling {name} API during stream capture is currently "
                                  f"unsupported")


def synchronize(stream):
    """``cudaStreamSynchronize``: a capturing stream cannot be waited for."""
    if not ACTIVE:
        return
    seq = stream._capture
    if seq is not None:
        if seq.status == STATUS_ACTIVE:
            seq.invalidate()
            raise CUDARuntimeError(_errors.UNSUPPORTED)
        raise CUDARuntimeError(_errors.INVALIDATED)
    if stream.ptr in LEGACY:
        _implicit(CUDARuntimeError)


def query(stream):
    """``cudaStreamQuery``'s status (CuPy reads it without raising)."""
    if not ACTIVE:
        return 0
    try:
        synchronize(stream)
    except CUDARuntimeError as e:
        return e.status
    return 0


def device_synchronize():
    """``cudaDeviceSynchronize`` while any stream captures: refused, every capture invalidated."""
    if _LIVE:
        for s in _LIVE:
            s.invalidate()
        raise CUDARuntimeError(_errors.UNSUPPORTED)


# -- events: fork and join ----------------------------------------------------------------------
def event_record(event, stream):
    event._captured = None
    if ACTIVE:
        seq = sequence_for(stream, CUDARuntimeError)
        if seq is not None:
            event._captured = (seq, stream, seq.clock)
            return False
    return True        # recorded for real: the caller stamps its time


def _captured_event(event):
    cap = event._captured
    return cap if cap is not None and cap[0].status != _ENDED else None


def event_check(event):
    """An event last recorded in a capturing stream is no point in time yet: CUDA refuses to
    wait for it, query it or time it."""
    cap = _captured_event(event) if ACTIVE else None
    if cap is not None:
        cap[0].invalidate()
        raise CUDARuntimeError(_errors.CAPTURED_EVENT)


def stream_wait(stream, event):
    """``cudaStreamWaitEvent``: waiting on an event recorded during a capture pulls the stream
    into that capture (a fork) or joins its work back; a capturing stream cannot wait on work
    outside its capture."""
    if not ACTIVE:
        return
    cap, seq = _captured_event(event), stream._capture
    if seq is not None and seq.status == STATUS_INVALIDATED:
        raise CUDARuntimeError(_errors.INVALIDATED)
    if cap is not None:
        src = cap[0]
        if seq is None:
            if stream.ptr in LEGACY:          # the legacy stream cannot join a capture
                _implicit(CUDARuntimeError)
                src.invalidate()
                raise CUDARuntimeError(_errors.UNSUPPORTED)
            stream._capture = src
            src.streams.append(stream)
        elif seq is src:
            src.clock += 1
            src.edges.append((cap[1], cap[2], stream, src.clock))
        else:
            seq.invalidate()
            raise CUDARuntimeError(_errors.MERGE)
    elif seq is not None:
        if event._t is not None:
            seq.invalidate()
            raise CUDARuntimeError(_errors.ISOLATION)
    elif stream.ptr in LEGACY:
        _implicit(CUDARuntimeError)


# -- beginning and ending ------------------------------------------------------------------------
def begin(stream, mode):
    global ACTIVE
    if mode not in (MODE_GLOBAL, MODE_THREAD_LOCAL, MODE_RELAXED):
        raise CUDARuntimeError(1)
    if stream._capture is not None:
        stream._capture.invalidate()
        raise CUDARuntimeError(_errors.ILLEGAL_STATE)
    if stream.ptr in LEGACY:
        if ACTIVE:
            _implicit(CUDARuntimeError)
        raise CUDARuntimeError(_errors.UNSUPPORTED)
    seq = Sequence(stream, mode)
    stream._capture = seq
    _LIVE.append(seq)
    ACTIVE += 1
    return seq


def end(stream):
    """Close the capture begun on ``stream``; its steps, or CUDA's error."""
    seq = stream._capture
    if seq is None:
        if stream.ptr in LEGACY and ACTIVE:
            _implicit(CUDARuntimeError)
        raise CUDARuntimeError(_errors.ILLEGAL_STATE)
    if stream is not seq.origin:
        seq.invalidate()
        raise CUDARuntimeError(_errors.UNMATCHED)
    if seq.mode != MODE_RELAXED and threading.get_ident() != seq.thread:
        seq.invalidate()
        raise CUDARuntimeError(_errors.WRONG_THREAD)
    unjoined = seq.unjoined()
    invalid = seq.status == STATUS_INVALIDATED
    seq.close()
    if invalid:
        raise CUDARuntimeError(_errors.INVALIDATED)
    if unjoined:
        raise CUDARuntimeError(_errors.UNJOINED)
    return seq


def abandon_all():
    """Close every open capture (a test that failed half-way); their descriptions."""
    left = [repr(s) for s in _LIVE]
    for s in list(_LIVE):
        s.close()
    return left


# -- steps: recording and replaying --------------------------------------------------------------
class Step:
    """One node of a graph: ``run()`` does its work again; ``writes`` are the numpy arrays it
    writes (a graph launched inside another capture protects them)."""

    __slots__ = ("name", "run", "writes")

    def __init__(self, name, run, writes):
        self.name, self.run, self.writes = name, run, writes


class _Opaque:
    """Work that is one kernel however many ops its reference runs: nothing inside is recorded
    or refused."""

    def __enter__(self):
        _tls.opaque = getattr(_tls, "opaque", 0) + 1

    def __exit__(self, *exc):
        _tls.opaque -= 1


opaque = _Opaque()


def arrays_in(obj, found=None):
    """The numpy arrays inside nested tuples, lists and dicts."""
    found = [] if found is None else found
    if isinstance(obj, np.ndarray):
        found.append(obj)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            arrays_in(v, found)
    elif isinstance(obj, dict):
        for v in obj.values():
            arrays_in(v, found)
    return found


def leaves(x):
    if isinstance(x, (tuple, list)):
        out = []
        for v in x:
            out.extend(leaves(v))
        return out
    return [x]


def _fresh(a, inputs):
    """New memory, not a view of an input (an empty view shares no bytes, only its base)."""
    root = root_of(a)
    return not any(root is root_of(x) or np.may_share_memory(a, x) for x in inputs)


def record(seq, name, fn, args, kw, raw, out, writes):
    """Record the numpy call ``fn(*args, **kw)`` that returned ``raw`` (wrapped as ``out``).
    Outputs that are new memory become targets the replay copies into; a call that only made
    views of its inputs is no device work and records nothing."""
    inputs = arrays_in((args, kw))
    targets = []
    raw_leaves = leaves(raw)
    for i, o in enumerate(leaves(out)):
        a = getattr(o, "_a", None)
        if a is not None and (isinstance(raw_leaves[i], np.generic) or _fresh(a, inputs)):
            targets.append((i, a))
            seq.adopt(a)
    if not targets and not writes and raw is not None:
        return
    if raw is None and not writes:
        raise AssertionError(f"the simulated CuPy does not know what {name} writes")

    def run():
        result = fn(*args, **kw)
        if targets:
            values = leaves(result)
            for i, a in targets:
                np.copyto(a, values[i], casting="unsafe")
    seq.add(Step(name, run, [a for _, a in targets] + list(writes)), current_stream())


def record_kernel(seq, name, work, arrays):
    """A gpugrad kernel launch, one step: ``work()`` runs its reference on the device arrays
    ``arrays`` (each protected: a kernel may write any argument) and returns its outputs."""
    for a in arrays:
        seq.protect(a._a)
    with opaque:
        out = work()
    inputs = [a._a for a in arrays]
    targets = [(i, o._a) for i, o in enumerate(leaves(out))
               if hasattr(o, "_a") and _fresh(o._a, inputs)]
    for _, a in targets:
        seq.adopt(a)

    def run():
        with opaque:
            values = leaves(work())
        for i, a in targets:
            np.copyto(a, values[i]._a, casting="unsafe")
    seq.add(Step(name, run, [a for _, a in targets] + inputs), current_stream())
    return out


def record_host(seq, name, run, writes=()):
    """A step that is not a numpy call: a host function, a random draw with its seed."""
    seq.add(Step(name, run, list(writes)), current_stream())


# -- graphs ---------------------------------------------------------------------------------------
class Graph:
    """``cupy.cuda.graph.Graph``: what a capture recorded, launched step by step."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("currently this class cannot be initiated by the user and "
                                  "must be created via stream capture")

    @classmethod
    def _from(cls, seq):
        g = object.__new__(cls)
        g._steps = tuple(seq.steps)
        g.graph = g.graphExec = id(g)
        g.host_funcargs = seq.host_funcargs
        return g

    def _run(self):
        with opaque:
            for step in self._steps:
                step.run()

    def launch(self, stream=None):
        stream = current_stream() if stream is None else stream
        seq = sequence_for(stream, CUDARuntimeError) if ACTIVE else None
        if seq is not None:     # a graph launched into a capture: one step of the new graph
            writes = [a for step in self._steps for a in step.writes]
            for a in writes:
                seq.protect(a)
            seq.add(Step(f"graph {self.graph:#x}", self._run, writes), stream)
        self._run()

    def upload(self, stream=None):
        stream = current_stream() if stream is None else stream
        if ACTIVE:
            sequence_for(stream, CUDARuntimeError)

    def debug_dot_str(self, flags=0):
        name = f"graph_{self.graph:#x}"
        lines = ["digraph dot {", f'subgraph cluster_{name} {{', f'label="{name}";']
        for i, step in enumerate(self._steps):
            lines.append(f'"{name}_node_{i}" [label="{i}\\n{step.name}"];')
        for i in range(1, len(self._steps)):
            lines.append(f'"{name}_node_{i - 1}" -> "{name}_node_{i}";')
        lines += ["}", "}"]
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return f"<cupy.cuda.graph.Graph {len(self._steps)} steps>"


Graph.__module__ = "cupy.cuda.graph"
Graph.__qualname__ = Graph.__name__ = "Graph"
