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


# -- stream capture --------------------------------------------------------------------------------
# Messages and error types follow CuPy's source: cupy/cuda/stream.pyx (begin_capture),
# cupy_backends/cuda/api/runtime.pyx (CUDARuntimeError's '<name>: <description>',
# streamIsCapturing), cupy/cuda/memory.pyx (the transfer checks), cupy_backends/cuda/libs/
# {cublas,curand,cusolver}.pyx (setStream), cupy/cuda/graph.pyx; CUDA's error strings for the
# codes. Each test ends its captures: an open one would change every later test.
Runtime = cp.cuda.runtime.CUDARuntimeError
Driver = cp.cuda.driver.CUDADriverError
INVALIDATED = "the stream was capturing, but an error has invalidated the capture sequence"


def _dev(values, dtype=float):
    return cp.asarray(np.array(values, dtype))


@pytest.fixture
def stream():
    s = cp.cuda.Stream(non_blocking=True)
    yield s
    cupy_sim.abandon_captures()


def _capture(s, fn):
    with s:
        s.begin_capture()
        try:
            fn()
        finally:
            graph = s.end_capture()
    return graph


def test_capture_records_work_and_launch_replays_it_on_current_contents(stream):
    x = _dev([0.0, 1.0, 2.0])
    out = {}

    def work():
        y = x * 2 + 1
        out["z"] = cp.exp(y)
    g = _capture(stream, work)
    assert isinstance(g, cp.cuda.graph.Graph) and cp.cuda.Graph is cp.cuda.graph.Graph
    z = out["z"]
    assert np.isnan(z._a).all()                 # captured work has not run yet
    x += 1                                      # outside the capture: runs now
    g.launch()
    np.testing.assert_allclose(z._a, np.exp(np.array([1.0, 2.0, 3.0]) * 2 + 1))
    x[...] = 0.0
    g.launch(stream=stream)
    np.testing.assert_allclose(z._a, np.exp([1.0, 1.0, 1.0]))
    assert g.debug_dot_str().count("->") == 2    # multiply, add, exp: three steps in a row


def test_captured_in_place_work_runs_at_each_launch_not_at_capture(stream):
    a = _dev([1.0, 2.0])
    g = _capture(stream, lambda: a.__iadd__(1))
    assert a.tolist() == [1.0, 2.0]
    for _ in range(3):
        g.launch()
    assert a.tolist() == [4.0, 5.0]


def test_memory_written_during_capture_gets_its_pre_capture_contents_back(stream):
    a, b, c = _dev([1.0, 2.0, 3.0]), _dev([0, 0, 0], np.int64), _dev([5.0, 5.0])
    before = (a.tolist(), b.tolist(), c.tolist())

    def work():
        a[1] = 9.0                              # setitem
        cp.add(a, 1, out=a)                     # out=
        b.scatter_add(cp.asarray(np.array([0, 0])), 1)   # refused: a host index...
    with stream:
        stream.begin_capture()
        a[1] = 9.0
        cp.add(a, 1, out=a)
        c[:1] *= 2                              # through a view
        cp.copyto(b, b + 7)
        b.fill(3)
        fresh_int = b * 2
        fresh_bool = b > 0
        g = stream.end_capture()
    assert (a.tolist(), b.tolist(), c.tolist()) == before
    assert fresh_int._a.view(np.uint8).tolist() == [0x5A] * 24    # undefined: a pattern
    assert fresh_bool._a.view(np.uint8).tolist() == [0x5A] * 3
    g.launch()
    assert a.tolist() == [2.0, 10.0, 4.0] and c.tolist() == [10.0, 5.0]
    assert b.tolist() == [3, 3, 3] and fresh_int.tolist() == [6, 6, 6]
    assert work is not None


def test_views_record_nothing_and_python_scalars_are_baked_in(stream):
    x = _dev([[1.0, 2.0], [3.0, 4.0]])
    scale = 3.0
    out = {}

    def work():
        v = x.reshape(4)[1:]                    # views: no device work
        out["t"] = x.T[0]
        out["y"] = v * scale
        out["w"] = cp.lib.stride_tricks.as_strided(x, (2,), (8,))
    g = _capture(stream, work)
    assert g.debug_dot_str().count("[label=") == 1
    scale = 100.0
    g.launch()
    assert out["y"].tolist() == [6.0, 9.0, 12.0] and out["t"].tolist() == [1.0, 3.0]


