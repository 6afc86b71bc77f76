"""``gpugrad.nn.parallel``: DataParallel (on one device, the wrapped module itself) and
DistributedDataParallel (which needs a process group gpugrad cannot make)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
