"""``gpugrad.distributed``: ``torch.distributed`` on MPI (mpi4py, for CPU processes and
machines) and NCCL (through CuPy, one process per GPU). The process-group API is in
``distributed_c10d``, each backend in its own module (``_mpi``, ``_nccl``), the rendezvous of
torchrun's environment in ``rendezvous`` and the launcher (``gpugrad run``) in ``run``.
Importing it needs neither mpi4py nor CuPy; a backend is loaded by ``init_process_group``.
A script that takes the distributed path only when launched (``RANK`` set) runs unchanged on
one process."""
from __future__ import annotations

from .distributed_c10d import (
    Backend,
    DistBackendError,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    gather,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    new_group,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)

__all__ = ["Backend", "DistBackendError", "GroupMember", "ProcessGroup", "ReduceOp", "Work",
           "all_gather", "all_gather_into_tensor", "all_reduce", "barrier", "broadcast",
           "destroy_process_group", "gather", "get_backend", "get_global_rank",
           "get_process_group_ranks", "get_rank", "get_world_size", "group",
           "init_process_group", "is_available", "is_gloo_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "is_torchelastic_launched", "new_group",
           "recv", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter", "send"]


def is_available() -> bool:
    """True when a backend can be loaded here (mpi4py installed, or NCCL through CuPy)."""
    return is_mpi_available() or is_nccl_available()
