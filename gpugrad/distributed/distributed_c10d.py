"""The process-group API of ``torch.distributed`` (PyTorch's ``distributed_c10d.py``): groups,
ranks, and the collectives over gpugrad tensors, on the backend a group was made with (MPI
through mpi4py for processes and machines, NCCL through CuPy for GPUs; ``_mpi.py``,
``_nccl.py``).

Every collective runs nonblocking underneath; a blocking call is the nonblocking one waited
for. A wait is bounded by the group's ``timeout``: past it this rank reports a
``DistBackendError`` naming itself and the collective and the job ends (MPI), or the call
raises it (NCCL), instead of hanging. Before the data moves, the ranks agree
on what is being exchanged (the collective, dtype, shape and root): a mismatch is a
``ValueError`` naming the ranks and their shapes, never a silently corrupted result."""
from __future__ import annotations

import datetime
import os
import time
from enum import Enum

import numpy as np

from .. import _backend
from ..tensor import Tensor

__all__ = ["Backend", "DistBackendError", "GroupMember", "ProcessGroup", "ReduceOp", "Work",
           "all_gather", "all_gather_into_tensor", "all_reduce", "barrier", "broadcast",
           "destroy_process_group", "gather", "get_backend", "get_global_rank",
           "get_process_group_ranks", "get_rank", "get_world_size", "group",
           "init_process_group", "is_initialized", "is_mpi_available", "is_nccl_available",
           "is_torchelastic_launched", "new_group", "recv", "reduce", "reduce_scatter",
           "reduce_scatter_tensor", "scatter", "send"]

default_pg_timeout = datetime.timedelta(minutes=30)   # PyTorch's default

_NO_GROUP = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class DistBackendError(RuntimeError):
    """A collective failed in its backend or did not finish within the group's timeout."""


class ReduceOp(Enum):
    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"


class Backend(str):
    """A backend's name: ``Backend("MPI") == "mpi"``; ``gloo`` (PyTorch's CPU backend) runs on
    MPI here."""
    MPI, NCCL, GLOO, UNDEFINED = "mpi", "nccl", "gloo", "undefined"

    def __new__(cls, name: str):
        name = name.lower()
        if name not in ("mpi", "nccl", "gloo", "undefined"):
            raise ValueError(f"Invalid backend: '{name}' (gpugrad has mpi and nccl; gloo runs "
                             "on mpi)")
        return super().__new__(cls, name)


class ProcessGroup:
    """A set of ranks and the backend communicator that joins them."""

    def __init__(self, backend, comm, ranks, timeout):
        self.backend_name = backend
        self.comm = comm                # the backend's communicator, None where not a member
        self.ranks = list(ranks)        # global ranks, in group-rank order
        self.timeout = timeout
        self._seq = 0                   # collectives issued, for messages

    def rank(self) -> int:
        return self.comm.rank if self.comm is not None else -1

    def size(self) -> int:
        return len(self.ranks)

    def __repr__(self):
        return f"ProcessGroup(backend={self.backend_name}, ranks={self.ranks})"


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = -100


class group:   # noqa: N801 - PyTorch's name
    WORLD = None


_group_ns = group   # the class, where a parameter named ``group`` hides it


class Work:
    """The handle of a collective started with ``async_op=True``: ``wait()`` blocks until it is
    done (bounded by the group's timeout) and returns True; ``is_completed()`` polls."""

    def __init__(self, pending, pg, what, finish=None):
        self._pending, self._pg, self._what, self._finish = pending, pg, what, finish
        self._done = False
        self.started = time.perf_counter()

    def is_completed(self) -> bool:
        if not self._done and self._pending.test():
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self):
        return None

    def wait(self, timeout=None) -> bool:
        if self._done:
            return True
        limit = _seconds(timeout if timeout is not None else self._pg.timeout)
        message = (f"[Rank {_world.rank() if _world else -1}] {self._what} (collective "
                   f"#{self._seq}) timed out after {limit:g} s: another rank did not join it "
                   f"(it failed, hangs, or called a different collective)")
        if not self._pending.wait(limit, message):
            raise DistBackendError(message)
        self._complete()
        return True

    def _complete(self):
        self._done = True
        self.finished = time.perf_counter()
        if self._finish is not None:
            self._finish()

    def result(self):
        self.wait()
        return []


def _seconds(timeout) -> float:
    return timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)


# -- the world ------------------------------------------------------------------------------------

_world: ProcessGroup | None = None
_groups: list[ProcessGroup] = []


def is_mpi_available() -> bool:
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available() -> bool:
    from . import _nccl
    return _nccl.available()


def is_gloo_available() -> bool:
    return is_mpi_available()


def is_torchelastic_launched() -> bool:
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def is_initialized() -> bool:
    return _world is not None