def test_the_null_stream_cannot_capture_and_a_capture_cannot_begin_twice(stream):
    for null in (cp.cuda.Stream.null, cp.cuda.Stream(null=True)):
        with pytest.raises(RuntimeError, match=re.escape(
                "cannot capture on the default (legacy) stream")):
            null.begin_capture()
    assert not cp.cuda.Stream.null.is_capturing()
    stream.begin_capture()
    with pytest.raises(Runtime, match=re.escape("cudaErrorIllegalState: the operation cannot "
                                                "be performed in the present state")):
        stream.begin_capture()
    with pytest.raises(RuntimeError, match=re.escape(INVALIDATED)):
        stream.is_capturing()
    with pytest.raises(Runtime) as e:
        stream.end_capture()
    assert e.value.status == 901 and str(e.value) == (
        "cudaErrorStreamCaptureInvalidated: operation failed due to a previous error during "
        "capture")
    assert stream.is_capturing() is False
    with pytest.raises(Runtime, match="cudaErrorIllegalState"):
        stream.end_capture()                    # not capturing


def test_stream_capture_api_and_runtime_constants():
    rt = cp.cuda.runtime
    assert (rt.streamCaptureModeGlobal, rt.streamCaptureModeThreadLocal,
            rt.streamCaptureModeRelaxed) == (0, 1, 2)
    assert (rt.streamCaptureStatusNone, rt.streamCaptureStatusActive,
            rt.streamCaptureStatusInvalidated) == (0, 1, 2)
    s, t = cp.cuda.Stream(non_blocking=True), cp.cuda.Stream()
    assert s.is_non_blocking and not t.is_non_blocking and not cp.cuda.Stream.null.is_non_blocking
    s.begin_capture(mode=rt.streamCaptureModeThreadLocal)
    assert rt.streamIsCapturing(s.ptr) and not rt.streamIsCapturing(t.ptr)
    g = s.end_capture()
    g.upload()
    g.launch()                                  # an empty graph
    with pytest.raises(NotImplementedError, match="must be created via stream capture"):
        cp.cuda.graph.Graph()


_H2D = "the current stream is capturing, so H2D transfers are disallowed"
_D2H = "the current stream is capturing, so D2H transfers are disallowed"


def test_transfers_and_data_dependent_shapes_are_refused_without_invalidating(stream):
    x, mask = _dev([1.0, -2.0, 3.0]), _dev([True, False, True], bool)
    one = _dev([2.5])
    refused = {
        _D2H: [x.get, lambda: cp.asnumpy(x), one.item, x.tolist, lambda: float(one),
               lambda: int(one), lambda: bool(one), lambda: complex(one), lambda: repr(x),
               lambda: str(x), lambda: f"{one[0]:.2f}", lambda: x[mask],
               lambda: x.__setitem__(mask, 0.0), lambda: cp.nonzero(x), x.nonzero,
               lambda: cp.argwhere(x), lambda: cp.flatnonzero(x), lambda: cp.where(mask),
               lambda: cp.unique(x), lambda: cp.bincount(cp.asarray(x > 0) * 1)],
        _H2D: [lambda: cp.asarray(np.ones(2)), lambda: cp.array([1.0, 2.0]),
               lambda: cp.asarray(3.0), lambda: x.set(np.zeros(3)),
               lambda: x[np.array([0, 1])], lambda: x[[0, 1]],
               lambda: x.__setitem__(slice(None), np.zeros(3))],
    }
    with stream:
        stream.begin_capture()
        for message, calls in refused.items():
            for call in calls:
                with pytest.raises(RuntimeError, match=re.escape(message)):
                    call()
                assert stream.is_capturing()     # CuPy refuses before CUDA: capture goes on
        ok = cp.where(mask, x, 0.0)             # three arguments: no count to read
        empty = cp.nonzero(x[:0])               # nothing to count: no copy
        g = stream.end_capture()
    assert empty[0].shape == (0,)
    g.launch()
    assert ok.tolist() == [1.0, 0.0, 3.0]
    assert x.get().tolist() == [1.0, -2.0, 3.0]  # after the capture: allowed again


