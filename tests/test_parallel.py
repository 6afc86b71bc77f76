"""The CPU's intra-op threads: one setting for elementwise work and the BLAS; results that do
not depend on the thread count; small arrays on the path they always took. Thread counts here
are chosen freely (threads need not be cores), so the tests do not depend on the machine."""
import functools
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

import gpugrad
from gpugrad import _parallel, kernels
from gpugrad.autograd import fusion

SMALL_MIN = 4 * 1024      # thresholds lowered so that small arrays exercise the split
SMALL_BLOCK = 1024
N = 10 * SMALL_BLOCK + 37   # blocks that do not divide it, and a ragged last one
# the generated forward of an op and the kernels' dispatch hold the real threshold as a
# constant: the tests of those use it
FORWARD_N = _parallel.MIN_ELEMENTS + 37


@pytest.fixture
def split_small(monkeypatch):
    """Split from SMALL_MIN elements in blocks of SMALL_BLOCK; restore the thread count."""
    monkeypatch.setattr(_parallel, "MIN_ELEMENTS", SMALL_MIN)
    monkeypatch.setattr(_parallel, "BLOCK", SMALL_BLOCK)
    monkeypatch.setattr(fusion, "CPU_MIN_ELEMENTS", SMALL_MIN)
    monkeypatch.setattr(fusion, "CPU_COMPILED_MIN_ELEMENTS", SMALL_MIN)
    saved = gpugrad.get_num_threads()
    yield
    gpugrad.set_num_threads(saved)


def data(dtype=np.float32, n=N, seed=0):
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def step(x0, threads, mode="auto"):
    """(tanh(x) * sigmoid(x) + relu(x)).sum() and x's gradient, on ``threads`` threads."""
    gpugrad.set_num_threads(threads)
    x = gpugrad.tensor(x0, requires_grad=True)
    y = gpugrad.tanh(x) * gpugrad.sigmoid(x) + gpugrad.relu(x) * 0.5 - x / 3
    with fusion.using(mode):
        y.sum().backward()
    return y.detach().numpy().copy(), x.grad.numpy().copy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mode", ["auto", "off", "always"])
def test_results_are_the_same_bits_whatever_the_thread_count(split_small, dtype, mode):
    x0 = data(dtype, FORWARD_N)
    ref = step(x0, 1, mode)
    for threads in (2, 3, 7):
        for a, b in zip(ref, step(x0, threads, mode)):
            assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("threads", [1, 3])
def test_split_ops_give_numpys_bits(split_small, threads, monkeypatch):
    """A split op computes every element as numpy's whole call does (sigmoid: with the compiled
    CPU kernels off, its numpy reference; with them, the compiled loop's bits, which the test
    above holds to one result whatever the thread count)."""
    from gpugrad import _cpu_kernels
    monkeypatch.setattr(_cpu_kernels, "_enabled", False)
    gpugrad.set_num_threads(threads)
    x0, y0 = data(n=FORWARD_N), data(n=FORWARD_N, seed=1)
    x, y = gpugrad.tensor(x0), gpugrad.tensor(y0)
    for got, want in [(gpugrad.tanh(x), np.tanh(x0)), (gpugrad.exp(x), np.exp(x0)),
                      (x * y, x0 * y0), (x + 1.5, x0 + np.float32(1.5)), (x - y, x0 - y0),
                      (x / y, x0 / y0), (-x, -x0), (gpugrad.relu(x), np.maximum(x0, 0)),
                      (gpugrad.sigmoid(x), kernels.sigmoid.kernel.ref(np, x0))]:
        assert got.dtype == gpugrad.float32
        assert np.array_equal(got.numpy(), want)


def test_large_forwards_reach_the_splitter(split_small, monkeypatch):
    """(sigmoid's through its kernel's dispatch, once: its op does not split it again)"""
    from gpugrad import _cpu_kernels
    monkeypatch.setattr(_cpu_kernels, "_enabled", False)
    calls = []
    split = _parallel.elementwise
    monkeypatch.setattr(_parallel, "elementwise", lambda *a, **k: calls.append(1) or split(
        *a, **k))
    gpugrad.set_num_threads(2)
    x = gpugrad.tensor(data(n=FORWARD_N), requires_grad=True)
    for f in (gpugrad.tanh, gpugrad.sigmoid, gpugrad.relu, lambda t: t * 2, lambda t: t + t):
        calls.clear()
        f(x)
        assert len(calls) == 1, f