def _env_int(name):
    v = os.environ.get(name)
    return None if v in (None, "") else int(v)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the job's processes into the default group.

    ``backend``: ``"mpi"`` (or PyTorch's ``"gloo"``, run on MPI) for CPU processes and
    machines, ``"nccl"`` for one process per GPU; None picks nccl when the tensors will live on
    a GPU (CUDA available), else mpi. The ranks come from the MPI launcher (``gpugrad run``,
    ``mpiexec``) or, for nccl, from ``rank``/``world_size`` or torchrun's environment
    (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``) with ``init_method``
    (``env://``, ``tcp://host:port``, ``file://path``) as the rendezvous."""
    global _world
    if _world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    timeout = default_pg_timeout if timeout is None else timeout
    if backend is None:
        from .. import cuda
        backend = "nccl" if cuda.is_available() and is_nccl_available() else "mpi"
    backend = Backend(str(backend).split(":")[0].split(",")[0])
    rank = _env_int("RANK") if rank == -1 else rank
    world_size = _env_int("WORLD_SIZE") if world_size == -1 else world_size
    if backend in (Backend.MPI, Backend.GLOO):
        from . import _mpi
        comm = _mpi.world(rank, world_size)
        pg = ProcessGroup(Backend.MPI, comm, range(comm.size), timeout)
        _mpi.abort_job_on_error(comm)
    else:
        from . import _nccl
        comm = _nccl.world(rank, world_size, init_method, store, timeout, device_id)
        pg = ProcessGroup(Backend.NCCL, comm, range(comm.size), timeout)
    _world = pg
    GroupMember.WORLD = _group_ns.WORLD = pg
    _groups.append(pg)


def destroy_process_group(group=None):
    global _world
    if _world is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is _world:
        for pg in _groups:
            if pg.comm is not None and pg is not _world:
                pg.comm.free()
        _world.comm.free()
        _groups.clear()
        _world = GroupMember.WORLD = _group_ns.WORLD = None
    else:
        if group.comm is not None:
            group.comm.free()
        _groups.remove(group)


def _pg(group) -> ProcessGroup:
    if _world is None:
        raise ValueError(_NO_GROUP)
    return _world if group is None else group


def get_rank(group=None) -> int:
    return _pg(group).rank()


def get_world_size(group=None) -> int:
    pg = _pg(group)
    return pg.size() if pg.comm is not None else -1


def get_backend(group=None) -> str:
    return _pg(group).backend_name


def get_process_group_ranks(group) -> list[int]:
    return list(_pg(group).ranks)


def get_global_rank(group, group_rank: int) -> int:
    return _pg(group).ranks[group_rank]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of a subset of the world's ranks. Every rank of the world calls it (as in
    PyTorch); a rank outside ``ranks`` gets a group it is not a member of (rank -1)."""
    world = _pg(None)
    ranks = sorted(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(ranks)) != len(ranks) or any(not 0 <= r < world.size() for r in ranks):
        raise ValueError(f"new_group: ranks {ranks} are not distinct ranks of a world of "
                         f"{world.size()}")
    comm = world.comm.split(ranks)
    pg = ProcessGroup(world.backend_name, comm, ranks,
                      world.timeout if timeout is None else timeout)
    _groups.append(pg)
    return pg


# -- collectives ----------------------------------------------------------------------------------

_OPS = {ReduceOp.SUM: "sum", ReduceOp.AVG: "sum", ReduceOp.PRODUCT: "prod",
        ReduceOp.MIN: "min", ReduceOp.MAX: "max"}
_KINDS = ["all_reduce", "broadcast", "all_gather", "reduce_scatter", "reduce", "gather",
          "scatter", "barrier", "send", "recv"]
_CHECK = os.environ.get("GPUGRAD_DIST_CHECK", "1") != "0"


def _op(op):
    if isinstance(op, str):
        op = ReduceOp[op.upper()]
    if op not in _OPS:
        raise ValueError(f"unknown reduce op {op!r}")
    return op


def _array(t, what) -> np.ndarray:
    if not isinstance(t, Tensor):
        raise TypeError(f"{what}(): argument 'tensor' must be Tensor, not {type(t).__name__}")
    a = t._data
    if not a.flags.c_contiguous:
        raise ValueError(f"{what}: tensors must be contiguous")
    return a


def _written(*tensors):
    for t in tensors:
        t._version_box().v += 1


def _run(pg, what, start, finish, async_op, signature=None):
    """Start a collective (``start(block) -> pending``), after checking the ranks agree on
    ``signature``; wait for it unless ``async_op``."""
    if pg.comm is None:       # not a member of the group: PyTorch returns without doing anything
        return None
    pg._seq += 1
    if _CHECK and signature is not None and pg.size() > 1:
        _agree(pg, what, signature)
    limit = _seconds(pg.timeout)
    pg.comm.expect = (limit, _late(pg, what, limit))
    work = Work(start(not async_op), pg, what, finish)
    work._seq = pg._seq
    if async_op:
        return work
    work.wait()
    return None


def _late(pg, what, limit):
    return (f"[Rank {_world.rank()}] {what} (collective #{pg._seq}) timed out after "
            f"{limit:g} s: another rank did not join it (it failed, hangs, or called a "
            f"different collective)")


def _agree(pg, what, signature):
    """Every rank of ``pg`` must call the same collective with the same dtype, shape and root:
    one small all-reduce of (x, -x) with MAX says whether they differ, and if so an all-gather
    says how, so the error names the ranks."""
    kind, dtype, shape, root = signature
    row = np.zeros(12, np.int64)
    row[:4] = (_KINDS.index(kind), np.dtype(dtype).num, root, len(shape))
    row[4:4 + min(len(shape), 8)] = shape[:8]
    both = np.concatenate([row, -row])
    limit = _seconds(pg.timeout)
    pg.comm.expect = (limit, _late(pg, what, limit))
    pending = pg.comm.allreduce(both, "max", block=True)
    if not pending.wait(limit, pg.comm.expect[1]):
        raise DistBackendError(pg.comm.expect[1])
    if np.array_equal(both[:12], -both[12:]):
        return
    rows = np.zeros((pg.size(), 12), np.int64)
    pg.comm.allgather(row, rows, block=True)

    def say(r):
        k = _KINDS[r[0]]
        shp = tuple(int(s) for s in r[4:4 + r[3]])
        rooted = k in ("broadcast", "reduce", "gather", "scatter")
        return f"{k} of {_dname(r[1])} {list(shp)}" + (f" root {r[2]}" if rooted else "")
    seen = "; ".join(f"rank {pg.ranks[i]}: {say(r)}" for i, r in enumerate(rows))
    raise ValueError(f"{what}: the ranks disagree on the collective, dtype, shape or root "
                     f"(collective #{pg._seq}): {seen}")


def _dname(num):
    for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
              np.uint8, np.bool_, np.complex64, np.complex128):
        if np.dtype(t).num == num:
            return np.dtype(t).name
    return f"dtype#{num}"


def _sig(kind, a, root=-1):
    return (kind, a.dtype, tuple(a.shape), root)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group, in place on every rank."""
    pg, op = _pg(group), _op(op)
    a = _array(tensor, "all_reduce")
    if op is ReduceOp.AVG and a.dtype.kind not in "fc":
        raise ValueError(f"all_reduce: ReduceOp.AVG needs a floating point tensor, got "
                         f"{a.dtype}")
    size = pg.size()

    def finish():
        if op is ReduceOp.AVG:
            a[...] /= size
        _written(tensor)
    return _run(pg, "all_reduce", lambda block: pg.comm.allreduce(a, _OPS[op], block), finish,
                async_op, _sig("all_reduce", a))


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """``tensor`` of rank ``src`` (a global rank) copied into ``tensor`` on every rank."""
    pg = _pg(group)
    root = _group_rank(pg, src, group_src, "src")
    a = _array(tensor, "broadcast")
    return _run(pg, "broadcast", lambda block: pg.comm.broadcast(a, root, block),
                lambda: _written(tensor), async_op, _sig("broadcast", a, root))


def _group_rank(pg, rank, group_rank, name):
    if group_rank is not None:
        return group_rank
    if rank is None:
        raise ValueError(f"{name} must be given")
    if pg.comm is not None and rank not in pg.ranks:
        raise ValueError(f"rank {rank} is not part of the group {pg.ranks}")
    return pg.ranks.index(rank) if pg.comm is not None else -1


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor`` into ``tensor_list[rank]``, on every rank."""
    pg = _pg(group)
    a = _array(tensor, "all_gather")
    if pg.comm is not None and len(tensor_list) != pg.size():
        raise ValueError(f"all_gather: tensor_list has {len(tensor_list)} tensors for a group "
                         f"of {pg.size()}")
    for t in tensor_list:
        if tuple(t.shape) != a.shape or t._data.dtype != a.dtype:
            raise ValueError(f"all_gather: every tensor of tensor_list must have the input's "
                             f"shape {list(a.shape)} and dtype, got {list(t.shape)}")
    xp = _backend.xp_of(a)
    out = xp.empty((pg.size(),) + a.shape, a.dtype)

    def finish():
        for i, t in enumerate(tensor_list):
            t._data[...] = out[i]
        _written(*tensor_list)
    return _run(pg, "all_gather", lambda block: pg.comm.allgather(a, out, block), finish, async_op,
                _sig("all_gather", a))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor`` concatenated (along dim 0) into ``output_tensor``."""
    pg = _pg(group)
    a, out = _array(input_tensor, "all_gather_into_tensor"), \
        _array(output_tensor, "all_gather_into_tensor")
    if pg.comm is not None and out.size != a.size * pg.size():
        raise ValueError(f"all_gather_into_tensor: output has {out.size} elements, expected "
                         f"{pg.size()} x {a.size}")
    return _run(pg, "all_gather_into_tensor", lambda block: pg.comm.allgather(a, out, block),
                lambda: _written(output_tensor), async_op, _sig("all_gather", a))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``input`` reduced over the group and split along dim 0: rank i gets the i-th part."""
    pg, op = _pg(group), _op(op)
    a, out = _array(input, "reduce_scatter_tensor"), _array(output, "reduce_scatter_tensor")
    size = pg.size()
    if pg.comm is not None and a.size != out.size * size:
        raise ValueError(f"reduce_scatter_tensor: input has {a.size} elements, expected "
                         f"{size} x {out.size}")

    def finish():
        if op is ReduceOp.AVG:
            out[...] /= size
        _written(output)
    return _run(pg, "reduce_scatter",
                lambda block: pg.comm.reduce_scatter(a, out, _OPS[op], block), finish,
                async_op, _sig("reduce_scatter", a))


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """``input_list[i]`` reduced over the group into ``output`` of rank i."""
    pg = _pg(group)
    if pg.comm is not None and len(input_list) != pg.size():
        raise ValueError(f"reduce_scatter: input_list has {len(input_list)} tensors for a "
                         f"group of {pg.size()}")
    a = _array(output, "reduce_scatter")
    xp = _backend.xp_of(a)
    flat = xp.stack([_array(t, "reduce_scatter") for t in input_list]) if input_list else a
    return reduce_scatter_tensor(output, Tensor._make(xp.ascontiguousarray(flat)), op, group,
                                 async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """``tensor`` reduced over the group into ``tensor`` of rank ``dst``."""
    pg, op = _pg(group), _op(op)
    root = _group_rank(pg, dst, group_dst, "dst")
    a = _array(tensor, "reduce")
    size = pg.size()

    def finish():
        if pg.rank() == root:
            if op is ReduceOp.AVG:
                a[...] /= size
            _written(tensor)
    return _run(pg, "reduce", lambda block: pg.comm.reduce(a, _OPS[op], root, block), finish,
                async_op, _sig("reduce", a, root))


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor`` into ``gather_list`` of rank ``dst``."""
    pg = _pg(group)
    root = _group_rank(pg, 0 if dst is None and group_dst is None else dst, group_dst, "dst")
    a = _array(tensor, "gather")
    here = pg.rank() == root
    if here and (gather_list is None or len(gather_list) != pg.size()):
        raise ValueError(f"gather: the destination needs a gather_list of {pg.size()} tensors")
    out = _backend.xp_of(a).empty((pg.size(),) + a.shape, a.dtype) if here else None

    def finish():
        if here:
            for i, t in enumerate(gather_list):
                t._data[...] = out[i]
            _written(*gather_list)
    return _run(pg, "gather", lambda block: pg.comm.gather(a, out, root, block), finish, async_op,
                _sig("gather", a, root))


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """``scatter_list[i]`` of rank ``src`` into ``tensor`` of rank i."""
    pg = _pg(group)
    root = _group_rank(pg, 0 if src is None and group_src is None else src, group_src, "src")
    a = _array(tensor, "scatter")
    here = pg.rank() == root
    if here and (scatter_list is None or len(scatter_list) != pg.size()):
        raise ValueError(f"scatter: the source needs a scatter_list of {pg.size()} tensors")
    xp = _backend.xp_of(a)
    src_arr = xp.ascontiguousarray(xp.stack([t._data for t in scatter_list])) if here else None
    return _run(pg, "scatter", lambda block: pg.comm.scatter(src_arr, a, root, block),
                lambda: _written(tensor), async_op, _sig("scatter", a, root))


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group has reached it (bounded by the group's timeout)."""
    pg = _pg(group)
    return _run(pg, "barrier", lambda block: pg.comm.barrier(block), None, async_op)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    pg = _pg(group)
    peer = _group_rank(pg, dst, group_dst, "dst")
    a = _array(tensor, "send")
    _run(pg, "send", lambda block: pg.comm.send(a, peer, tag, block), None, False)


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    pg = _pg(group)
    peer = _group_rank(pg, src, group_src, "src")
    a = _array(tensor, "recv")
    _run(pg, "recv", lambda block: pg.comm.recv(a, peer, tag, block), lambda: _written(tensor),
         False)
    return pg.ranks[peer]
