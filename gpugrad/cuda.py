"""``gpugrad.cuda``: the CUDA devices as PyTorch's ``torch.cuda`` shows them, through CuPy.

Every function works on a machine without CuPy or without a GPU: ``is_available()`` is then
False and the rest either answers 0 or raises a clear error saying what is missing.
"""
from __future__ import annotations

import warnings

from . import _backend
from ._cuda_stream import (
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    device,
    device_of,
    set_stream,
    stream,
)

__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "device",
           "device_of", "set_stream", "stream", "is_available", "device_count",
           "current_device", "set_device", "get_device_name", "get_device_properties",
           "get_device_capability", "synchronize", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state",
           "set_rng_state_all", "is_bf16_supported", "is_initialized", "init", "mem_get_info",
           "memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved",
           "memory_stats", "memory_summary", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "reset_accumulated_memory_stats", "empty_cache",
           "OutOfMemoryError"]


class OutOfMemoryError(RuntimeError):
    """A GPU allocation failed (the message names the size requested)."""


def _cp():
    return _backend.cupy_module()


def is_available() -> bool:
    cp = _cp()
    if cp is None:
        return False
    try:
        return cp.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def device_count() -> int:
    return _cp().cuda.runtime.getDeviceCount() if is_available() else 0


def _need():
    return _backend._require_cuda(_backend.device("cuda"))


def current_device() -> int:
    return _need().cuda.Device().id


def set_device(device) -> None:
    d = _backend.device(device if not isinstance(device, int) else f"cuda:{device}")
    _backend._require_cuda(d).cuda.Device(d.index or 0).use()


def get_device_name(device=None) -> str:
    cp = _need()
    idx = 0 if device is None else _backend.device(
        device if not isinstance(device, int) else f"cuda:{device}").index or 0
    name = cp.cuda.runtime.getDeviceProperties(idx)["name"]
    return name.decode() if isinstance(name, bytes) else name


def synchronize(device=None) -> None:
    if is_available():
        _cp().cuda.Device(0 if device is None else _backend.device(device).index or 0) \
            .synchronize()


def manual_seed(seed) -> None:
    """Seed the generators behind ``device='cuda'`` (the one default generator serves all)."""
    from ._creation import default_generator
    default_generator.manual_seed(seed)


manual_seed_all = manual_seed


# -- device properties ---------------------------------------------------------------------------
def _index(device) -> int:
    from ._cuda_stream import device_index
    return device_index(device)


class _CudaDeviceProperties:
    """What ``get_device_properties`` answers (CuPy's ``runtime.getDeviceProperties``)."""

    def __init__(self, props: dict):
        name = props.get("name", b"")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.total_memory = int(props.get("totalGlobalMem", 0))
        self.major, self.minor = int(props.get("major", 0)), int(props.get("minor", 0))
        self.multi_processor_count = int(props.get("multiProcessorCount", 0))
        self.max_threads_per_multi_processor = int(props.get("maxThreadsPerMultiProcessor", 0))
        self.warp_size = int(props.get("warpSize", 32))
        self.L2_cache_size = int(props.get("l2CacheSize", 0))
        self.is_integrated = int(props.get("integrated", 0))
        self.is_multi_gpu_board = int(props.get("isMultiGpuBoard", 0))

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // 2 ** 20}MB)")


def get_device_properties(device=None) -> _CudaDeviceProperties:
    idx = _index(device)
    cp = _backend._require_cuda(_backend.device("cuda", idx))
    return _CudaDeviceProperties(cp.cuda.runtime.getDeviceProperties(idx))


def get_device_capability(device=None) -> tuple[int, int]:
    """(major, minor) compute capability, e.g. (9, 0) for an H100."""
    p = get_device_properties(device)
    return p.major, p.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: gpugrad's arrays (numpy/CuPy) have no bfloat16 dtype, whatever the GPU."""
    return False


_initialized = False


