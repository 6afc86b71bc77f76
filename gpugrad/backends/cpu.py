"""``torch.backends.cpu``."""


def get_cpu_capability() -> str:
    """numpy's build decides the vector instructions used; reported as PyTorch's default."""
    return "DEFAULT"
