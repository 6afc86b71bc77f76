"""The MPI backend: gpugrad's collectives on an mpi4py communicator.

numpy arrays are handed to MPI as buffers (zero copy, nothing pickled). CuPy arrays go to MPI
directly when the MPI library is CUDA-aware, otherwise through a page-locked host copy. A
blocking call is MPI's blocking function (its fastest path); ``async_op`` and DDP's buckets use
the nonblocking form (``Iallreduce`` ...) so they overlap other work. MPI has no timeout: a
watchdog thread bounds every wait and ends the job past it."""
from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback

import numpy as np

from .. import _backend

_MPI = None


def mpi():
    """mpi4py's MPI module (importing it initialises MPI)."""
    global _MPI
    if _MPI is None:
        try:
            from mpi4py import MPI
        except ImportError as e:
            raise RuntimeError(f"the mpi backend needs mpi4py and an MPI library ({e}): pip "
                               "install 'gpugrad[distributed]'") from None
        _MPI = MPI
    return _MPI


def world(rank, world_size) -> Communicator:
    """The job's processes as the MPI launcher started them."""
    MPI = mpi()
    comm = MPI.COMM_WORLD
    if world_size not in (None, -1) and world_size != comm.size:
        if comm.size == 1:
            raise RuntimeError(
                f"the mpi backend was asked for a world of {world_size} but this process was "
                "not started by an MPI launcher: run it with `gpugrad run -n N script.py` (or "
                "`mpiexec -n N python script.py`); under torchrun use backend='nccl'")
        raise RuntimeError(f"world_size={world_size} but the MPI launcher started "
                           f"{comm.size} processes")
    if rank not in (None, -1) and rank != comm.rank:
        raise RuntimeError(f"rank={rank} but the MPI launcher made this process rank "
                           f"{comm.rank}")
    return Communicator(comm.Dup())



def _mpi_op(name):
    MPI = mpi()
    return {"sum": MPI.SUM, "prod": MPI.PROD, "min": MPI.MIN, "max": MPI.MAX}[name]


def _cuda_aware() -> bool:
    MPI = mpi()
    query = getattr(MPI, "Query_cuda_support", None)
    try:
        return bool(query()) if query is not None else False
    except Exception:   # an MPI without the extension
        return False


class Pending:
    """MPI requests in flight, and what to do once they are done (copy a staged result back)."""

    def __init__(self, reqs, after=None):
        self.reqs, self.after = reqs, after
        self.done = False

    def test(self) -> bool:
        if not self.done and (self.reqs[0].Test() if len(self.reqs) == 1
                              else mpi().Request.Testall(self.reqs)):
            self._finish()
        return self.done

    def wait(self, limit: float, message: str = "") -> bool:
        """Wait in MPI (``MPI_Waitall``, the GIL released: as fast as MPI's blocking call) with
        the watchdog armed: past ``limit`` seconds it reports ``message`` as this rank's
        ``DistBackendError`` and ends the job, since a thread cannot interrupt MPI_Wait."""
        if self.test():
            return True
        _watchdog.arm(limit, message)
        try:
            mpi().Request.Waitall(self.reqs)
        finally:
            _watchdog.disarm()
        self._finish()
        return True

    def _finish(self):
        self.done = True
        if self.after is not None:
            self.after()


def _bool_op(op):
    # MPI reduces no arithmetic over C bool: a bool tensor reduces as uint8 (any / all)
    return "min" if op in ("min", "prod") else "max"


class Communicator:
    """An MPI communicator and the nonblocking collectives gpugrad runs on it."""

    def __init__(self, comm):
        self.comm = comm
        self.rank, self.size = comm.rank, comm.size
        self.cuda_aware = None

    # -- buffers ------------------------------------------------------------------------------
    def _buf(self, a, read=True):
        """(a buffer MPI can use for ``a``, a function copying it back into ``a``)."""
        if a is None:
            return None, None
        if type(a) is np.ndarray:
            return (a.view(np.uint8) if a.dtype == np.bool_ else a), None
        if self.cuda_aware is None:
            self.cuda_aware = _cuda_aware()
        cp = _backend.cupy_module()
        cp.cuda.get_current_stream().synchronize()
        if self.cuda_aware:
            return a, None
        host = _pinned(a.shape, a.dtype)
        if read:
            a.get(out=host)
        return host.view(np.uint8) if a.dtype == np.bool_ else host, lambda: a.set(host)

    def _start(self, name, *args, back=None, block=False):
        """MPI's ``name`` (blocking: ``Allreduce``) or its nonblocking form (``Iallreduce``).
        A blocking call runs under the watchdog with the limit and message the caller put in
        ``expect``: MPI's blocking collectives are its fastest, and the watchdog bounds them."""
        if block:
            _watchdog.arm(*self.expect)
            try:
                getattr(self.comm, name)(*args)
            finally:
                _watchdog.disarm()
            if back is not None:
                back()
            done = Pending([])
            done.done = True
            return done
        req = getattr(self.comm, "I" + name[0].lower() + name[1:])(*args)
        return Pending([req], back)

    expect = (1800.0, "a collective timed out")   # (seconds, message) of the next blocking call

    # -- collectives ---------------------------------------------------------------------------
    def allreduce(self, a, op, block=False):
        b, back = self._buf(a)
        mop = _mpi_op(_bool_op(op) if a.dtype == np.bool_ else op)
        return self._start("Allreduce", mpi().IN_PLACE, b, mop, back=back, block=block)

    def broadcast(self, a, root, block=False):
        b, back = self._buf(a, read=self.rank == root)
        return self._start("Bcast", b, root, back=back, block=block)

    def allgather(self, a, out, block=False):
        b, _ = self._buf(a)
        o, back = self._buf(out, read=False)
        return self._start("Allgather", b, o, back=back, block=block)

    def reduce_scatter(self, a, out, op, block=False):
        b, _ = self._buf(a)
        o, back = self._buf(out, read=False)
        mop = _mpi_op(_bool_op(op) if a.dtype == np.bool_ else op)
        return self._start("Reduce_scatter_block", b, o, mop, back=back, block=block)

    def reduce(self, a, op, root, block=False):
        b, back = self._buf(a)
        mop = _mpi_op(_bool_op(op) if a.dtype == np.bool_ else op)
        if self.rank == root:
            return self._start("Reduce", mpi().IN_PLACE, b, mop, root, back=back, block=block)
        return self._start("Reduce", b, None, mop, root, block=block)

    def gather(self, a, out, root, block=False):
        b, _ = self._buf(a)
        o, back = self._buf(out, read=False)
        return self._start("Gather", b, o, root, back=back, block=block)

    def scatter(self, src, a, root, block=False):
        s, _ = self._buf(src)
        b, back = self._buf(a, read=False)
        return self._start("Scatter", s, b, root, back=back, block=block)

    def barrier(self, block=False):
        return self._start("Barrier", block=block)

    def send(self, a, peer, tag, block=False):
        b, _ = self._buf(a)
        return self._start("Send", b, peer, tag, block=block)

    def recv(self, a, peer, tag, block=False):
        b, back = self._buf(a, read=False)
        return self._start("Recv", b, peer, tag, back=back, block=block)

    # -- groups ---------------------------------------------------------------------------------
    def split(self, ranks):
        """A communicator of ``ranks`` (ranks of this one); None on the ranks outside it."""
        MPI = mpi()
        inside = self.rank in ranks
        sub = self.comm.Split(0 if inside else MPI.UNDEFINED,
                              ranks.index(self.rank) if inside else 0)
        return Communicator(sub) if inside else None

    def free(self):
        MPI = mpi()
        if self.comm != MPI.COMM_NULL and not MPI.Is_finalized():
            self.comm.Free()


