"""DistributedDataParallel: gpugrad has no ``torch.distributed``, so no process group can be
initialized and the wrapper fails where PyTorch fails without one. A script that only wraps the
model when ``WORLD_SIZE > 1`` (the usual guard) runs unchanged on one process."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, **kwargs):
        super().__init__()
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group. (gpugrad has no torch.distributed: train on "
                         "one process, or with nn.DataParallel)")
