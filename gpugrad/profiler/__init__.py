"""``gpugrad.profiler``: where the time goes, op by op, as ``torch.profiler`` reports it.

    with gpugrad.profiler.profile(record_shapes=True) as prof:
        with gpugrad.profiler.record_function("model_inference"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))

Forward ops are named as PyTorch names them (``aten::mul``), backward nodes run inside
``autograd::engine::evaluate_function: MulBackward0``. Profiling costs nothing while no profile
records: the timing wrappers are swapped in on entering a recording step and the originals put
back on leaving it (also when the block raises). With ``ProfilerActivity.CUDA`` and a CUDA
device, each range also records a pair of CUDA events on the current stream; its CUDA time is
the device time between them, read once the window closes (one synchronisation, none per op).
"""
from __future__ import annotations

import enum
import functools
import os
import socket
import time
import warnings

from . import _record
from ._events import EventList, FunctionEvent, FunctionEventAvg, Interval

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"


class ProfilerAction(enum.Enum):
    """What a profile does during a step, as a ``schedule`` decides."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    from .. import cuda
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cuda.is_available() \
        else {ProfilerActivity.CPU}


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0):
    """Step number -> ``ProfilerAction``: after ``skip_first`` steps, cycles of ``wait`` idle,
    ``warmup`` (recorded, then discarded) and ``active`` recorded steps, the last of which
    saves (``on_trace_ready``); ``repeat`` cycles, or forever when 0."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments: wait, warmup, repeat and "
                         "skip_first must be >= 0 and active > 0")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False):
    """An ``on_trace_ready`` writing each saved window's Chrome trace into ``dir_name`` as
    ``<worker>.<time_ns>.pt.trace.json`` (``.gz`` with ``use_gzip``), where TensorBoard's
    profiler plugin looks for it."""
    def handler(prof) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        path = os.path.join(dir_name, name)
        if use_gzip:
            import gzip
            import json
            with gzip.open(path, "wt") as f:
                json.dump(prof.events().chrome_trace(), f)
        else:
            prof.export_chrome_trace(path)
    return handler


class _Profile:
    """What the current and the legacy profiler share: one recording window at a time."""

    def __init__(self, record_shapes, profile_memory, with_stack, use_cuda):
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.use_cuda = use_cuda
        self._recorder = None
        self._events = None

    def _open(self) -> None:
        owner = _record.state.recorder
        if owner is not None and owner is not self._recorder:
            raise RuntimeError("Profiler is already enabled on this thread")
        self._recorder = _record.Recorder(self.record_shapes, self.profile_memory,
                                          self.with_stack, self.use_cuda)
        _record.install(self._recorder)

    def _close(self, keep: bool) -> None:
        rec, self._recorder = self._recorder, None
        if rec is None:
            return
        _record.uninstall()
        rec.close()
        if keep:
            from ._events import build
            self._events = build(rec)

    def events(self) -> EventList:
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0) -> EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path) -> None:
        self.events().export_chrome_trace(path)

    def table(self, sort_by=None, row_limit=100, **kw) -> str:
        return self.events().table(sort_by=sort_by, row_limit=row_limit, **kw)


class profile(_Profile):
    """``torch.profiler.profile``: records the ops run inside the block (or, with a
    ``schedule``, during the active steps between ``step()`` calls)."""

    def __init__(self, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, schedule=None, on_trace_ready=None, with_flops=False,
                 with_modules=False, experimental_config=None, use_cuda=None):
        activities = set(activities) if activities else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        super().__init__(record_shapes, profile_memory, with_stack,
                         ProfilerActivity.CUDA in activities)
        self.activities = activities
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._step_span = None
        self._running = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self) -> None:
        self._running = True
        self.step_num = 0
        self.current_action = self.schedule(0)
        self._transit(ProfilerAction.NONE, self.current_action)

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        try:
            self._transit(self.current_action, None)
        finally:
            self._close(keep=False)   # already closed unless a callback raised: restore

    def step(self) -> None:
        """Mark the end of one training step: the schedule decides what the next one does."""
        if not self._running:
            return
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)

    def _transit(self, prev, cur) -> None:
        A = ProfilerAction
        recording = (A.WARMUP, A.RECORD, A.RECORD_AND_SAVE)
        self._end_step_span()
        if prev in (A.RECORD, A.RECORD_AND_SAVE) and (cur is None or prev is A.RECORD_AND_SAVE
                                                      or cur not in recording):
            self._save()
        elif prev is A.WARMUP and cur is not A.WARMUP:
            self._close(keep=False)   # warm-up steps are run, timed, and thrown away
        if cur in recording:
            if self._recorder is None:
                self._open()
            if self.record_steps:
                self._step_span = _record.begin_range(f"ProfilerStep#{self.step_num}")

    def _end_step_span(self) -> None:
        span, self._step_span = self._step_span, None
        if span is not None:
            span[0].end(span[1])

    def _save(self) -> None:
        self._close(keep=True)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)


class record_function:
    """A named range in the profile: ``with record_function("name"):`` or as a decorator.
    It shows as its own row and as the parent of the ops run inside it."""

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._open: list = []

    def __enter__(self):
        self._open.append(_record.begin_range(self.name))
        return self

    def __exit__(self, *exc):
        span = self._open.pop() if self._open else None
        if span is not None:
            span[0].end(span[1])
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kw):
            with record_function(self.name, self.args):
                return fn(*args, **kw)
        return wrapper
