"""``gpugrad.autograd.profiler``: the legacy profiler interface (``torch.autograd.profiler``).

    with gpugrad.autograd.profiler.profile(record_shapes=True) as prof:
        y = model(x)
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))

It records what ``gpugrad.profiler.profile`` records (same names, same tables and traces),
for the whole block, with no schedule. ``emit_nvtx`` shows the same ranges in Nsight Systems.
"""
from __future__ import annotations

from ..profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    Interval,
    _Profile,
    _record,
    record_function,
)

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "emit_nvtx", "profile",
           "record_function"]


class emit_nvtx:
    """While on, every op's forward (``aten::mul``), every backward node (``MulBackward0``,
    inside ``autograd::engine::evaluate_function: MulBackward0``) and every
    ``record_function`` block pushes an NVTX range through CuPy, for Nsight Systems::

        with gpugrad.autograd.profiler.emit_nvtx():
            model(x).sum().backward()

    It uses the profiler's wrappers, swapped in only inside the block: nothing runs on the
    ops' path while it is off. Without CuPy it does nothing and still works as a context
    manager. As in PyTorch it cannot be nested in, or hold, a profile."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.entered = False
        self.installed = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        if _record.state.recorder is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self.entered = True
        nvtx = _record.nvtx_module()
        if nvtx is not None:
            _record.install(_record.NvtxRecorder(nvtx))
            self.installed = True
        return self

    def __exit__(self, *exc):
        if self.installed:
            _record.uninstall()
        self.entered = self.installed = False
        return False


class profile(_Profile):
    """Records every op run inside the block; ``enabled=False`` makes it a no-op.
    ``use_cuda``: also time each range on the CUDA device (when there is one)."""

    def __init__(self, enabled=True, use_cuda=False, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False,
                 use_cpu=True, use_device=None, experimental_config=None):
        super().__init__(record_shapes, profile_memory, with_stack,
                         bool(use_cuda) or use_device == "cuda")
        self.enabled = enabled
        self.entered = False

    def __enter__(self):
        if self.enabled:
            if self.entered:
                raise RuntimeError("Profiler context manager is not reentrant")
            self.entered = True
            self._open()
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self._close(keep=True)
        return False

    @property
    def function_events(self) -> EventList | None:
        return self._events

    @property
    def self_cpu_time_total(self) -> float:
        return self.events().self_cpu_time_total

    def total_average(self) -> FunctionEventAvg:
        return self.events().total_average()

    def __str__(self):
        return self.table()
