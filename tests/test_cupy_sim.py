"""The simulated CuPy (tests/cupy_sim) enforces the rules it claims: each one a check that fails
if the simulation lets through what CuPy refuses, or refuses what CuPy takes.

These build the simulation without installing it, so they run in any session that has CuPy
importable (CI installs it for the kernel compile check); the GPU-marked halves of the suite
run against it when ``GPUGRAD_CUPY_SIM=1``.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

pytest.importorskip("cupy", reason="the simulation reads CuPy's API from the installed package")

import cupy_sim  # noqa: E402

cp = cupy_sim.module or cupy_sim._build()


def test_host_arrays_do_not_mix_with_device_arrays():
    a = cp.asarray(np.arange(3.0))
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
        a + np.ones(3)
    with pytest.raises(TypeError, match="Unsupported type"):
        np.ones(3) * a
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.exp(np.ones(3))
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.concatenate([a, np.ones(3)])
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    assert (a + np.float32(1)).tolist() == [1.0, 2.0, 3.0]      # numpy scalars are fine
    assert cp.asnumpy(a * 2).tolist() == [0.0, 2.0, 4.0]
    assert a[np.array([2, 0])].tolist() == [2.0, 0.0]            # host indices are copied over


def test_numpy_functions_dispatch_to_the_device_or_refuse():
    a = cp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
    s = np.sum(a, axis=0)
    assert isinstance(s, cp.ndarray) and s.tolist() == [4.0, 6.0]
    assert isinstance(np.exp(a), cp.ndarray)
    with pytest.raises(TypeError, match="no implementation found for 'numpy.busday_count'"):
        np.busday_count(a, a)


def test_results_are_device_arrays_never_numpy_scalars():
    a = cp.asarray(np.arange(4.0))
    for r in (a.sum(), a[1], cp.max(a), a.mean(), cp.linalg.norm(a)):
        assert isinstance(r, cp.ndarray) and r.ndim == 0
    assert type(a[1].item()) is float
    with pytest.raises(TypeError):
        range(cp.asarray(np.array(3)))    # CuPy arrays have no __index__
    assert [type(v) for v in a] == [cp.ndarray] * 4
    sign, logdet = cp.linalg.slogdet(cp.asarray(np.eye(2) * 2))
    assert type(cp.linalg.slogdet(cp.asarray(np.eye(2)))) is tuple and float(sign) == 1.0


def test_names_and_keywords_cupy_lacks_fail():
    a = cp.asarray(np.arange(4.0))
    with pytest.raises(TypeError, match=re.escape("cupy.sum() got an unexpected keyword "
                                                  "argument 'initial'")):
        cp.sum(a, initial=1.0)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'where'"):
        a.sum(where=a > 1)
    assert not hasattr(cp, "errstate") and not hasattr(a, "itemset")
    rng = cp.random.default_rng(0)
    assert rng.standard_normal((2,), dtype=np.float32).dtype == np.float32
    for missing in ("normal", "permutation", "choice", "multinomial"):
        assert not hasattr(rng, missing)


def test_out_of_bounds_integer_indices_wrap_as_in_cupy():
    a = cp.asarray(np.arange(5.0))
    assert a[np.array([5, -6, 7])].tolist() == [0.0, 4.0, 2.0]
    assert a.take(cp.asarray(np.array([6])), axis=0).tolist() == [1.0]
    b = cp.asarray(np.zeros((2, 3)))
    b[cp.asarray(np.array([0, 1])), cp.asarray(np.array([3, 4]))] = 1.0
    assert b.tolist() == [[1.0, 0, 0], [0, 1.0, 0]]
    with pytest.raises(IndexError):
        a[7]     # a plain integer index still raises


def test_views_write_through_and_keep_their_base():
    a = cp.asarray(np.zeros(1))
    v = cp.broadcast_to(a[0], (1,))      # numpy would make this read-only
    v += 3
    assert a.tolist() == [3.0]
    w = a.reshape(1, 1)
    assert w.base is a and a.base is None and cp.add(a, 1, out=a) is a


def test_memory_pool_counts_live_arrays_and_refuses_past_its_limit():
    pool = cp.get_default_memory_pool()
    before = pool.used_bytes()
    a = cp.zeros(1000)
    assert pool.used_bytes() == before + 8192      # 8000 bytes in 512-byte blocks
    del a
    assert pool.used_bytes() == before and pool.total_bytes() >= before + 8192
    pool.set_limit(size=before + 4096)
    try:
        with pytest.raises(MemoryError, match=r"Out of memory allocating 8,000 bytes"):
            cp.zeros(1000)
    finally:
        pool.set_limit(size=0)


def test_the_simulated_device_answers_cuda_queries():
    assert cp.cuda.runtime.getDeviceCount() == 1
    with cp.cuda.Device(0) as d:
        assert d.id == 0
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="invalid device ordinal"):
        cp.cuda.Device(1)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    end.record()
    assert cp.cuda.get_elapsed_time(start, end) >= 0.0


def test_memory_pools_book_their_own_bytes():
    pool, default = cp.cuda.MemoryPool(), cp.get_default_memory_pool()
    before = default.used_bytes()
    assert cp.cuda.get_allocator().__self__ is default
    with cp.cuda.using_allocator(pool.malloc):
        assert cp.cuda.get_allocator().__self__ is pool
        a = cp.zeros(1000)                      # 8000 bytes in 512-byte units
        with pytest.raises(ValueError, match="Can't change the global allocator inside "
                                             "`using_allocator` context manager"):
            cp.cuda.set_allocator(pool.malloc)
    assert pool.used_bytes() == 8192 and default.used_bytes() == before
    b = a + 1                                   # outside: the default pool
    assert pool.used_bytes() == 8192 and default.used_bytes() == before + 8192
    del a, b
    assert pool.used_bytes() == 0 and pool.total_bytes() == 8192 and pool.free_bytes() == 8192
    pool.free_all_blocks()
    assert pool.total_bytes() == 0 and default.used_bytes() == before
    ptr = pool.malloc(100)
    assert pool.used_bytes() == 512 and ptr.ptr
    del ptr
    assert pool.used_bytes() == 0
    with cp.cuda.using_allocator():              # no pool: raw allocations
        c = cp.ones(10)
    assert pool.used_bytes() == 0 and default.used_bytes() == before
    del c
