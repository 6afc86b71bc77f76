"""Profiler results: ``FunctionEvent`` (one recorded range), ``FunctionEventAvg`` (ranges
grouped by name), ``EventList`` (their table and Chrome trace), as PyTorch's profiler has them.

Times are in microseconds from the start of the recording window; memory in bytes.
"""
from __future__ import annotations

import json
import os
from typing import NamedTuple


class Interval(NamedTuple):
    start: float
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


class FunctionEvent:
    """One recorded range: its time, its children, what it allocated."""

    def __init__(self, id, name, thread, start_us, end_us, kind="cpu_op", input_shapes=None,
                 stack=None, memory=0, device_memory=0, device_range=None):
        self.id, self.name, self.thread, self.kind = id, name, thread, kind
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes
        self.stack = stack or []
        self.count = 1
        self.cpu_children: list = []
        self.cpu_parent = None
        self._memory, self._device_memory = memory, device_memory
        self.device_range = device_range     # (start, end) on the device, µs, or None
        self.is_async = False

    key = property(lambda self: self.name)
    cpu_time_total = property(lambda self: self.time_range.elapsed_us())

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def device_time_total(self) -> float:
        r = self.device_range
        return 0.0 if r is None else r[1] - r[0]

    @property
    def self_device_time_total(self) -> float:
        return max(0.0, self.device_time_total
                   - sum(c.device_time_total for c in self.cpu_children))

    cuda_time_total = device_time_total
    self_cuda_time_total = self_device_time_total
    cuda_time = device_time = property(lambda self: self.device_time_total)

    @property
    def cpu_memory_usage(self) -> int:
        return self._memory + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def cuda_memory_usage(self) -> int:
        return self._device_memory + sum(c.cuda_memory_usage for c in self.cpu_children)

    self_cpu_memory_usage = property(lambda self: self._memory)
    self_cuda_memory_usage = property(lambda self: self._device_memory)
    device_memory_usage = cuda_memory_usage
    self_device_memory_usage = self_cuda_memory_usage

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time={_format_time(self.cpu_time_total)} "
                f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes}>")


_SUMMED = ("cpu_time_total", "self_cpu_time_total", "device_time_total",
           "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
           "cuda_memory_usage", "self_cuda_memory_usage")


class FunctionEventAvg:
    """The events sharing a key (name, and input shapes / stack when grouped by them)."""

    def __init__(self, key, input_shapes=None, stack=None):
        self.key = key
        self.input_shapes = input_shapes
        self.stack = stack or []
        self.count = 0
        for attr in _SUMMED:
            setattr(self, attr, 0)

    def add(self, other) -> FunctionEventAvg:
        self.count += other.count
        for attr in _SUMMED:
            setattr(self, attr, getattr(self, attr) + getattr(other, attr))
        return self

    name = property(lambda self: self.key)
    cpu_time = property(lambda self: self.cpu_time_total / max(self.count, 1))
    device_time = property(lambda self: self.device_time_total / max(self.count, 1))
    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_format_time(self.self_cpu_time_total)} cpu_time="
                f"{_format_time(self.cpu_time_total)} input_shapes={self.input_shapes}>")


SORT_KEYS = ("cpu_time", "cuda_time", "device_time", "cpu_time_total", "cuda_time_total",
             "device_time_total", "self_cpu_time_total", "self_cuda_time_total",
             "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
             "cuda_memory_usage", "self_cuda_memory_usage", "count")


