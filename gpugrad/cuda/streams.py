"""CUDA streams, events and the device/stream context managers of ``gpugrad.cuda``, as thin
wrappers over CuPy's ``cuda.Stream`` / ``cuda.Event`` / ``cuda.Device``.

CuPy's current stream is what gpugrad's kernels launch on, so ``with gpugrad.cuda.stream(s):``
sends the work inside the block to ``s``. Constructors need a GPU and raise gpugrad's clear
"needs CuPy / needs an NVIDIA GPU" error without one.
"""
from __future__ import annotations

import contextlib

from .. import _backend


def _need(index=None):
    return _backend._require_cuda(_backend.device("cuda", index))


def device_index(device, optional=True) -> int:
    """The CUDA ordinal of ``device`` (an int, 'cuda:1', a gpugrad device); None or 'cuda'
    without an index is the current device when ``optional``."""
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if device is None or isinstance(device, (str, _backend.device)):
        d = _backend.device(device) if device is not None else None
        if d is not None and d.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {d}")
        if d is not None and d.index is not None:
            return d.index
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        return _need().cuda.Device().id
    raise ValueError(f"Expected a cuda device, but got: {device}")


class Stream:
    """A CUDA stream (``gpugrad.cuda.Stream(device=None, priority=0)``): kernels queued on it run
    in order; different streams may overlap. Non-blocking, as PyTorch's streams are: it does not
    wait for the legacy default stream (order work across streams with ``wait_stream`` /
    events), and so it can capture a CUDA graph while other work uses the default stream."""

    def __init__(self, device=None, priority=0, **kwargs):
        idx = device_index(device)
        cp = _need(idx)
        with cp.cuda.Device(idx):
            s = cp.cuda.Stream(non_blocking=True, priority=priority) if priority else \
                cp.cuda.Stream(non_blocking=True)
        self._init(s, idx, priority)

    def _init(self, s, idx, priority=0):
        self._s, self._index, self.priority = s, idx, priority

    @classmethod
    def _wrap(cls, s, idx):
        self = cls.__new__(cls)
        self._init(s, idx)
        return self

    @property
    def device(self):
        return _backend.device("cuda", self._index)

    @property
    def cuda_stream(self) -> int:
        return int(self._s.ptr)

    def query(self) -> bool:
        """True when every kernel queued on the stream has finished."""
        return bool(self._s.done)

    def synchronize(self) -> None:
        self._s.synchronize()

    def wait_event(self, event) -> None:
        """Work queued on this stream from now on waits for ``event``."""
        self._s.wait_event(event._e)

    def wait_stream(self, stream) -> None:
        """Work queued on this stream from now on waits for what is queued on ``stream``."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def __enter__(self):
        self._ctx = stream(self)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        self._ctx.__exit__(*exc)

    def __eq__(self, other):
        if not isinstance(other, Stream):
            return NotImplemented
        return self.cuda_stream == other.cuda_stream and self._index == other._index

    def __hash__(self):
        return hash((self.cuda_stream, self._index))

    def __repr__(self):
        return f"<gpugrad.cuda.Stream device={self.device} cuda_stream={hex(self.cuda_stream)}>"


class Event:
    """A CUDA event: a marker in a stream that can be waited on and timed."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        cp = _need()
        self.enable_timing = enable_timing
        self._recorded = False
        self._e = cp.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                interprocess=interprocess)

    @property
    def cuda_event(self) -> int:
        return int(self._e.ptr)

    def record(self, stream=None) -> None:
        """Mark the current point of ``stream`` (the current stream by default)."""
        stream = current_stream() if stream is None else stream
        self._e.record(stream._s)
        self._recorded = True

    def wait(self, stream=None) -> None:
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        """True when the work before the recorded point has finished."""
        return bool(self._e.done)

    def synchronize(self) -> None:
        self._e.synchronize()

    def elapsed_time(self, end_event) -> float:
        """Milliseconds between this event and ``end_event`` (both recorded, both timed)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return float(_backend.cupy_module().cuda.get_elapsed_time(self._e, end_event._e))

    def __repr__(self):
        return f"<gpugrad.cuda.Event {hex(self.cuda_event)}>"


def current_stream(device=None) -> Stream:
    """The stream kernels are queued on now (on ``device``)."""
    idx = device_index(device)
    cp = _need(idx)
    with cp.cuda.Device(idx):
        return Stream._wrap(cp.cuda.get_current_stream(), idx)


def default_stream(device=None) -> Stream:
    """The legacy default (null) stream of ``device``."""
    idx = device_index(device)
    return Stream._wrap(_need(idx).cuda.Stream.null, idx)


def set_stream(stream) -> None:
    """Make ``stream`` current (None: no change, as in PyTorch)."""
    if stream is not None:
        stream._s.use()


class StreamContext:
    """``with stream(s):`` queues the block's kernels on ``s`` (and makes its device current);
    ``stream(None)`` is a no-op."""

    def __init__(self, stream):
        self.stream = stream
        self._stack = None

    def __enter__(self):
        if self.stream is None:
            return None
        cp = _need(self.stream._index)
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(cp.cuda.Device(self.stream._index))
        self._stack.enter_context(self.stream._s)
        return self.stream

    def __exit__(self, *exc):
        if self._stack is not None:
            self._stack.close()
            self._stack = None
        return False


def stream(stream) -> StreamContext:
    return StreamContext(stream)


class device:
    """``with gpugrad.cuda.device(1):`` makes CUDA device 1 current for the block (an index of
    -1 or None does nothing)."""

    def __init__(self, device):
        self.idx = -1 if device is None else device_index(device, optional=True)
        self._ctx = None

    def __enter__(self):
        if self.idx < 0:
            return self
        self._ctx = _need(self.idx).cuda.Device(self.idx)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
            self._ctx = None
        return False


class device_of(device):
    """``with gpugrad.cuda.device_of(t):`` the device of tensor ``t`` (no-op for a CPU one)."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index or 0 if d.type == "cuda" else -1)