def _pinned(shape, dtype):
    cp = _backend.cupy_module()
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    mem = cp.cuda.alloc_pinned_memory(max(n, 1))
    return np.frombuffer(mem, np.dtype(dtype), int(np.prod(shape))).reshape(shape)


# -- failures -----------------------------------------------------------------------------------

class _Watchdog:
    """One thread per process that ends the job when a wait outlives its timeout. Arming and
    disarming set two attributes (no lock, no wake-up per collective); the thread looks every
    quarter of the timeout (at most every half second)."""

    def __init__(self):
        self.deadline, self.message, self.thread = None, "", None
        self.period = 0.5

    def arm(self, limit, message):
        self.message = message
        self.period = min(0.5, max(limit / 4, 0.01))
        self.deadline = time.monotonic() + limit
        if self.thread is None:
            self.thread = threading.Thread(target=self._watch, daemon=True,
                                           name="gpugrad-distributed-watchdog")
            self.thread.start()

    def disarm(self):
        self.deadline = None

    def _watch(self):
        while True:
            time.sleep(self.period)
            deadline = self.deadline
            if deadline is not None and time.monotonic() > deadline:
                from .distributed_c10d import DistBackendError
                error = DistBackendError(self.message)
                end_job(DistBackendError, error, None)


_watchdog = _Watchdog()


_installed = False


def abort_job_on_error(comm: Communicator) -> None:
    """An exception that ends a rank ends the whole job at once, naming the rank, instead of
    leaving the other ranks waiting in their next collective: the rank prints its traceback,
    writes it where the launcher looks (``GPUGRAD_DIST_ERROR_DIR``) and calls ``MPI_Abort``."""
    global _installed
    if _installed or comm.size == 1 or getattr(sys.excepthook, "ends_job", False):
        return
    _installed = True
    previous = sys.excepthook

    def hook(kind, value, tb):
        if issubclass(kind, KeyboardInterrupt):
            return previous(kind, value, tb)
        end_job(kind, value, tb, previous)
    hook.ends_job = True
    sys.excepthook = hook

    def thread_hook(args):
        hook(args.exc_type, args.exc_value, args.exc_traceback)
    threading.excepthook = thread_hook


def end_job(kind, value, tb, show=None) -> None:
    """Report this rank's failure, then end every rank of the job (MPI_Abort)."""
    report_failure(value, tb)
    if tb is None:    # the watchdog's timeout: no traceback to show
        sys.stderr.write(f"{kind.__name__}: {value}\n")
    else:
        (show or sys.__excepthook__)(kind, value, tb)
    sys.stderr.write(f"gpugrad.distributed: rank {mpi().COMM_WORLD.rank} failed with "
                     f"{kind.__name__}: {value}; ending the job\n")
    sys.stderr.flush()
    sys.stdout.flush()
    if "timed out" in str(value):
        # the other ranks waiting in the same collective time out about now: let them say so
        # before the job ends, so the launcher can tell which rank never came
        time.sleep(2.0)
    mpi().COMM_WORLD.Abort(1)


def report_failure(value, tb) -> None:
    """Leave the failure of this rank where ``gpugrad run`` reads it."""
    where = os.environ.get("GPUGRAD_DIST_ERROR_DIR")
    if not where:
        return
    rank = mpi().COMM_WORLD.rank if _MPI is not None else int(os.environ.get("RANK", "0"))
    text = "".join(traceback.format_exception(type(value), value, tb))
    try:
        with open(os.path.join(where, f"rank-{rank}.json"), "w") as f:
            json.dump({"rank": rank, "type": type(value).__name__, "message": str(value),
                       "traceback": text, "time": time.time()}, f)
    except OSError:
        pass
