"""``gpugrad.distributed``: the names a training script imports from ``torch.distributed``
(nanoGPT's ``from torch.distributed import init_process_group, destroy_process_group``).
gpugrad has no communication backend, so ``is_available()`` is False, no process group is ever
initialized, and what needs one fails as PyTorch fails without one: a script that takes the
distributed path only when launched by torchrun (``RANK`` set) runs unchanged on one process."""
from __future__ import annotations

from enum import Enum

__all__ = ["ReduceOp", "all_reduce", "barrier", "destroy_process_group", "get_rank",
           "get_world_size", "init_process_group", "is_available", "is_initialized"]

_NO_GROUP = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class ReduceOp(Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


def is_available() -> bool:
    return False


def is_initialized() -> bool:
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       **kwargs):
    raise RuntimeError("gpugrad has no torch.distributed backend: it trains in one process "
                       "(launch the script without torchrun)")


def destroy_process_group(group=None):
    raise AssertionError("Process group cannot be None")


def _no_group(*args, **kwargs):
    raise ValueError(_NO_GROUP)


def get_rank(group=None) -> int:
    return _no_group()


def get_world_size(group=None) -> int:
    return _no_group()


def barrier(group=None, async_op=False, device_ids=None):
    _no_group()


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _no_group()
