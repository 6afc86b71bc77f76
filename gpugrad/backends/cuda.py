"""``torch.backends.cuda``: matmul precision switches and the attention kernel choices, kept
and reported (gpugrad's scaled_dot_product_attention has one implementation)."""


class _Matmul:
    """``torch.backends.cuda.matmul``."""

    def __init__(self):
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def is_built() -> bool:
    """Whether gpugrad can use CUDA at all: CuPy is importable."""
    from .. import _backend
    return _backend.cupy_module() is not None


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def preferred_linalg_library(backend=None):
    return "default"
