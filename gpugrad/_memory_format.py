"""Memory formats (``gpugrad.channels_last`` ...): the layouts ``contiguous`` and ``to`` may be
asked for, and the axis order each lays a tensor out in."""
from __future__ import annotations


class memory_format:   # noqa: N801  (PyTorch's name)
    """A layout request (``x.contiguous(memory_format=gpugrad.channels_last)``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"gpugrad.{self.name}"

    def __reduce__(self):
        return self.name   # pickles as the module-level constant


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def channels_last_axes(fmt, ndim):
    """The axis order, slowest to fastest, that ``fmt`` lays a tensor of ``ndim`` dims out in
    (None: row-major)."""
    if fmt is channels_last and ndim == 4 or fmt is channels_last_3d and ndim == 5:
        return (0,) + tuple(range(2, ndim)) + (1,)
    if fmt in (channels_last, channels_last_3d):
        raise RuntimeError(f"required rank {4 if fmt is channels_last else 5} tensor to use "
                           f"{fmt.name} format")
    return None
