"""``torch.backends.cudnn``: gpugrad runs its GPU kernels through CuPy, not cuDNN."""
enabled = True
benchmark = False
deterministic = False
allow_tf32 = True
benchmark_limit = 10


def is_available() -> bool:
    return False


def version():
    return None