@pytest.mark.parametrize("sync", ["stream", "device", "runtime", "event"])
def test_synchronizing_invalidates_the_capture(stream, sync):
    x = _dev([1.0, 2.0])
    with stream:
        stream.begin_capture()
        y = x + 1
        event = stream.record()
        calls = {"stream": stream.synchronize, "device": cp.cuda.Device().synchronize,
                 "runtime": cp.cuda.runtime.deviceSynchronize, "event": event.synchronize}
        with pytest.raises(Runtime) as e:
            calls[sync]()
        assert str(e.value) == {
            "event": "cudaErrorCapturedEvent: operation not permitted on an event last "
                     "recorded in a capturing stream"}.get(
            sync, "cudaErrorStreamCaptureUnsupported: operation not permitted when stream "
                  "is capturing")
        with pytest.raises(RuntimeError, match=re.escape(INVALIDATED)):
            stream.is_capturing()
        with pytest.raises(RuntimeError, match=re.escape(INVALIDATED)):
            x.get()                             # CuPy's check asks streamIsCapturing first
        with pytest.raises(Driver, match="CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: operation "
                                         "failed due to a previous error during capture"):
            x * 2                               # a kernel launch on the invalidated stream
        with pytest.raises(Runtime, match="cudaErrorStreamCaptureInvalidated"):
            stream.end_capture()
        assert not stream.is_capturing()
        assert np.isnan(y._a).all()
        assert (x * 2).tolist() == [2.0, 4.0]   # the stream works again
        g = _capture(stream, lambda: x.__imul__(3))
    g.launch()
    assert x.tolist() == [3.0, 6.0]


def test_libraries_are_refused_as_cupy_refuses_them(stream):
    f, i = _dev([[1.0, 2.0], [3.0, 4.0]]), _dev([[1, 2], [3, 4]], np.int64)
    v = _dev([1.0, 2.0])
    blas = "calling cuBLAS API during stream capture is currently unsupported"
    solver = "calling cuSOLVER API during stream capture is currently unsupported"
    rand = "calling cuRAND API during stream capture is currently unsupported"
    refused = {
        blas: [lambda: cp.matmul(f, f), lambda: f @ f, lambda: f.dot(f), lambda: cp.dot(f, v),
               lambda: cp.tensordot(f, f, 1), lambda: cp.einsum("ij,jk->ik", f, f),
               lambda: cp.inner(f, f), lambda: cp.linalg.inv(cp.stack([f, f])),
               lambda: cp.linalg.det(f), lambda: cp.matmul(f.astype(np.float16), f)],
        solver: [lambda: cp.linalg.inv(f), lambda: cp.linalg.solve(f, v),
                 lambda: cp.linalg.svd(f), lambda: cp.linalg.eigh(f),
                 lambda: cp.linalg.cholesky(f), lambda: cp.linalg.norm(f, 2),
                 lambda: cp.linalg.det(cp.zeros((300, 300)))],
        rand: [lambda: cp.random.normal(size=3), lambda: cp.random.rand(2),
               lambda: cp.random.uniform(size=2), lambda: cp.random.randint(0, 5, 2)],
    }
    out = {}
    with stream:
        stream.begin_capture()
        for message, calls in refused.items():
            for call in calls:
                with pytest.raises(NotImplementedError, match=re.escape(message)):
                    call()
        out["int"] = i @ i                      # integers: CuPy's own kernel
        out["vec"] = cp.dot(v, v)               # 1x1: a reduction kernel
        out["outer"] = cp.einsum("i,j->ij", v, v)    # no contraction: a product
        out["norm"] = cp.linalg.norm(v)
        out["full"] = cp.tensordot(f, f)        # everything contracted: 1x1, a reduction
        assert stream.is_capturing()
        g = stream.end_capture()
    g.launch()
    assert out["int"].tolist() == [[7, 10], [15, 22]] and float(out["vec"]) == 5.0
    assert out["outer"].tolist() == [[1.0, 2.0], [2.0, 4.0]]
    assert float(out["norm"]) == pytest.approx(5 ** 0.5) and float(out["full"]) == 30.0