def is_initialized() -> bool:
    """Whether CUDA has been set up in this process (by ``init()`` or by GPU memory in use)."""
    if not is_available():
        return False
    return _initialized or _cp().get_default_memory_pool().total_bytes() > 0


def init() -> None:
    """Set up CUDA now (a context on the current device) rather than on first use."""
    global _initialized
    _need().cuda.runtime.deviceSynchronize()
    _initialized = True


def mem_get_info(device=None) -> tuple[int, int]:
    """(free, total) bytes of device memory, as the driver reports them."""
    idx = _index(device)
    cp = _backend._require_cuda(_backend.device("cuda", idx))
    with cp.cuda.Device(idx):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


# -- random numbers on the GPU ---------------------------------------------------------------------
# gpugrad's default generator draws on the GPU from a CuPy generator it creates lazily from its
# seed; these functions reseed, read and restore that CuPy stream only (the CPU stream is left).
_cuda_seed: dict = {"rng": None, "seed": None}


def _reseed_cuda(seed, initial) -> None:
    """Continue the GPU stream from ``seed``; ``initial_seed()`` answers ``initial``."""
    from ._creation import default_generator
    rng = _cp().random.default_rng(seed)
    default_generator._cp = rng
    _cuda_seed.update(rng=rng, seed=initial)


def seed() -> None:
    """Reseed the GPU stream with a random number (no-op without CUDA, as in PyTorch)."""
    if is_available():
        import numpy as np
        s = int(np.random.SeedSequence().entropy % 2 ** 63)
        _reseed_cuda(s, s)


seed_all = seed


def initial_seed() -> int:
    """The seed the GPU stream started from (``manual_seed``'s, or ``seed()``'s)."""
    _need()
    from ._creation import default_generator
    rng = default_generator._cp
    if rng is not None and rng is _cuda_seed["rng"]:
        return _cuda_seed["seed"]
    return default_generator.initial_seed()


def get_rng_state(device="cuda"):
    """The GPU stream's state as 8 bytes (a uint8 tensor): the seed of a CuPy generator that
    continues the stream. CuPy's generator state cannot be read back, so the stream is
    continued from a seed drawn from it (deterministic under ``manual_seed``)."""
    _backend._require_cuda(_backend.device("cuda", _index(device)))
    import numpy as np

    from ._creation import default_generator, tensor, uint8
    rng = default_generator._cp
    if rng is None:   # not used since manual_seed: the stream starts from the seed itself
        state = default_generator._seed
    else:
        state = int(rng.integers(2 ** 62))
        _reseed_cuda(state, initial_seed())
    return tensor(np.frombuffer(np.int64(state).tobytes(), np.uint8).copy(), dtype=uint8)


def get_rng_state_all() -> list:
    """One state per device (they share one generator, so the states are equal)."""
    if not is_available():
        return []
    state = get_rng_state()
    return [state.clone() for _ in range(device_count())]


def set_rng_state(new_state, device="cuda") -> None:
    """Restore a state from ``get_rng_state`` (no-op without CUDA, as in PyTorch)."""
    if not is_available():
        return
    import numpy as np

    from ._creation import uint8
    if getattr(new_state, "dtype", None) != uint8 or new_state.numel() != 8:
        raise RuntimeError("RNG state must be a torch.ByteTensor")
    state = int(np.frombuffer(new_state.cpu().numpy().tobytes(), np.int64)[0])
    _reseed_cuda(state, initial_seed())


def set_rng_state_all(new_states) -> None:
    for state in new_states:
        set_rng_state(state)


# -- memory (CuPy's default memory pool) ---------------------------------------------------------
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


def _amp_module():
    """``gpugrad.cuda.amp`` (also importable as a module, as ``torch.cuda.amp`` is)."""
    import sys

    from .amp import cuda_amp
    sys.modules[__name__ + ".amp"] = cuda_amp
    return cuda_amp


amp = _amp_module()