def test_pointwise_kernels_split_and_match_their_reference(split_small, monkeypatch):
    """(their numpy references: the compiled loops, tests/test_cpu_kernels.py, thread
    themselves)"""
    from gpugrad import _cpu_kernels
    monkeypatch.setattr(_cpu_kernels, "_enabled", False)
    calls = []
    split = _parallel.elementwise
    monkeypatch.setattr(_parallel, "elementwise", lambda *a, **k: calls.append(1) or split(
        *a, **k))
    gpugrad.set_num_threads(4)
    x0, g0 = data(n=FORWARD_N), data(n=FORWARD_N, seed=1)
    for name, args in [("sigmoid_bwd", (x0, g0)), ("tanh_bwd", (x0, g0)),
                       ("relu_bwd", (x0, g0)), ("silu_bwd", (x0, g0)),
                       ("mul_bwd", (x0, g0, g0 * 3)), ("div_bwd", (x0, g0 + 4, g0))]:
        k = kernels.REGISTRY[name]
        assert k.pointwise
        got, want = getattr(kernels, name)(*args), k.ref(np, *args)
        for a, b in zip(*((got, want) if isinstance(got, tuple) else ((got,), (want,)))):
            assert np.array_equal(a, b)
    assert len(calls) == 6
    assert not kernels.REGISTRY["log_softmax"].pointwise   # rows: never split by elements


def test_the_split_runs_on_several_threads(split_small):
    import threading
    gpugrad.set_num_threads(3)
    seen = set()

    def record(x):
        seen.add(threading.get_ident())
        return x * 2
    out = _parallel.elementwise(record, (data(),))
    assert np.array_equal(out, data() * 2) and len(seen) > 1


