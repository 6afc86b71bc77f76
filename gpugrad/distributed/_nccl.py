"""The NCCL backend: gpugrad's collectives on CuPy's NCCL binding (``cupy.cuda.nccl``), one
process per GPU, each collective issued on the current stream.

Not yet run on a GPU: it is written against ``cupy.cuda.nccl``'s API and tested in one process
with a stand-in communicator on the simulated CuPy (docs/distributed.md)."""
from __future__ import annotations

import os
import time

import numpy as np

from .. import _backend

_module = None   # cupy.cuda.nccl once loaded (tests put a stand-in here)


def nccl():
    global _module
    if _module is None:
        _module = _backend.cupy_submodule("cupy.cuda.nccl")
    return _module


def available() -> bool:
    if _backend.cupy_module() is None:
        return False
    try:
        return bool(getattr(nccl(), "available", True))
    except ImportError:
        return False


def _seconds(timeout):
    return timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)


def world(rank, world_size, init_method, store, timeout, device_id) -> Communicator:
    """Join ``world_size`` processes, one per GPU: rank 0 makes NCCL's unique id and hands it
    out through MPI (under an MPI launcher) or the rendezvous store (torchrun, init_method)."""
    mpi_world = None
    if rank in (None, -1) or world_size in (None, -1):
        from . import _mpi
        mpi_world = _mpi.mpi().COMM_WORLD
        rank, world_size = mpi_world.rank, mpi_world.size
    cp = _backend.cupy_module()
    local = int(os.environ.get("LOCAL_RANK", rank % max(cp.cuda.runtime.getDeviceCount(), 1)))
    index = getattr(device_id, "index", device_id)
    cp.cuda.Device(local if index is None else index).use()
    uid = nccl().get_unique_id() if rank == 0 else None
    if world_size > 1:
        if mpi_world is not None:
            uid = mpi_world.bcast(uid, root=0)
        else:
            from . import rendezvous
            store = store or rendezvous.store_for(init_method, rank, world_size,
                                                  _seconds(timeout))
            if rank == 0:
                store.set("nccl_unique_id", list(uid))
            uid = tuple(store.get("nccl_unique_id"))
    return Communicator(nccl().NcclCommunicator(world_size, uid, rank), rank, world_size)


_DTYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
           "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
           "int64": "NCCL_INT64", "bool": "NCCL_UINT8"}
_OPS = {"sum": "NCCL_SUM", "prod": "NCCL_PROD", "max": "NCCL_MAX", "min": "NCCL_MIN"}


class Pending:
    """A collective issued on the stream: done when the event recorded after it is."""

    def __init__(self, after=None):
        cp = _backend.cupy_module()
        self.event = cp.cuda.Event(disable_timing=True)
        self.event.record()
        self.after, self.done = after, False

    def test(self) -> bool:
        if not self.done and self.event.done:
            self.done = True
            if self.after is not None:
                self.after()
        return self.done

    def wait(self, limit: float, message: str = "") -> bool:
        deadline = time.monotonic() + limit
        while not self.test():
            if time.monotonic() > deadline:
                return False
            time.sleep(1e-4)
        return True


class Communicator:
    def __init__(self, comm, rank, size):
        self.comm, self.rank, self.size = comm, rank, size

    def _dev(self, a):
        """(a device array for ``a``, a function copying a result back into a host ``a``):
        the agreement checks of distributed_c10d pass small numpy arrays."""
        if a is None:
            return None, None
        if type(a) is np.ndarray:
            cp = _backend.cupy_module()
            d = cp.asarray(a)
            return d, (lambda: d.get(out=a))
        return a, None

    @staticmethod
    def _kind(a):
        return getattr(nccl(), _DTYPES[np.dtype(a.dtype).name])

    @staticmethod
    def _stream():
        return _backend.cupy_module().cuda.get_current_stream().ptr

    def _done(self, *backs):
        backs = [b for b in backs if b is not None]
        if backs:
            _backend.cupy_module().cuda.get_current_stream().synchronize()
            for b in backs:
                b()
        return Pending()

    def allreduce(self, a, op, block=False):
        d, back = self._dev(a)
        self.comm.allReduce(d.data.ptr, d.data.ptr, d.size, self._kind(d),
                            getattr(nccl(), _OPS[op]), self._stream())
        return self._done(back)

    def broadcast(self, a, root, block=False):
        d, back = self._dev(a)
        self.comm.bcast(d.data.ptr, d.size, self._kind(d), root, self._stream())
        return self._done(back)

    def allgather(self, a, out, block=False):
        d, _ = self._dev(a)
        o, back = self._dev(out)
        self.comm.allGather(d.data.ptr, o.data.ptr, d.size, self._kind(d), self._stream())
        return self._done(back)

    def reduce_scatter(self, a, out, op, block=False):
        d, _ = self._dev(a)
        o, back = self._dev(out)
        self.comm.reduceScatter(d.data.ptr, o.data.ptr, o.size, self._kind(d),
                                getattr(nccl(), _OPS[op]), self._stream())
        return self._done(back)

    def reduce(self, a, op, root, block=False):
        d, back = self._dev(a)
        self.comm.reduce(d.data.ptr, d.data.ptr, d.size, self._kind(d),
                         getattr(nccl(), _OPS[op]), root, self._stream())
        return self._done(back)

    def _p2p_all(self, sends, recvs):
        n = nccl()
        n.groupStart()
        try:
            for d, peer in sends:
                self.comm.send(d.data.ptr, d.size, self._kind(d), peer, self._stream())
            for d, peer in recvs:
                self.comm.recv(d.data.ptr, d.size, self._kind(d), peer, self._stream())
        finally:
            n.groupEnd()

    def gather(self, a, out, root, block=False):
        d, _ = self._dev(a)
        if self.rank == root:
            o, back = self._dev(out)
            o[root] = d
            self._p2p_all([], [(o[i], i) for i in range(self.size) if i != root])
            return self._done(back)
        self._p2p_all([(d, root)], [])
        return self._done()

    def scatter(self, src, a, root, block=False):
        d, back = self._dev(a)
        if self.rank == root:
            s, _ = self._dev(src)
            d[...] = s[root]
            self._p2p_all([(s[i], i) for i in range(self.size) if i != root], [])
        else:
            self._p2p_all([], [(d, root)])
        return self._done(back)

    def barrier(self, block=False):
        one = _backend.cupy_module().zeros(1, np.float32)
        return self.allreduce(one, "sum")

    def send(self, a, peer, tag, block=False):
        d, _ = self._dev(a)
        self._p2p_all([(d, peer)], [])
        return self._done()

    def recv(self, a, peer, tag, block=False):
        d, back = self._dev(a)
        self._p2p_all([], [(d, peer)])
        return self._done(back)

    def split(self, ranks):
        """A communicator of ``ranks``: the first of them makes a unique id, broadcast over
        this communicator to every rank (all take part; only members join)."""
        cp = _backend.cupy_module()
        uid = cp.zeros(128, np.int64)
        if self.rank == ranks[0]:
            uid[...] = cp.asarray(np.array(nccl().get_unique_id(), np.int64))
        self.broadcast(uid, ranks[0]).wait(60)
        if self.rank not in ranks:
            return None
        got = tuple(int(v) for v in uid.get())
        me = ranks.index(self.rank)
        return Communicator(nccl().NcclCommunicator(len(ranks), got, me), me, len(ranks))

    def free(self):
        self.comm.destroy()