def test_random_draws_in_a_capture_follow_cupy(stream):
    rng = cp.random.default_rng(0)
    reference = np.random.default_rng(0)
    out = {}

    def work():
        out["fresh"] = rng.standard_normal(3)               # state on the device
        out["seeded"] = cp.random.beta(2.0, 3.0, size=3)    # seeded on the host at the call
    g = _capture(stream, work)
    g.launch()
    first, seeded = out["fresh"].tolist(), out["seeded"].tolist()
    assert first == reference.standard_normal(3).tolist()   # the capture drew nothing
    g.launch()
    assert out["fresh"].tolist() == reference.standard_normal(3).tolist() != first
    assert out["seeded"].tolist() == seeded


def test_blocking_capture_refuses_the_legacy_stream_and_is_invalidated():
    x = _dev([1.0])
    blocking = cp.cuda.Stream()
    blocking.begin_capture()
    try:
        with pytest.raises(Driver) as e:
            x + 1                               # on the null stream: would wait for it
        assert str(e.value) == ("CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: operation would make "
                                "the legacy stream depend on a capturing blocking stream")
        with pytest.raises(RuntimeError, match=re.escape(INVALIDATED)):
            blocking.is_capturing()
        with pytest.raises(Runtime, match="cudaErrorStreamCaptureImplicit"):
            x.get()                             # streamIsCapturing(null stream)
    finally:
        with pytest.raises(Runtime, match="cudaErrorStreamCaptureInvalidated"):
            blocking.end_capture()
    assert (x + 1).tolist() == [2.0]
    free = cp.cuda.Stream(non_blocking=True)
    free.begin_capture()
    y = x + 1                                   # not on the capturing stream: runs now
    graph = free.end_capture()
    assert y.tolist() == [2.0] and graph.debug_dot_str().count("[label=") == 0


def test_forked_streams_must_join_before_the_capture_ends(stream):
    side = cp.cuda.Stream(non_blocking=True)
    x = _dev([1.0, 2.0])
    out = {}
    with stream:
        stream.begin_capture()
        side.wait_event(stream.record())        # fork: side joins the capture
        assert side.is_capturing()
        with side:
            out["y"] = x * 10
        stream.wait_event(side.record())        # join
        out["z"] = out["y"] + 1
        g = stream.end_capture()
    assert not side.is_capturing()
    g.launch()
    assert out["z"].tolist() == [11.0, 21.0]
    with stream:
        stream.begin_capture()
        side.wait_event(stream.record())
        with side:
            x * 2
        with pytest.raises(Runtime, match=re.escape(
                "cudaErrorStreamCaptureUnjoined: capturing stream has unjoined work")):
            stream.end_capture()
    assert not side.is_capturing() and not stream.is_capturing()
    outside = cp.cuda.Event()
    outside.record(side)                        # recorded outside any capture
    stream.begin_capture()
    with pytest.raises(Runtime, match="cudaErrorStreamCaptureIsolation: dependency created "
                                      "on uncaptured work in another stream"):
        stream.wait_event(outside)
    with pytest.raises(Runtime, match="cudaErrorStreamCaptureInvalidated"):
        stream.end_capture()


def test_a_graph_launched_during_a_capture_is_one_step(stream):
    a = _dev([0.0])
    inner = _capture(stream, lambda: a.__iadd__(1))
    outer = _capture(stream, lambda: (inner.launch(), inner.launch()))
    assert a.tolist() == [0.0] and outer.debug_dot_str().count("[label=") == 2
    outer.launch()
    assert a.tolist() == [2.0]