def test_what_does_not_fit_is_left_whole(split_small):
    gpugrad.set_num_threads(2)
    x = data()
    split = functools.partial(_parallel.elementwise, np.add)
    assert split((x[:SMALL_MIN - 1], 1.0)) is None               # small
    assert split((x[::2][:SMALL_MIN * 2 // 3], 1.0)) is None     # strided
    assert split((x, x[:1])) is None                             # broadcast
    assert _parallel.elementwise(lambda a: a.sum(), (x,)) is None   # not elementwise
    gpugrad.set_num_threads(1)
    assert split((x, 1.0)) is None                               # one thread: as before
    assert _parallel.elementwise(np.negative, (x,), alone=True) is not None


def test_one_value_expanded_is_split_as_that_value(split_small):
    """The gradient of a sum is one value expanded to the input's shape (all strides 0): the
    formulas it feeds still split, reading it as the value, with the whole call's bits."""
    gpugrad.set_num_threads(3)
    x, y = data(), data(seed=1)
    g = np.broadcast_to(np.float32(0.75), x.shape)
    got = _parallel.elementwise(np.multiply, (x, g))
    assert got is not None and np.array_equal(got, x * g)
    assert _parallel.elementwise(np.add, (g, g)) is None   # no array to split
    assert _parallel.elementwise(np.add, (x, np.broadcast_to(y[:1], x.shape))) is not None
    wider = np.broadcast_to(np.float32(1), (2,) + x.shape)   # would broadcast the result
    assert _parallel.elementwise(np.add, (x, wider)) is None


def test_gradients_summed_into_one_input_split_with_the_same_bits(split_small):
    """An input read by several ops sums their gradients in the engine: on threads when large,
    the same bits as one add."""
    from gpugrad.autograd import engine
    a, b = data(), data(seed=2)
    gpugrad.set_num_threads(1)
    want = a + b
    gpugrad.set_num_threads(3)
    got = engine._add(a, b)
    assert np.array_equal(got, want) and got is not a and got is not b


def test_blocks_unlike_the_first_leave_it_whole(split_small):
    """A formula whose blocks differ by thread (thread-local state) is never cast together."""
    import threading
    gpugrad.set_num_threads(3)
    main = threading.get_ident()

    def by_thread(x):
        return x * 2 if threading.get_ident() == main else (x * 2).astype(np.float64)
    assert _parallel.elementwise(by_thread, (data(),)) is None


def test_small_tensors_never_reach_the_splitter(monkeypatch):
    def fail(*a, **k):
        raise AssertionError("split")
    monkeypatch.setattr(_parallel, "elementwise", fail)
    x = gpugrad.randn(1000, requires_grad=True)
    (gpugrad.tanh(x) * gpugrad.sigmoid(x) + gpugrad.relu(x)).sum().backward()
    assert x.grad.shape == (1000,)


def test_an_error_inside_a_split_op_is_the_ops_own(split_small):
    gpugrad.set_num_threads(2)
    with pytest.raises(RuntimeError, match="must match the size"):
        gpugrad.tensor(data(n=FORWARD_N)) + gpugrad.tensor(data(n=FORWARD_N + 1))


def test_fused_cpu_backward_matches_unfused(split_small):
    x0 = data(np.float64)
    fusion.reset_stats()
    _, fused = step(x0, 2, "auto")
    assert fusion.stats["regions"] >= 1   # large: fused on the CPU in auto mode
    _, unfused = step(x0, 2, "off")
    np.testing.assert_allclose(fused, unfused, rtol=1e-13, atol=1e-15)
    fusion.reset_stats()
    step(data(n=SMALL_MIN - 1), 2, "auto")
    assert fusion.stats["regions"] == 0   # small: unfused in auto mode


def test_sum_is_the_same_run_to_run_and_across_thread_counts(split_small):
    x0 = data(n=200_003)
    sums = set()
    for threads in (1, 2, 5, 1):
        gpugrad.set_num_threads(threads)
        sums.add(gpugrad.tensor(x0).sum().item())
    assert len(sums) == 1


def test_set_num_threads_sets_the_blas_too():
    pytest.importorskip("threadpoolctl")
    if _parallel.blas_threads() is None:
        pytest.skip("threadpoolctl sees no BLAS")
    saved = gpugrad.get_num_threads()
    try:
        gpugrad.set_num_threads(1)
        assert _parallel.blas_threads() == 1 and gpugrad.get_num_threads() == 1
    finally:
        gpugrad.set_num_threads(saved)


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)
    return out.stdout.strip()


def test_omp_num_threads_is_honoured():
    code = "import gpugrad; print(gpugrad.get_num_threads(), gpugrad.get_num_interop_threads())"
    assert _run(code, OMP_NUM_THREADS="3") == "3 3"


def test_gpugrad_runs_without_threadpoolctl():
    code = ("import sys; sys.modules['threadpoolctl'] = None\n"
            "import numpy as np, gpugrad\n"
            "gpugrad.set_num_threads(2)\n"
            "from gpugrad import _parallel\n"
            "_parallel.MIN_ELEMENTS = _parallel.BLOCK\n"
            "x = np.arange(5 * _parallel.BLOCK, dtype=np.float32)\n"
            "assert np.array_equal(gpugrad.tanh(gpugrad.tensor(x)).numpy(), np.tanh(x))\n"
            "print(gpugrad.get_num_threads(), _parallel.blas_threads())")
    assert _run(code) == "2 None"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_splits_on_its_own_pool(split_small):
    gpugrad.set_num_threads(2)
    x = data()
    assert _parallel.elementwise(np.negative, (x,)) is not None   # the parent's pool exists
    pid = os.fork()
    if pid == 0:   # child: a split must finish (the parent's pool threads are not here)
        signal.alarm(30)   # a hung split ends the child with SIGALRM: a failure, not a hang
        ok = np.array_equal(_parallel.elementwise(np.negative, (x,)), -x)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def test_bench_threads_sets_gpugrads_threads():
    from gpugrad.bench import set_threads
    saved = gpugrad.get_num_threads()
    try:
        set_threads(2)
        assert gpugrad.get_num_threads() == 2
    finally:
        gpugrad.set_num_threads(saved)
