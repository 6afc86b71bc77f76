"""Tensors the serialization tests save in each format and read back (safetensors, PyTorch's
zip layout): one array per dtype both libraries hold, the same in every file that uses it."""
import numpy as np

DTYPES = ["float32", "float64", "int64", "bool", "uint8", "float16"]


def values(dtype):
    """A 3 x 4 array of ``dtype``, seeded: bools, integers in [0, 200), or floats of +-100."""
    rng = np.random.default_rng(0)
    if dtype == "bool":
        return rng.random((3, 4)) > 0.5
    if dtype in ("int64", "uint8"):
        return rng.integers(0, 200, (3, 4)).astype(dtype)
    return (rng.standard_normal((3, 4)) * 100).astype(dtype)
