"""The CUDA devices as ``gpugrad.cuda`` shows them: availability, count, the current device,
properties and synchronisation, answered through CuPy (0 or False without CuPy or a GPU)."""
from __future__ import annotations

from .. import _backend


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


def _index(device) -> int:
    from .streams import device_index
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
    """False, whatever the GPU: gpugrad's CUDA arrays are CuPy's, and CuPy has no bfloat16
    dtype, so a bfloat16 tensor cannot live on a CUDA device (gpugrad raises a TypeError
    saying so). bfloat16 tensors work on the CPU (through ml_dtypes); on CUDA use float16."""
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
