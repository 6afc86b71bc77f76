"""DataParallel: on a single device it runs the wrapped module, as PyTorch does."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Runs ``module`` on the first of ``device_ids``. With no GPU it simply calls the module, as
    PyTorch does; with one it moves the inputs there first. (PyTorch splits the batch across
    several GPUs; gpugrad runs it whole on the first.)"""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        from ... import cuda
        self.module, self.dim = module, dim
        if not cuda.is_available():
            self.device_ids, self.output_device = [], None
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        self.device_ids = [d if isinstance(d, int) else d.index for d in device_ids]
        self.output_device = self.device_ids[0] if output_device is None else output_device
        first = f"cuda:{self.device_ids[0]}"
        for t in list(module.parameters()) + list(module.buffers()):
            if str(t.device) != first:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{first} (device_ids[0]) but found one of them on device: "
                                   f"{t.device}")

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        device = f"cuda:{self.device_ids[0]}"

        def move(v):
            from ...tensor import Tensor
            if isinstance(v, Tensor):
                return v.to(device)
            if isinstance(v, (list, tuple)):
                return type(v)(move(a) for a in v)
            if isinstance(v, dict):
                return {k: move(a) for k, a in v.items()}
            return v
        return self.module(*move(inputs), **move(kwargs))


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """The functional form of ``DataParallel``: ``module(*inputs, **module_kwargs)`` on the first
    of ``device_ids``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