def test_the_current_stream_is_per_thread(stream):
    import threading
    seen = {}

    def other():
        seen["other"] = cp.cuda.get_current_stream()
    with stream:
        assert cp.cuda.get_current_stream() is stream
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen["other"] is cp.cuda.Stream.null
    assert cp.cuda.get_current_stream() is cp.cuda.Stream.null
    x = _dev([1.0])
    stream.begin_capture()
    with stream:
        t = threading.Thread(target=lambda: seen.update(y=x + 1))   # its stream is null
        t.start()
        t.join()
        g = stream.end_capture()
    assert seen["y"].tolist() == [2.0] and g.debug_dot_str().count("[label=") == 0


def test_a_kernel_launch_is_one_step_whatever_its_reference_calls(stream, monkeypatch):
    import sys

    from gpugrad import _backend, _cuda_kernels, kernels
    from gpugrad.autograd import fusion
    for owner, name in ((_backend, "_cupy"), (_backend, "_cupy_error"),
                        (_backend, "cupy_submodule"), (_cuda_kernels, "launch"),
                        (_cuda_kernels, "launch_multi"), (fusion.Plan, "_launch")):
        monkeypatch.setattr(owner, name, getattr(owner, name))   # put back after the test
    for name in cp._submodules:
        monkeypatch.setitem(sys.modules, name, sys.modules.get(name))
    cupy_sim.install()

    def project(xp, a, b):
        """y = a @ b + 1"""
        return xp.matmul(a, b) + 1
    kernel = kernels.Kernel(project, "project.cu", outputs=1, inplace=())
    a, b = _dev([[1.0, 2.0], [3.0, 4.0]]), _dev([[1.0], [1.0]])
    out = {}
    with stream:
        stream.begin_capture()
        with pytest.raises(NotImplementedError, match="cuBLAS"):
            cp.matmul(a, b)                     # CuPy's own call: refused
        out["y"] = _cuda_kernels.launch(kernel, (a, b))
        out["s"] = kernels.sigmoid(a)
        g = stream.end_capture()
    assert g.debug_dot_str().count("[label=") == 2
    b[...] = 2.0
    g.launch()
    assert out["y"].tolist() == [[7.0], [15.0]]
    np.testing.assert_allclose(out["s"]._a, 1 / (1 + np.exp(-a._a)))


def test_every_kind_of_device_op_is_replayed(stream):
    x = _dev([0.5, -1.0, 2.0])
    idx = _dev([2, 0], np.int64)
    special = cp._submodules["cupyx.scipy.special"]
    acc, calls = _dev([0.0, 0.0, 0.0]), []
    out = {}

    def work():
        out["reduce"] = cp.add.reduce(x)
        out["accumulate"] = cp.multiply.accumulate(x)
        out["outer"] = cp.subtract.outer(x, x)
        out["erf"] = special.erf(x)
        out["norm"] = cp.linalg.norm(x)
        out["astype"] = x.astype(np.float32)
        out["copy"] = x.copy()
        out["take"] = x[idx]                   # advanced indexing: a copy
        out["sorted"] = cp.sort(x)
        cp.add.at(acc, idx, x[:2])
        acc.scatter_max(idx, 1.0)
        stream.launch_host_func(calls.append, "host")
    g = _capture(stream, work)
    assert acc.tolist() == [0.0, 0.0, 0.0] and calls == []
    x[...] = _dev([1.0, 2.0, 3.0])
    g.launch()
    v = np.array([1.0, 2.0, 3.0])
    assert float(out["reduce"]) == 6.0 and out["accumulate"].tolist() == [1.0, 2.0, 6.0]
    assert out["outer"].tolist() == (v[:, None] - v[None, :]).tolist()
    np.testing.assert_allclose(out["erf"]._a, [0.8427007929, 0.995322265, 0.9999779095])
    assert float(out["norm"]) == pytest.approx(14 ** 0.5)
    assert out["astype"].dtype == np.float32 and out["astype"].tolist() == [1.0, 2.0, 3.0]
    assert out["copy"].tolist() == [1.0, 2.0, 3.0] and out["take"].tolist() == [3.0, 1.0]
    assert out["sorted"].tolist() == [1.0, 2.0, 3.0]
    assert acc.tolist() == [2.0, 0.0, 1.0] and calls == ["host"]
