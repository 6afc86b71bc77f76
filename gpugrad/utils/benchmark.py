"""``gpugrad.utils.benchmark``: ``Timer``, ``Measurement`` and ``Compare``, as
``torch.utils.benchmark`` has them.

    t = Timer("x * y", globals={"x": x, "y": y}, label="mul", description="float32")
    m = t.blocked_autorange(min_run_time=0.2)
    print(m)                       # median, IQR, number of measurements
    Compare([m, ...]).print()      # a table grouped by label / sub_label / description

A measurement is ``number_per_run`` executions of ``stmt`` timed as one block (so the clock's
own cost is spread over many runs); ``times`` are seconds per execution. When a CUDA device is
in use the device is synchronised before a block starts and before it is read, so a block's
time includes the GPU work it queued.
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import math
import statistics
import timeit as _timeit

__all__ = ["Compare", "Language", "Measurement", "TaskSpec", "Timer"]

IQR_WARN_THRESHOLD = 0.1    # a measurement whose IQR exceeds this fraction of its median warns
_MAX_SIGNIFICANT_FIGURES = 4
_UNITS = ((1e-9, "ns", "nanoseconds", 1e-6), (1e-6, "us", "microseconds", 1e-3),
          (1e-3, "ms", "milliseconds", 1.0), (1.0, "s", "seconds", math.inf))


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What was timed, and the names it is reported under."""
    stmt: str
    setup: str = "pass"
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        """label: sub_label, else the statement."""
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        return f"{self.stmt}"

    def summarize(self) -> str:
        lines = [self.title]
        if self.description:
            lines.append(self.description)
        if self.label is not None:
            lines.append(self.stmt)
        return "\n".join(lines)


def _unit(seconds: float) -> tuple:
    """(scale, short name, long name) that shows ``seconds`` as a number from 1 to 1000."""
    for scale, short, long, below in _UNITS:
        if seconds < below:
            return scale, short, long
    return _UNITS[-1][:3]


def _round_sig(x: float, figures: int) -> float:
    if x == 0 or not math.isfinite(x):
        return x
    return round(x, figures - 1 - int(math.floor(math.log10(abs(x)))))


