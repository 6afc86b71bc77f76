"""Intra-op threads on the CPU: one thread setting for elementwise work and the BLAS.

numpy runs every ufunc on one core; it releases the GIL inside its loops, so an elementwise
function of large contiguous arrays can run on several threads at once, each over its own
contiguous range of the output. :func:`elementwise` does that, block by block: a block is
small enough (``BLOCK`` elements) that a formula of several ufuncs (``sigmoid_bwd``: three)
keeps its temporaries in cache, which helps even on one thread. Every element is computed by
the same ufunc loops as on the whole array, so the result is bit for bit the same whatever the
thread count (the tests check this). Arrays under ``MIN_ELEMENTS`` take today's path: the pool
costs a few tens of microseconds to wake, which only pays above that size.

The thread count is PyTorch's: ``OMP_NUM_THREADS`` when set, else the cores this process may
run on; ``set_num_threads`` changes it and, through ``threadpoolctl`` when it is installed,
the BLAS's thread count with it. Without ``threadpoolctl`` the BLAS keeps its own setting.

The thresholds come from ``bench/tuning/threads.py``, which measures them on the machine it runs
on (see ``docs/cpu.md``).
"""
from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

# measured by bench/tuning/threads.py on the 2-core development machine (2026-11-28, a
# quiet spell; docs/cpu.md has the figures, and why the 16-core machine wants its own run)
MIN_ELEMENTS = 1 << 19   # below this an elementwise op runs whole, on the calling thread
BLOCK = 1 << 16          # elements per block: a formula's temporaries stay in cache
assert BLOCK <= MIN_ELEMENTS   # a block never splits again (no pool task waits on the pool)
assert BLOCK % 64 == 0         # blocks start where the whole array's SIMD loop would be


def _from_environment() -> int:
    """PyTorch's default: OMP_NUM_THREADS when it is a positive integer, else the cores this
    process may run on."""
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):   # not on Linux
        return os.cpu_count() or 1


