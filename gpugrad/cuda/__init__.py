"""``gpugrad.cuda``: the CUDA devices as PyTorch's ``torch.cuda`` shows them, through CuPy.

The facade of the package: devices.py answers what the devices are, memory.py the pool's
figures, random.py the GPU's random stream, streams.py streams and events, graphs.py CUDA-graph
capture and replay.

Every function works on a machine without CuPy or without a GPU: ``is_available()`` is then
False and the rest either answers 0 or raises a clear error saying what is missing.
"""
from __future__ import annotations

from .._backend import OutOfMemoryError
from .devices import (
    current_device,
    device_count,
    get_device_capability,
    get_device_name,
    get_device_properties,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    mem_get_info,
    set_device,
    synchronize,
)
from .graphs import (
    CUDAGraph,
    graph,
    graph_pool_handle,
    is_current_stream_capturing,
    make_graphed_callables,
)
from .memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_accumulated_memory_stats,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import (
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

__all__ = ["CUDAGraph", "graph", "graph_pool_handle", "is_current_stream_capturing",
           "make_graphed_callables", "Event", "Stream", "StreamContext", "current_stream",
           "default_stream", "device",
           "device_of", "set_stream", "stream", "is_available", "device_count",
           "current_device", "set_device", "get_device_name", "get_device_properties",
           "get_device_capability", "synchronize", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all", "set_rng_state",
           "set_rng_state_all", "is_bf16_supported", "is_initialized", "init", "mem_get_info",
           "memory_allocated", "memory_reserved", "max_memory_allocated", "max_memory_reserved",
           "memory_stats", "memory_summary", "reset_peak_memory_stats",
           "reset_max_memory_allocated", "reset_accumulated_memory_stats", "empty_cache",
           "OutOfMemoryError"]


def _amp_module():
    """``gpugrad.cuda.amp`` (also importable as a module, as ``torch.cuda.amp`` is)."""
    import sys

    from ..amp import cuda_amp  # layering: torch.cuda.amp is amp's older spelling
    sys.modules[__name__ + ".amp"] = cuda_amp
    return cuda_amp


amp = _amp_module()