class Measurement:
    """The times of one task: ``raw_times`` (seconds per block of ``number_per_run``)."""

    def __init__(self, number_per_run: int, raw_times, task_spec: TaskSpec, metadata=None):
        self.number_per_run = int(number_per_run)
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        if not self.raw_times:
            raise ValueError("a Measurement needs at least one time")
        self._sorted = sorted(t / self.number_per_run for t in self.raw_times)

    def __getattr__(self, name):
        # stmt, label, sub_label, description, env, num_threads: the task's
        if name != "task_spec" and name in TaskSpec.__dataclass_fields__:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def mean(self) -> float:
        return statistics.fmean(self._sorted)

    @property
    def median(self) -> float:
        return statistics.median(self._sorted)

    def _quantile(self, q: float) -> float:
        """Linear interpolation between the closest ranks (numpy's default)."""
        s = self._sorted
        pos = q * (len(s) - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    @property
    def iqr(self) -> float:
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str | None:
        return self.task_spec.env

    @property
    def significant_figures(self) -> int:
        """How many figures of the median the spread of the middle half supports (1 to 4)."""
        s = self._sorted
        middle = s[len(s) // 4: math.ceil(3 * len(s) / 4)] or s
        spread = statistics.pstdev(middle) / math.sqrt(len(middle)) if len(middle) > 1 else 0.0
        half_width = max(1.645 * spread, 1e-9)   # 90% confidence, floored at a nanosecond
        figures = int(math.floor(math.log10(max(self.median, 1e-12) / half_width)))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def warnings(self) -> list:
        out = []
        if len(self._sorted) >= 4 and self.median > 0 and not self.meets_confidence():
            out.append(f"WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% of "
                       f"the median measurement.\n           This could indicate system "
                       f"fluctuation.")
        return out

    @property
    def has_warnings(self) -> bool:
        return bool(self.warnings)

    def meets_confidence(self, threshold: float = IQR_WARN_THRESHOLD) -> bool:
        return self.median > 0 and self.iqr / self.median < threshold

    def __repr__(self):
        scale, unit, _ = _unit(self.median)
        n = len(self._sorted)
        threads = self.task_spec.num_threads
        lines = [f"<gpugrad.utils.benchmark.Measurement object at {hex(id(self))}>",
                 self.task_spec.summarize()]
        if n > 1:
            lines += [f"  Median: {self.median / scale:.2f} {unit}",
                      f"  IQR:    {self.iqr / scale:.2f} {unit} "
                      f"({self._quantile(0.25) / scale:.2f} to "
                      f"{self._quantile(0.75) / scale:.2f})",
                      f"  {n} measurements, {self.number_per_run} runs per measurement, "
                      f"{threads} thread{'s' if threads > 1 else ''}"]
        else:
            lines += [f"  {self.median / scale:.2f} {unit}",
                      f"  1 measurement, {self.number_per_run} runs , {threads} "
                      f"thread{'s' if threads > 1 else ''}"]
        lines += [f"  {w}" for w in self.warnings]
        return "\n".join(lines)

    @staticmethod
    def merge(measurements) -> list:
        """One measurement per task: the times of those sharing a task, together."""
        groups: dict = {}
        for m in measurements:
            groups.setdefault(m.task_spec, []).append(m)
        out = []
        for spec, ms in groups.items():
            times = [t for m in ms for t in m.times]
            out.append(Measurement(1, times, spec, ms[0].metadata))
        return out


# -- timing --------------------------------------------------------------------------------------
def _cuda_sync():
    """The device synchronisation when a CUDA device is in use (CuPy loaded), else None."""
    from .. import _backend
    cp = _backend._cupy
    if cp is None or cp is False:
        return None
    from .. import cuda
    return cuda.synchronize if cuda.is_available() else None


@contextlib.contextmanager
def _threads(n: int):
    import gpugrad
    old = gpugrad.get_num_threads()
    gpugrad.set_num_threads(n)
    try:
        yield
    finally:
        gpugrad.set_num_threads(old)


class Timer:
    """Times ``stmt`` (a string of Python, or a callable) after ``setup``, with ``globals``."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=_timeit.default_timer,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language=Language.PYTHON):
        if language not in (Language.PYTHON, "py", "python"):
            raise NotImplementedError("gpugrad's Timer times Python statements only")
        if not isinstance(num_threads, int) or num_threads < 1:
            raise ValueError(f"num_threads must be a positive int, got {num_threads!r}")
        self._clock = timer
        self._sync = None
        self._globals = dict(globals or {})
        if global_setup:
            exec(global_setup, self._globals)
        text = stmt if isinstance(stmt, str) else getattr(stmt, "__name__", repr(stmt))
        self._task_spec = TaskSpec(text, setup if isinstance(setup, str) else "pass",
                                   global_setup, label, sub_label, description, env,
                                   num_threads)
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=self._synced_clock,
                                    globals=self._globals)

    def _synced_clock(self) -> float:
        if self._sync is not None:
            self._sync()
        return self._clock()

    def _timeit(self, number: int) -> float:
        self._sync = _cuda_sync()   # decided per block: the statement may be what loads CuPy
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """One block of ``number`` runs (after a short warm-up of ``number // 100``)."""
        with _threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: enough that one block takes a thousandth of ``min_run_time`` and
        the clock's own cost is under 0.01% of it."""
        with _threads(self._task_spec.num_threads):
            overhead = statistics.median(self._timeit(0) for _ in range(5))
            number = 1
            while True:
                took = self._timeit(number)
                if took >= min_run_time or number * 10 > 2 ** 31:
                    return number
                if took >= min_run_time / 1000 and overhead <= took * 1e-4:
                    return number
                number *= 10

    def _loop(self, number, min_run_time, max_run_time, stop, callback) -> list:
        times, total = [], 0.0
        with _threads(self._task_spec.num_threads):
            while True:
                t = self._timeit(number)
                times.append(t)
                total += t
                if callback is not None:
                    callback(number, t)
                if total >= min_run_time and stop(times):
                    break
                if max_run_time is not None and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback=None, min_run_time: float = 0.2) -> Measurement:
        """Blocks of a fixed number of runs until ``min_run_time`` seconds have been spent."""
        number = self._block_size(min_run_time)
        times = self._loop(number, min_run_time, None, lambda ts: True, callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0, callback=None) -> Measurement:
        """Blocks until the IQR falls under ``threshold`` of the median (at least 4 blocks and
        ``min_run_time`` seconds; at most ``max_run_time``)."""
        number = self._block_size(0.05)

        def confident(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec) \
                .meets_confidence(threshold)

        times = self._loop(number, min_run_time, max_run_time, confident, callback)
        return Measurement(number, times, self._task_spec)


# -- comparison tables ---------------------------------------------------------------------------
_BEST, _SLOW, _RESET = "\033[92m\033[1m", "\033[31m", "\033[0m"


class Compare:
    """Measurements as tables: one per label, a row per sub_label (per thread count), a
    column per description, cells the medians in one unit."""

    def __init__(self, results):
        self._results: list = []
        self._trim = False
        self._color = None        # None, "rowwise" or "columnwise"
        self._highlight = False
        self.extend_results(results)

    def extend_results(self, results) -> None:
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        self._trim = True

    def colorize(self, rowwise: bool = False) -> None:
        self._color = "rowwise" if rowwise else "columnwise"

    def highlight_warnings(self) -> None:
        self._highlight = True

    def print(self) -> None:
        print(str(self))

    def __str__(self):
        groups: dict = {}
        for m in Measurement.merge(self._results):
            groups.setdefault(m.label, []).append(m)
        return "\n".join(self._render(label, ms) for label, ms in groups.items())

    def _render(self, label, ms) -> str:
        cols = list(dict.fromkeys(m.description if m.description is not None else m.stmt
                                  for m in ms))
        show_cols = len(cols) > 1 or any(m.description is not None for m in ms)
        scale, short, unit_name = _unit(min(m.median for m in ms))
        cells: dict = {}
        for m in ms:
            col = m.description if m.description is not None else m.stmt
            cells[(m.num_threads, m.sub_label or "", col)] = m
        by_threads: dict = {}
        for (threads, row, _) in cells:
            by_threads.setdefault(threads, list())
            if row not in by_threads[threads]:
                by_threads[threads].append(row)

        def text(m):
            v = m.median / scale
            s = f"{_round_sig(v, m.significant_figures):g}" if self._trim else f"{v:.1f}"
            if self._highlight and m.has_warnings:
                s += f" (! {m.iqr / m.median * 100:.0f}%)"
            return s

        row_w = max([len(r) for rows in by_threads.values() for r in rows] + [10]) + 4
        col_ws = [max(len(c) if show_cols else 0, 8) for c in cols]
        grid = {}
        for key, m in cells.items():
            grid[key] = text(m)
        col_ws = [max([w] + [len(grid.get((t, r, c), "")) for t, rows in by_threads.items()
                             for r in rows]) for w, c in zip(col_ws, cols)]
        head = " " * row_w + "|" + "|".join(f"{c if show_cols else '':^{w + 2}}"
                                            for c, w in zip(cols, col_ws))
        width = len(head)
        title = f" {label} " if label else ""
        lines = [f"[{title:-^{width - 2}}]", head]
        for threads in sorted(by_threads):
            prefix = f"{threads} thread{'s' if threads > 1 else ''}: "
            lines.append(prefix + "-" * max(width - len(prefix), 0))
            for row in by_threads[threads]:
                parts = []
                medians = [cells[(threads, row, c)].median for c in cols
                           if (threads, row, c) in cells]
                for c, w in zip(cols, col_ws):
                    s = grid.get((threads, row, c), "")
                    s = f"{s:^{w + 2}}"
                    m = cells.get((threads, row, c))
                    if m is not None and self._color is not None:
                        s = self._paint(s, m, medians, cells, c, by_threads)
                    parts.append(s)
                lines.append(f"{row:>{row_w - 2}}  |" + "|".join(parts))
        lines.append("")
        lines.append(f"Times are in {unit_name} ({short}).")
        return "\n".join(lines) + "\n"

    def _paint(self, s, m, row_medians, cells, col, by_threads) -> str:
        if self._color == "rowwise":
            peers = row_medians
        else:
            peers = [v.median for (t, r, c), v in cells.items() if c == col]
        best = min(peers)
        if m.median == best and len(peers) > 1:
            return _BEST + s + _RESET
        if m.median >= 1.5 * best:
            return _SLOW + s + _RESET
        return s
