"""``torch.backends.mps``: gpugrad has no Apple-GPU backend."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