class EventList(list):
    """A list of events with PyTorch's ``table``, ``key_averages`` and ``export_chrome_trace``."""

    def __init__(self, *args, use_device=None, profile_memory=False, pid=None):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._pid = os.getpid() if pid is None else pid

    def _like(self, events) -> EventList:
        return EventList(events, use_device=self._use_device,
                         profile_memory=self._profile_memory, pid=self._pid)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0) -> EventList:
        """One ``FunctionEventAvg`` per name (and per input shapes / top stack frames when
        asked), in order of first occurrence."""
        groups: dict = {}
        for e in self:
            key = [e.key]
            if group_by_input_shapes:
                key.append(str(e.input_shapes))
            if group_by_stack_n > 0:
                key.append(tuple(e.stack[:group_by_stack_n]))
            key = tuple(key)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shapes else None,
                    e.stack[:group_by_stack_n] if group_by_stack_n > 0 else None)
            avg.add(e)
        return self._like(groups.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    # -- table ------------------------------------------------------------------------------
    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False) -> str:
        """The events as PyTorch's profiler table, sorted (descending) by ``sort_by``."""
        events = list(self)
        if top_level_events_only:
            events = [e for e in events if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in SORT_KEYS:
                raise ValueError(f"sort_by must be one of {', '.join(SORT_KEYS)}; "
                                 f"got {sort_by!r}")
            events.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            events = events[:row_limit]
        return _table(self, events, max_name_column_width, max_shapes_column_width,
                      max_src_column_width, header)

    def __str__(self):
        return self.table()

    # -- chrome trace -----------------------------------------------------------------------
    def chrome_trace(self) -> dict:
        """The events as a Chrome trace (``chrome://tracing``, Perfetto): one complete event
        (``"ph": "X"``) per range, ``ts``/``dur`` in microseconds; device ranges on their own
        track."""
        pid, out, threads = self._pid, [], set()
        for e in self:
            if not isinstance(e, FunctionEvent):
                raise TypeError("export_chrome_trace needs the recorded events, not averages")
            args = {"External id": e.id}
            if e.input_shapes is not None:
                args["Input Dims"] = e.input_shapes
            if e.stack:
                args["Call stack"] = ";".join(e.stack)
            if e.cpu_parent is not None:
                args["Parent id"] = e.cpu_parent.id
            threads.add(e.thread)
            out.append({"ph": "X", "cat": e.kind, "name": e.name, "pid": pid, "tid": e.thread,
                        "ts": round(e.time_range.start, 3),
                        "dur": round(e.cpu_time_total, 3), "args": args})
            if e.device_range is not None:
                out.append({"ph": "X", "cat": "kernel", "name": e.name, "pid": pid, "tid": 0,
                            "ts": round(e.device_range[0], 3),
                            "dur": round(e.device_time_total, 3),
                            "args": {"External id": e.id}})
        meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                 "args": {"name": f"python {pid}"}}]
        meta += [{"ph": "M", "name": "thread_name", "pid": pid, "tid": t,
                  "args": {"name": f"thread {t}"}} for t in sorted(threads)]
        if any(e.get("cat") == "kernel" for e in out):
            meta.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": 0,
                         "args": {"name": "cuda stream"}})
        return {"traceEvents": meta + out, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path) -> None:
        with open(path, "w") as f:
            json.dump(self.chrome_trace(), f)


