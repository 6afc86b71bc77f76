"""Device memory of the simulated GPU: CuPy's memory pools (each counting its own bytes), the
allocator that new arrays are booked to (``set_allocator``, ``get_allocator`` and the
thread-local ``using_allocator``), memory hooks, and ``MemoryPointer``."""
from __future__ import annotations

import contextlib
import ctypes
import threading
import types
import weakref

import numpy as np

from . import _capture
from ._errors import CUDARuntimeError

TOTAL_MEMORY = 80 * 2 ** 30
_UNIT = 512          # CuPy's allocation unit: pools book sizes rounded up to it


class OutOfMemoryError(MemoryError):
    def __init__(self, size, total, limit=0):
        super().__init__(f"Out of memory allocating {size:,} bytes "
                         f"(allocated so far: {total:,} bytes).")


OutOfMemoryError.__module__ = "cupy.cuda.memory"

HOOKS: list = []     # memory hooks in effect, for every pool (CuPy keeps them per thread)
_POOLS: weakref.WeakSet = weakref.WeakSet()


class MemoryPool:
    """``cupy.cuda.MemoryPool``: live bytes (in 512-byte units), cached bytes, a limit. Each
    allocation holds a weak reference whose callback books the free."""

    def __init__(self, allocator=None):
        self._roots: dict[int, tuple] = {}   # id(numpy buffer) -> (weak reference, bytes)
        self._used = 0
        self._cached = 0
        self._limit = 0
        _POOLS.add(self)

    hooks = property(lambda self: HOOKS)

    def malloc(self, size):
        """A block of ``size`` bytes, booked here until the pointer is dropped."""
        buf = np.empty(-(-int(size) // _UNIT) * _UNIT, np.uint8)
        self._alloc(buf, int(size))
        return MemoryPointer(buf)

    def used_bytes(self):
        return self._used

    def total_bytes(self):
        return self._used + self._cached

    def free_bytes(self):
        return self._cached

    def free_all_blocks(self, stream=None):
        self._cached = 0

    def free_all_free(self):
        self._cached = 0

    def n_free_blocks(self):
        return 0

    def set_limit(self, size=None, fraction=None):
        self._limit = int(size or (fraction or 0) * TOTAL_MEMORY)

    def get_limit(self):
        return self._limit

    def _alloc(self, a: np.ndarray, nbytes=None):
        key = id(a)
        known = self._roots.get(key)
        if known is not None and known[0]() is a:
            return
        nbytes = a.nbytes if nbytes is None else nbytes
        size = -(-nbytes // _UNIT) * _UNIT
        if size and (size > TOTAL_MEMORY or (self._limit and self._used + size > self._limit)):
            raise OutOfMemoryError(nbytes, self._used, self._limit)
        self._roots[key] = (weakref.ref(a, lambda r, key=key: self._freed(key, r)), size)
        self._used += size
        self._cached = max(0, self._cached - size)
        for h in HOOKS:
            h.malloc_postprocess(device_id=0, size=nbytes, mem_size=size, mem_ptr=key,
                                 pmem_id=key)

    def _freed(self, key, ref):
        known = self._roots.get(key)
        if known is None or known[0] is not ref:   # the id was reused by a newer allocation
            return
        del self._roots[key]
        size = known[1]
        self._used -= size
        self._cached += size
        for h in HOOKS or ():   # None when the interpreter is tearing the module down
            h.free_postprocess(device_id=0, mem_size=size, mem_ptr=key, pmem_id=key)


def reserved_bytes():
    return sum(p.total_bytes() for p in _POOLS)


POOL = MemoryPool()       # cupy.get_default_memory_pool()
PINNED_POOL = types.SimpleNamespace(free_all_blocks=lambda: None, n_free_blocks=lambda: 0)


# -- allocators ---------------------------------------------------------------------------------
def _malloc(size):
    """``cupy.cuda.memory._malloc``: cudaMalloc, no pool (what ``set_allocator(None)`` sets)."""
    return MemoryPointer(np.empty(int(size), np.uint8))


_global = [POOL.malloc, POOL]     # the allocator, and its pool when it is a pool's malloc
_scoped = [0]                     # using_allocator blocks open in any thread
_tls = threading.local()
_EXTERNAL: dict[int, object] = {}  # id(numpy buffer) -> what a user's allocator returned


def _pool_of(allocator):
    pool = getattr(allocator, "__self__", None)
    return pool if isinstance(pool, MemoryPool) else None


def get_allocator():
    if _scoped[0]:
        allocator = getattr(_tls, "allocator", None)
        if allocator is not None:
            return allocator
    return _global[0]


def set_allocator(allocator=None):
    if allocator is None:
        allocator = _malloc
    if getattr(_tls, "allocator", None) is not None:
        raise ValueError("Can't change the global allocator inside `using_allocator` context "
                         "manager")
    _global[:] = [allocator, _pool_of(allocator)]


@contextlib.contextmanager
def using_allocator(allocator=None):
    """``cupy.cuda.using_allocator``: ``allocator`` for new arrays of this thread, inside."""
    if allocator is None:
        allocator = _malloc
    previous = getattr(_tls, "allocator", None)
    _tls.allocator = allocator
    _scoped[0] += 1
    try:
        yield
    finally:
        _tls.allocator = previous
        _scoped[0] -= 1


def alloc(size):
    return get_allocator()(size)


def allocated(arr):
    """Book a new device array's memory with the allocator in effect (raising CuPy's error past
    a pool's limit); during a capture its contents are undefined until the graph runs."""
    if _scoped[0]:
        allocator = get_allocator()
        pool = _pool_of(allocator)
    else:
        allocator, pool = _global
    if pool is not None:
        pool._alloc(arr._a)
    elif allocator is not _malloc:   # a user's allocator hands out the memory: keep it alive
        a = arr._a
        _EXTERNAL[id(a)] = allocator(a.nbytes)
        weakref.finalize(a, _EXTERNAL.pop, id(a), None)


class MemoryHook:
    """Base of CuPy's memory hooks: ``with hook:`` (or ``__enter__``) installs it."""
    name = "MemoryHook"

    def __enter__(self):
        HOOKS.append(self)
        return self

    def __exit__(self, *exc):
        HOOKS.remove(self)

    def malloc_postprocess(self, **kw):
        pass

    def free_postprocess(self, **kw):
        pass


# -- pointers -------------------------------------------------------------------------------------
class MemoryPointer:
    """``ndarray.data`` or what ``malloc`` returns: ``ptr`` where the memory starts, ``mem``
    the allocation it is in. Copies are checked as CuPy checks them during a capture."""

    def __init__(self, a, base=None):
        self._owner = a   # as CuPy's pointer holds its memory: a copy through it stays valid
        self.ptr = a.__array_interface__["data"][0]
        self.device_id = 0
        root = a if base is None else base._a
        self.mem = types.SimpleNamespace(ptr=root.__array_interface__["data"][0],
                                         size=root.nbytes, device_id=0)

    def _copy_async(self, src, size, name, stream=None):
        if not size:
            return
        seq = _capture.recording(stream, CUDARuntimeError) if _capture.ACTIVE else None
        if seq is not None:
            seq.protect(self._owner)

            def run():
                ctypes.memmove(self.ptr, src.ptr, size)
            run()
            _capture.record_host(seq, name, run, [self._owner])
            return
        ctypes.memmove(self.ptr, src.ptr, size)

    def copy_from_device(self, src, size):
        _capture.refuse_transfer("synchronous API calls")
        self._copy_async(src, size, "memcpy")

    def copy_from_device_async(self, src, size, stream=None):
        self._copy_async(src, size, "memcpy", stream)

    def copy_from_host(self, mem, size):
        _capture.refuse_transfer("synchronous API calls")
        if size:
            ctypes.memmove(self.ptr, mem if isinstance(mem, int) else mem.value, size)

    def copy_from_host_async(self, mem, size, stream=None):
        _capture.refuse_transfer("H2D transfers", stream)
        if size:
            ctypes.memmove(self.ptr, mem if isinstance(mem, int) else mem.value, size)

    def copy_to_host(self, mem, size):
        _capture.refuse_transfer("synchronous API calls")
        if size:
            ctypes.memmove(mem if isinstance(mem, int) else mem.value, self.ptr, size)

    def copy_to_host_async(self, mem, size, stream=None):
        _capture.refuse_transfer("D2H transfers", stream)
        if size:
            ctypes.memmove(mem if isinstance(mem, int) else mem.value, self.ptr, size)
