"""GPU memory figures of ``gpugrad.cuda`` (CuPy's default memory pool): allocated, reserved,
peaks, statistics, a summary, and ``empty_cache``."""
from __future__ import annotations

import warnings

from .. import _backend
from .devices import _cp, is_available


class _PoolStats:
    """Peaks and running totals of the pool, counted by a CuPy memory hook (installed on first
    use of these figures, so they start there)."""

    def __init__(self, cp):
        memory_hook = _backend.cupy_submodule("cupy.cuda.memory_hook")
        pool = cp.get_default_memory_pool()

        class Hook(memory_hook.MemoryHook):
            name = "gpugrad_stats"

            def malloc_postprocess(hook, device_id, size, mem_size, mem_ptr, pmem_id):
                self.peak = max(self.peak, pool.used_bytes())
                self.peak_reserved = max(self.peak_reserved, pool.total_bytes())
                self.allocs += 1
                self.alloc_bytes += mem_size

            def free_postprocess(hook, device_id, mem_size, mem_ptr, pmem_id):
                self.frees += 1
                self.freed_bytes += mem_size

        self.peak, self.peak_reserved = pool.used_bytes(), pool.total_bytes()
        self.reset_accumulated()
        self.hook = Hook()
        self.hook.__enter__()

    def reset_accumulated(self):
        self.allocs = self.frees = self.alloc_bytes = self.freed_bytes = 0


_stats: _PoolStats | None = None


def _pool_stats() -> _PoolStats:
    global _stats
    if _stats is None:
        _stats = _PoolStats(_cp())
    return _stats


def memory_allocated(device=None) -> int:
    """Bytes held by live arrays on the GPU (0 without CUDA)."""
    return _cp().get_default_memory_pool().used_bytes() if is_available() else 0


def memory_reserved(device=None) -> int:
    """Bytes the pool holds from the driver, live or cached (0 without CUDA)."""
    return _cp().get_default_memory_pool().total_bytes() if is_available() else 0


def max_memory_allocated(device=None) -> int:
    if not is_available():
        return 0
    return max(_pool_stats().peak, memory_allocated())


def max_memory_reserved(device=None) -> int:
    if not is_available():
        return 0
    return max(_pool_stats().peak_reserved, memory_reserved())


def reset_peak_memory_stats(device=None) -> None:
    if not is_available():
        return
    st = _pool_stats()
    st.peak, st.peak_reserved = memory_allocated(), memory_reserved()


def reset_max_memory_allocated(device=None) -> None:
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """Zero the allocation and free counts (no-op without CUDA)."""
    if is_available():
        _pool_stats().reset_accumulated()


def memory_stats(device=None) -> dict:
    """The pool's figures under PyTorch's key names (only those CuPy's pool can give; empty
    without CUDA, as in PyTorch)."""
    if not is_available():
        return {}
    st, pool = _pool_stats(), _cp().get_default_memory_pool()
    used, total = pool.used_bytes(), pool.total_bytes()
    return dict(sorted({
        "allocated_bytes.all.current": used,
        "allocated_bytes.all.peak": max(st.peak, used),
        "allocated_bytes.all.allocated": st.alloc_bytes,
        "allocated_bytes.all.freed": st.freed_bytes,
        "allocation.all.allocated": st.allocs,
        "allocation.all.freed": st.frees,
        "reserved_bytes.all.current": total,
        "reserved_bytes.all.peak": max(st.peak_reserved, total),
        "inactive_split_bytes.all.current": pool.free_bytes(),
        "num_alloc_retries": 0,
        "num_ooms": 0,
    }.items()))


def memory_summary(device=None, abbreviated=False) -> str:
    """A readable table of ``memory_stats`` (zeros without CUDA)."""
    stats = memory_stats(device)

    def size(n):
        for unit in ("B", "KiB", "MiB", "GiB"):
            if n < 1024 or unit == "GiB":
                return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
            n /= 1024
    rows = [("Allocated memory", "allocated_bytes.all", size),
            ("Reserved memory", "reserved_bytes.all", size)]
    lines = [f"gpugrad CUDA memory summary, device {device if device is not None else 0}",
             f"{'':<20}{'current':>14}{'peak':>14}"]
    for title, key, fmt in rows:
        lines.append(f"{title:<20}{fmt(stats.get(key + '.current', 0)):>14}"
                     f"{fmt(stats.get(key + '.peak', 0)):>14}")
    if not abbreviated:
        lines.append(f"{'Allocations':<20}{stats.get('allocation.all.allocated', 0):>14}")
        lines.append(f"{'Frees':<20}{stats.get('allocation.all.freed', 0):>14}")
    return "\n".join(lines) + "\n"


def empty_cache() -> None:
    """Give cached, unused GPU blocks back to the driver."""
    if is_available():
        _cp().get_default_memory_pool().free_all_blocks()