# -- formatting ---------------------------------------------------------------------------------
def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_memory(n: int) -> str:
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} b"


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.2f}%" if whole > 0 else "0.00%"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _table(all_events, rows, name_w, shapes_w, src_w, header) -> str:
    self_cpu = sum(e.self_cpu_time_total for e in all_events)
    self_dev = sum(e.self_device_time_total for e in all_events)
    has_dev = bool(all_events._use_device) or self_dev > 0
    has_mem = all_events._profile_memory
    has_dev_mem = has_mem and any(e.cuda_memory_usage for e in all_events)
    has_shapes = any(e.input_shapes is not None for e in all_events)
    has_src = any(e.stack for e in all_events)
    cols = [("Self CPU %", lambda e: _pct(e.self_cpu_time_total, self_cpu)),
            ("Self CPU", lambda e: _format_time(e.self_cpu_time_total)),
            ("CPU total %", lambda e: _pct(e.cpu_time_total, self_cpu)),
            ("CPU total", lambda e: _format_time(e.cpu_time_total)),
            ("CPU time avg", lambda e: _format_time(e.cpu_time_total / max(e.count, 1)))]
    if has_dev:
        cols += [("Self CUDA", lambda e: _format_time(e.self_device_time_total)),
                 ("Self CUDA %", lambda e: _pct(e.self_device_time_total, self_dev)),
                 ("CUDA total", lambda e: _format_time(e.device_time_total)),
                 ("CUDA time avg",
                  lambda e: _format_time(e.device_time_total / max(e.count, 1)))]
    if has_mem:
        cols += [("CPU Mem", lambda e: _format_memory(e.cpu_memory_usage)),
                 ("Self CPU Mem", lambda e: _format_memory(e.self_cpu_memory_usage))]
    if has_dev_mem:
        cols += [("CUDA Mem", lambda e: _format_memory(e.cuda_memory_usage)),
                 ("Self CUDA Mem", lambda e: _format_memory(e.self_cuda_memory_usage))]
    cols.append(("# of Calls", lambda e: str(e.count)))
    name_w = min(max([len(e.key) for e in rows] + [4]) + 4, name_w)
    widths = [name_w] + [12] * len(cols)
    if has_shapes:
        shapes_w = min(max([len(str(e.input_shapes)) for e in rows] + [12]) + 4, shapes_w)
        widths.append(shapes_w)
    if has_src:
        src_w = min(max([len(s) for e in rows for s in e.stack] + [15]) + 4, src_w)
        widths.append(src_w)
    sep = "  ".join("-" * w for w in widths)
    titles = ["Name"] + [c[0] for c in cols]
    if has_shapes:
        titles.append("Input Shapes")
    if has_src:
        titles.append("Source Location")
    lines = [] if header is None else ["=" * len(sep), header]
    lines += [sep, "  ".join(f"{t:>{w}}" for t, w in zip(titles, widths)), sep]
    for e in rows:
        cells = [_clip(e.key, name_w)] + [f(e) for _, f in cols]
        if has_shapes:
            cells.append(_clip("" if e.input_shapes is None else str(e.input_shapes), shapes_w))
        stack = list(e.stack) if has_src else []
        if has_src:
            cells.append(_clip(stack.pop(0) if stack else "", src_w))
        lines.append("  ".join(f"{c:>{w}}" for c, w in zip(cells, widths)))
        for frame in stack:   # further frames of the source location, one row each
            blank = [""] * (len(widths) - 1)
            lines.append("  ".join(f"{c:>{w}}" for c, w in zip(blank + [_clip(frame, src_w)],
                                                               widths)))
    lines += [sep, f"Self CPU time total: {_format_time(self_cpu)}"]
    if has_dev:
        lines.append(f"Self CUDA time total: {_format_time(self_dev)}")
    return "\n".join(lines) + "\n"


def build(recorder) -> EventList:
    """The recorder's spans as ``FunctionEvent``s, in order of start, children linked."""
    t0 = recorder.t0
    spans = sorted(recorder.spans, key=lambda s: (s.start, -s.end))
    by_span: dict = {}
    events = []
    for s in spans:
        dev = recorder.cuda_times(s)
        e = FunctionEvent(s.id, s.name, s.tid, (s.start - t0) / 1e3, (s.end - t0) / 1e3,
                          kind=s.kind, input_shapes=s.shapes, stack=s.stack, memory=s.mem,
                          device_memory=s.device_mem,
                          device_range=None if dev is None else (dev[0], dev[0] + dev[1]))
        by_span[id(s)] = e
        events.append(e)
    for s, e in zip(spans, events):
        parent = by_span.get(id(s.parent)) if s.parent is not None else None
        if parent is not None:
            e.cpu_parent = parent
            parent.cpu_children.append(e)
    return EventList(events, use_device="cuda" if recorder.cuda is not None else None,
                     profile_memory=recorder.profile_memory)
