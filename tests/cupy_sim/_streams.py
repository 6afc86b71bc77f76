"""CuPy's streams and events on the simulated device: ``cupy.cuda.Stream`` (with capture),
``Event``, ``get_current_stream`` (thread-local, as CuPy's) and the runtime calls on stream
handles (``streamIsCapturing`` and the like). Work runs as it is issued, so waiting is free;
what CUDA refuses while a stream captures is refused (see ``_capture``)."""
from __future__ import annotations

import itertools
import threading
import time
import weakref

from . import _capture
from ._errors import INVALID_HANDLE, UNSUPPORTED, CUDARuntimeError

STREAM_DEFAULT, STREAM_NON_BLOCKING = 0, 1          # cudaStreamDefault, cudaStreamNonBlocking
STREAM_LEGACY, STREAM_PER_THREAD = 1, 2             # the special handles
_HANDLES = itertools.count(0x7f0000001000, 0x100)  # what cudaStreamCreate would hand out
_BY_PTR: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_tls = threading.local()


def _stack():
    stack = getattr(_tls, "stack", None)
    if stack is None:
        stack = _tls.stack = [Stream.null]
    return stack


class Stream:
    """``cupy.cuda.Stream(null=False, non_blocking=False, ptds=False, priority=None)``."""

    null = None
    ptds = None

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        if null:
            self.ptr, self.device_id = 0, -1
        elif ptds:
            self.ptr, self.device_id = STREAM_PER_THREAD, -1
        else:
            self.ptr, self.device_id = next(_HANDLES), 0
            _BY_PTR[self.ptr] = self
        self._non_blocking = bool(non_blocking) and not null and not ptds
        self._priority = 0 if priority is None or null or ptds else int(priority)
        self._capture = None
        self._graph_host_funcargs = None

    # -- which stream is current -------------------------------------------------------------
    def __enter__(self):
        _stack().append(self)
        _capture.set_current_stream(self)
        return self

    def __exit__(self, *exc):
        stack = _stack()
        stack.pop()
        _capture.set_current_stream(stack[-1])

    def use(self):
        _capture.set_current_stream(self)
        return self

    # -- queries and waits ---------------------------------------------------------------------
    @property
    def done(self):
        return _capture.query(self) == 0

    def synchronize(self):
        _capture.synchronize(self)

    @property
    def is_non_blocking(self):
        return self._non_blocking

    @property
    def priority(self):
        return self._priority

    def record(self, event=None):
        if event is None:
            event = Event()
        event.record(self)
        return event

    def wait_event(self, event):
        _capture.stream_wait(self, event)

    def add_callback(self, callback, arg):
        if self._capture is not None:      # not supported by stream capture
            self._capture.invalidate()
            raise CUDARuntimeError(UNSUPPORTED)
        _capture.synchronize(self)
        callback(self, 0, arg)

    def launch_host_func(self, callback, arg):
        seq = _capture.sequence_for(self, CUDARuntimeError) if _capture.ACTIVE else None
        if seq is not None:
            seq.host_funcargs.append((callback, arg))
            _capture.record_host(seq, f"host {getattr(callback, '__name__', 'function')}",
                                 lambda: callback(arg))
            return
        callback(arg)

    # -- capture ---------------------------------------------------------------------------------
    def begin_capture(self, mode=None):
        if self.ptr == 0 or self.ptr == 1:
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if mode is None:
            mode = _capture.MODE_RELAXED     # CuPy's default: the pool may call cudaMalloc
        _capture.begin(self, mode)
        self._graph_host_funcargs = []

    def end_capture(self):
        self._graph_host_funcargs = None
        return _capture.Graph._from(_capture.end(self))

    def is_capturing(self):
        return _capture.is_capturing(self)

    # -- identity ----------------------------------------------------------------------------------
    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f"<Stream {self.ptr} (device {self.device_id})>"

    def __cuda_stream__(self):
        return (0, self.ptr)


Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)
_capture._NULL[0] = Stream.null


def stream_of(ptr):
    """The stream object behind a handle (the runtime functions take handles)."""
    if ptr in _capture.LEGACY:
        return Stream.null
    if ptr == STREAM_PER_THREAD:
        return Stream.ptds
    s = _BY_PTR.get(ptr)
    if s is None:
        raise CUDARuntimeError(INVALID_HANDLE)
    return s


def get_current_stream(device_id=-1):
    return _capture.current_stream()


class Event:
    """``cupy.cuda.Event``: a point in a stream's work (its time, when timing is on)."""

    _handles = itertools.count(0x7e0000002000, 0x40)

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self.ptr = next(Event._handles)
        self.disable_timing = disable_timing
        self._t = None
        self._captured = None

    def record(self, stream=None):
        if _capture.event_record(self, _capture.current_stream() if stream is None
                                 else stream):
            self._t = time.perf_counter()

    def synchronize(self):
        _capture.event_check(self)

    @property
    def done(self):
        try:
            _capture.event_check(self)
        except CUDARuntimeError:
            return False
        return True


def get_elapsed_time(start, end):
    _capture.event_check(start)
    _capture.event_check(end)
    if start.disable_timing or end.disable_timing or start._t is None or end._t is None:
        raise CUDARuntimeError(INVALID_HANDLE)
    return (end._t - start._t) * 1e3


# -- the runtime's stream calls, by handle ------------------------------------------------------
def stream_is_capturing(ptr):
    return _capture.is_capturing(stream_of(ptr))


def stream_begin_capture(ptr, mode=_capture.MODE_RELAXED):
    _capture.begin(stream_of(ptr), mode)


def stream_end_capture(ptr):
    """The graph's handle (``cupy.cuda.graph.Graph`` is built from a stream's end_capture)."""
    return _capture.Graph._from(_capture.end(stream_of(ptr))).graph


def stream_synchronize(ptr):
    _capture.synchronize(stream_of(ptr))


def stream_query(ptr):
    return _capture.query(stream_of(ptr))


def stream_get_flags(ptr):
    return STREAM_NON_BLOCKING if stream_of(ptr)._non_blocking else STREAM_DEFAULT