class _State:
    threads = _from_environment()
    interop_threads = threads
    pool: ThreadPoolExecutor | None = None
    blas = None          # threadpoolctl's limiter while set_num_threads has set the BLAS
    lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked child (a DataLoader worker) has none of the parent's pool threads: it makes
    its own pool when it first needs one (the parent's would take tasks and never run them)."""
    _State.pool = None
    _State.lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def get_num_threads() -> int:
    return _State.threads


def set_num_threads(n: int) -> None:
    """Elementwise threads and the BLAS's threads, both ``n``."""
    with _State.lock:
        if n != _State.threads and _State.pool is not None:
            _State.pool.shutdown(wait=False)
            _State.pool = None
        _State.threads = n
    _set_blas_threads(n)


def _set_blas_threads(n: int) -> None:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:   # optional: the BLAS keeps the count it started with
        return
    _State.blas = threadpool_limits(limits=n, user_api="blas")


def blas_threads() -> int | None:
    """The BLAS's thread count as threadpoolctl reads it (None without threadpoolctl)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    counts = [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(counts) if counts else None


def get_num_interop_threads() -> int:
    return _State.interop_threads


def set_num_interop_threads(n: int) -> None:
    """Recorded: gpugrad runs one op at a time, so there is no inter-op pool to size."""
    _State.interop_threads = n


def _pool() -> ThreadPoolExecutor:
    pool = _State.pool
    if pool is None:
        with _State.lock:
            if _State.pool is None:
                _State.pool = ThreadPoolExecutor(max_workers=_State.threads - 1,
                                                 thread_name_prefix="gpugrad-intraop")
            pool = _State.pool
    return pool


# -- elementwise work ------------------------------------------------------------------------
class _Unlike(Exception):
    """A block's result is not of the first block's dtype and length."""


def elementwise(fn, args, ufunc=None, alone=False, into=False):
    """``fn(*args)`` computed over blocks of the output on ``get_num_threads()`` threads, or
    None when the arguments do not fit (the caller then computes it whole): the array
    arguments must be C-contiguous numpy arrays of one shape of at least ``MIN_ELEMENTS``
    elements, or one value expanded to that shape (all strides 0: a ``sum``'s gradient) or
    0-d, which is passed as that value (the others are passed to every block as they are), and
    ``fn`` must return an array, or a tuple of arrays, of its block's shape.

    ``ufunc``: a numpy ufunc that computes what ``fn`` does; the first block runs ``fn`` (so
    whatever ``fn`` records happens), the others write ``ufunc``'s result in place (no copy).
    ``alone``: split into blocks from two blocks' worth of elements, on this thread below
    ``MIN_ELEMENTS`` or with one thread (a formula of many passes runs each block while its
    temporaries are in cache). ``into``: ``fn`` takes ``out=`` (its output block, or
    a tuple of them) and writes there, so a block costs no array of its own."""
    if _State.threads <= 1 and not alone:
        return None
    shape, ones = None, ()
    for i, a in enumerate(args):
        if a.__class__ is not np.ndarray:
            continue
        if a.size and not any(a.strides):
            ones += (i,)   # one value expanded (the gradient of a sum): passed as that value
        elif not a.flags.c_contiguous or (shape is not None and a.shape != shape):
            return None
        elif shape is None:
            shape = a.shape
            if a.size < (2 * BLOCK if alone else MIN_ELEMENTS):
                return None
    if shape is None or any(args[i].shape not in (shape, ()) for i in ones):
        return None   # no array to split, or one that would broadcast the result larger
    flat = [a.reshape(-1) if a.__class__ is np.ndarray else a for a in args]
    for i in ones:
        flat[i] = args[i][(0,) * args[i].ndim]
    arrays = [i for i, a in enumerate(flat) if a.__class__ is np.ndarray]
    n = flat[arrays[0]].size

    def parts(lo, hi):
        out = list(flat)
        for i in arrays:
            out[i] = flat[i][lo:hi]
        return out

    try:   # the first block on this thread: it tells the outputs' number and dtypes
        first = fn(*parts(0, BLOCK))
    except Exception:   # noqa: BLE001 - computed whole, the op raises its own error
        return None
    single = first.__class__ is not tuple
    firsts = (first,) if single else first
    if not all(r.__class__ is np.ndarray and r.shape == (BLOCK,) for r in firsts):
        return None
    outs = tuple(np.empty(n, r.dtype) for r in firsts)
    for o, r in zip(outs, firsts):
        o[:BLOCK] = r
    del first, firsts, r   # the first block's own arrays are not kept while the rest run

    if ufunc is not None and single:
        out = outs[0]

        def run(lo, hi):   # one call: a single pass has no temporaries to keep in cache
            ufunc(*parts(lo, hi), out=out[lo:hi])
    elif into:
        def run(lo, hi):
            for s in range(lo, hi, BLOCK):
                e = min(s + BLOCK, hi)
                fn(*parts(s, e), out=outs[0][s:e] if single else tuple(o[s:e] for o in outs))
    else:
        def run(lo, hi):
            for s in range(lo, hi, BLOCK):
                e = min(s + BLOCK, hi)
                rs = fn(*parts(s, e))
                for o, r in zip(outs, (rs,) if single else rs):
                    if r.dtype != o.dtype or r.shape != (e - s,):
                        raise _Unlike   # a block unlike the first: never cast or broadcast
                    o[s:e] = r

    blocks = -(-(n - BLOCK) // BLOCK)
    threads = min(_State.threads, blocks) if n >= MIN_ELEMENTS else 1
    try:
        if threads <= 1:
            run(BLOCK, n)
        else:
            # contiguous ranges of whole blocks, one per thread
            fork_join(run, [BLOCK + blocks * k // threads * BLOCK for k in range(threads)]
                      + [n])
    except _Unlike:   # (a formula that reads thread-local state, say): computed whole
        return None
    outs = tuple(o.reshape(shape) for o in outs)
    return outs[0] if single else outs


def fork_join(run, bounds) -> None:
    """``run(lo, hi)`` for each consecutive pair of ``bounds``, the last range on this thread and
    the others on the pool (each in a copy of this thread's context); returns when all are done,
    raising the first error."""
    pool = _pool()
    futures = [pool.submit(contextvars.copy_context().run, run, bounds[k], bounds[k + 1])
               for k in range(len(bounds) - 2)]
    try:
        run(bounds[-2], bounds[-1])
    finally:
        for f in futures:
            f.result()


def worth_it(a) -> bool:
    """Whether an array is large enough for :func:`elementwise` to split (cheap to ask)."""
    return a.__class__ is np.ndarray and a.size >= MIN_ELEMENTS and _State.threads > 1
