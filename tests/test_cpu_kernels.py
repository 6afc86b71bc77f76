"""The compiled CPU kernels (gpugrad/_cpu_kernels): each loop against its numpy reference, the
float32 exp/tanh/sigmoid against float64, results that do not depend on the thread count, the
fallbacks (no numba, other dtypes, layouts a loop does not take), and the on-disk cache of
compiled backward regions."""
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import gpugrad  # noqa: E402
from gpugrad import _cpu_kernels, _parallel, kernels  # noqa: E402
from gpugrad._cpu_kernels import _math, region  # noqa: E402
from gpugrad.autograd import _trace, fusion  # noqa: E402

F32 = np.float32
rng = np.random.default_rng(0)


def normal(*shape, scale=1.0, seed=None):
    r = rng if seed is None else np.random.default_rng(seed)
    return (r.standard_normal(shape) * scale).astype(F32)


def ref(name, *args):
    return kernels.REGISTRY[name].ref(np, *args)


@pytest.fixture
def threads():
    saved = gpugrad.get_num_threads()
    yield gpugrad.set_num_threads
    gpugrad.set_num_threads(saved)


# -- the float32 functions ---------------------------------------------------------------------
def _loop(fn):
    from numba import njit

    @njit(error_model="numpy", **_math.APPROXIMATE)
    def run(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])
    return run


SWEEP = np.concatenate([np.linspace(-100, 100, 400_001), np.linspace(-1, 1, 200_001),
                        np.geomspace(1e-30, 1, 50_000), -np.geomspace(1e-30, 1, 50_000),
                        np.linspace(-0.7, 0.7, 100_001)]).astype(F32)
EXACT = {"exp": np.exp, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x))}


@pytest.mark.parametrize("name, ulps", [("exp", 1.1), ("tanh", 2.0), ("sigmoid", 3.0)])
def test_float32_functions_are_within_a_few_ulp_of_the_exact_values(name, ulps):
    out = np.empty_like(SWEEP)
    _loop(getattr(_math, name))(SWEEP, out)
    with np.errstate(over="ignore"):
        exact = EXACT[name](SWEEP.astype(np.float64))
    normal_range = (np.abs(exact) >= np.finfo(F32).tiny) & (np.abs(exact) <= np.finfo(F32).max)
    ulp = np.spacing(np.abs(exact[normal_range]).astype(F32)).astype(np.float64)
    err = np.abs(out[normal_range] - exact[normal_range]) / ulp
    worst = SWEEP[normal_range][err.argmax()]
    assert err.max() <= ulps, f"{name}: {err.max():.2f} ulp at x = {worst}"
    # below float32's normal range the result is zero
    small = (np.abs(exact) < np.finfo(F32).tiny)
    assert np.all(np.abs(out[small]) < np.finfo(F32).tiny)


@pytest.mark.parametrize("name, x, expected", [
    ("exp", np.inf, np.inf), ("exp", -np.inf, 0.0), ("exp", 89.0, np.inf), ("exp", -104.0, 0.0),
    ("exp", 0.0, 1.0), ("tanh", np.inf, 1.0), ("tanh", -np.inf, -1.0), ("tanh", 50.0, 1.0),
    ("tanh", -0.0, -0.0), ("tanh", 1e-30, 1e-30), ("sigmoid", np.inf, 1.0),
    ("sigmoid", -np.inf, 0.0), ("sigmoid", 0.0, 0.5), ("sigmoid", -200.0, 0.0),
])
def test_float32_functions_at_the_edges(name, x, expected):
    out = np.empty(1, F32)
    _loop(getattr(_math, name))(np.array([x], F32), out)
    assert out[0] == F32(expected) and np.signbit(out[0]) == np.signbit(F32(expected))


@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid"])
def test_float32_functions_keep_nan(name):
    out = np.empty(1, F32)
    _loop(getattr(_math, name))(np.array([np.nan], F32), out)
    assert np.isnan(out[0])


# -- recurrent cells ---------------------------------------------------------------------------
N, H = 5, 24


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_matches_its_reference(layout, bias):
    hh, gi, c = normal(N, 4 * H, scale=2), normal(N, 4 * H, scale=2), normal(N, H)
    if layout == "F":
        hh = np.asfortranarray(hh)   # how (W h^T)^T comes out of BLAS for a lone step
    b = normal(4 * H) if bias else None
    got, want = kernels.lstm_cell(hh, gi, b, c), ref("lstm_cell", hh, gi, b, c)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=0, atol=4e-7)
    assert got[2].flags.c_contiguous


@pytest.mark.parametrize("given", ["both", "gh", "gc"])
def test_lstm_cell_backward_gives_its_references_bits(given):
    act = ref("lstm_cell", normal(N, 4 * H), normal(N, 4 * H), normal(4 * H), normal(N, H))[2]
    c = normal(N, H)
    gh = normal(N, H) if given in ("both", "gh") else None
    gc = normal(N, H) if given in ("both", "gc") else None
    for g, w in zip(kernels.lstm_cell_bwd(act, c, gh, gc), ref("lstm_cell_bwd", act, c, gh, gc)):
        assert g.shape == w.shape and np.array_equal(g, w)


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_matches_its_reference_and_its_backward_the_bits(bias):
    gi, hh, h = normal(N, 3 * H, scale=2), normal(N, 3 * H, scale=2), normal(N, H)
    b = normal(3 * H) if bias else None
    got, want = kernels.gru_cell(gi, hh, b, h), ref("gru_cell", gi, hh, b, h)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=0, atol=4e-7)
    gy = normal(N, H)
    for g, w in zip(kernels.gru_cell_bwd(want[1], h, gy), ref("gru_cell_bwd", want[1], h, gy)):
        assert np.array_equal(g, w)


def test_float64_cells_run_the_reference():
    hh, gi, c = (a.astype(np.float64) for a in (normal(N, 4 * H), normal(N, 4 * H), normal(N, H)))
    for g, w in zip(kernels.lstm_cell(hh, gi, None, c), ref("lstm_cell", hh, gi, None, c)):
        assert g.dtype == np.float64 and np.array_equal(g, w)


# -- optimizers --------------------------------------------------------------------------------
SIZE = _cpu_kernels.MIN_ELEMENTS["adam_step"] + 3


def _state(dtype, n=SIZE):
    p, g, m, v = (normal(n, seed=s).astype(dtype) for s in range(4))
    v = np.abs(v)
    p[:3] = [np.inf, -np.inf, np.nan]   # what the update does to them is the reference's too
    return p, g, m, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight_decay, decoupled", [(0, False), (0.01, False), (0.01, True)])
def test_adam_step_gives_its_references_bits(dtype, weight_decay, decoupled):
    a, b = _state(dtype), _state(dtype)
    args = (1e-3, 0.9, 0.999, 1e-8, weight_decay, 7, decoupled)
    kernels.adam_step(*a, *args)
    ref("adam_step", *b, *args)
    for x, y in zip(a, b):
        assert np.array_equal(x, y, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("momentum, dampening, weight_decay, nesterov, first", [
    (0, 0, 0, False, False), (0.9, 0, 0.01, False, False), (0.9, 0.1, 0, True, False),
    (0.9, 0, 0, False, True)])
def test_sgd_step_gives_its_references_bits(dtype, momentum, dampening, weight_decay,
                                            nesterov, first):
    a, b = _state(dtype)[:3], _state(dtype)[:3]
    args = (0.1, momentum, dampening, weight_decay, nesterov, first)
    kernels.sgd_step(*a, *args)
    ref("sgd_step", *b, *args)
    for x, y in zip(a, b):
        assert np.array_equal(x, y, equal_nan=True)


def test_a_non_contiguous_parameter_runs_the_reference():
    p, g, m, v = (np.asfortranarray(x.reshape(-1, 1)[: SIZE // 4 * 4].reshape(SIZE // 4, 4))
                  for x in _state(np.float32))
    q = [x.copy(order="F") for x in (p, g, m, v)]
    kernels.adam_step(p, g, m, v, 1e-3, 0.9, 0.999, 1e-8, 0, 1, False)
    ref("adam_step", *q, 1e-3, 0.9, 0.999, 1e-8, 0, 1, False)
    assert np.array_equal(p, q[0], equal_nan=True)


# -- activations and row kernels ----------------------------------------------------------------
BIG = _cpu_kernels.MIN_ELEMENTS["sigmoid"] * 2 + 5


def test_sigmoid_and_the_gelu_gate_match_their_references():
    x = normal(BIG, scale=4)
    x[:4] = [np.nan, np.inf, -np.inf, -0.0]
    np.testing.assert_allclose(kernels.sigmoid(x), ref("sigmoid", x), rtol=0, atol=2.4e-7)
    with_kernels = kernels.gelu_cdf(x)
    _cpu_kernels.set_enabled(False)
    try:
        cdf = kernels.gelu_cdf(x)
        gy = normal(BIG)
        gx = kernels.gelu_bwd_cdf(x, cdf, gy)
    finally:
        _cpu_kernels.set_enabled(True)
    np.testing.assert_allclose(with_kernels, cdf, rtol=0, atol=2.4e-7)
    np.testing.assert_allclose(kernels.gelu_bwd_cdf(x, cdf, gy), gx, rtol=1e-6, atol=1e-7)


def _both(fn):
    """fn() with the compiled kernels, then with the references."""
    got = fn()
    _cpu_kernels.set_enabled(False)
    try:
        return got, fn()
    finally:
        _cpu_kernels.set_enabled(True)


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("shape, normalized", [((300, 64), (64,)), ((6, 50, 8, 8), (8, 8))])
def test_layer_norm_matches_its_reference_forward_and_backward(affine, shape, normalized):
    x0, gy = normal(*shape, scale=3, seed=1) + 2, normal(*shape, seed=2)
    w0, b0 = normal(*normalized, seed=3), normal(*normalized, seed=4)

    def run():
        x = gpugrad.tensor(x0, requires_grad=True)
        w = gpugrad.tensor(w0, requires_grad=True) if affine else None
        b = gpugrad.tensor(b0, requires_grad=True) if affine else None
        y = gpugrad.nn.functional.layer_norm(x, normalized, w, b)
        y.backward(gpugrad.tensor(gy))
        return [y.detach().numpy(), x.grad.numpy()] + (
            [w.grad.numpy(), b.grad.numpy()] if affine else [])
    for g, w in zip(*_both(run)):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_rows_match_the_references_with_masked_and_special_rows(fn):
    x0 = normal(128, 200, scale=5, seed=5)
    x0[0, 3] = np.nan
    x0[1] = -np.inf          # a row masked whole: NaN, as in PyTorch
    x0[2, 10:] = -np.inf     # a causal-style mask
    x0[3, 7] = np.inf
    gy = normal(128, 200, seed=6)

    def run():
        x = gpugrad.tensor(x0, requires_grad=True)
        y = getattr(gpugrad, fn)(x, -1)
        y.backward(gpugrad.tensor(gy))
        return y.detach().numpy(), x.grad.numpy()
    for g, w in zip(*_both(run)):
        assert np.array_equal(np.isnan(g), np.isnan(w))
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_row_kernels_do_not_depend_on_the_thread_count(threads, monkeypatch):
    monkeypatch.setattr(_parallel, "MIN_ELEMENTS", 1024)
    x = gpugrad.tensor(normal(300, 77, seed=7))
    runs = []
    for n in (1, 2, 3):
        threads(n)
        runs.append((gpugrad.softmax(x, -1).numpy(), gpugrad.log_softmax(x, -1).numpy(),
                     gpugrad.nn.functional.layer_norm(x, (77,)).numpy()))
    for other in runs[1:]:
        for a, b in zip(runs[0], other):
            assert np.array_equal(a, b)


# -- backward regions --------------------------------------------------------------------------
def _traced(formula, n_inputs):
    tracer = _trace.Tracer()
    ns = _trace.SymNS(tracer)
    out = formula(ns, *[tracer.input(k) for k in range(n_inputs)])
    outputs = [tracer.lift(o).index for o in (out if isinstance(out, tuple) else (out,))]
    return tracer.nodes, _trace.live(tracer.nodes, outputs), outputs


ARITHMETIC = {
    "tanh*sigmoid+relu": lambda F, g, t, s, x: (g * (1 - t * t) * s + g * t * s * (1 - s)
                                                + F.where(x > 0, g, 0.0)),
    "min/max/abs/pow": lambda F, g, a, b, c: (F.maximum(a, b) * abs(c) - F.minimum(a, c) ** 2
                                              + b ** -1.0 / (c * c + 1)),
    "compare/logic": lambda F, g, a, b, c: F.where((a > b) & ~(c < 0) | (a == c), g, -g),
    "sqrt/sign/div": lambda F, g, a, b, c: F.sqrt(abs(a)) * F.sign(b) / c,
}


@pytest.mark.parametrize("name", sorted(ARITHMETIC))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_an_arithmetic_region_gives_the_numpy_evaluations_bits(name, dtype):
    nodes, live, outputs = _traced(ARITHMETIC[name], 4)
    n = 5000
    arrays = [normal(n, seed=s).astype(dtype) for s in range(4)]
    for a in arrays:   # every input meets NaN, both infinities and both zeros somewhere
        a[rng.permutation(n)[:5]] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    fn = region.compile(nodes, live, outputs, (False,) * 4, 0, dtype)
    out = np.empty(n, dtype)
    with np.errstate(all="ignore"):
        fn(*arrays, out, n)
        want = _trace.evaluate(nodes, live, outputs, arrays, [], np.dtype(dtype), (n,), np)[0]
    assert np.array_equal(out, want, equal_nan=True)


def test_a_region_with_exp_tanh_sigmoid_is_close_and_one_value_inputs_are_scalars():
    # (and powers: a cube is x * x * x here, as in the CUDA kernels, where numpy calls pow)
    nodes, live, outputs = _traced(lambda F, g, x, y: g * F.exp(-x * x) * F.tanh(y)
                                   + F.sigmoid(x) * g + y ** 3 + abs(x) ** 0.7, 3)
    n = 3000
    x, y = normal(n, scale=3, seed=8), normal(n, scale=3, seed=9)
    g = F32(0.75)
    fn = region.compile(nodes, live, outputs, (True, False, False), 0, np.float32)
    out = np.empty(n, F32)
    fn(g, x, y, out, n)
    want = _trace.evaluate(nodes, live, outputs, [np.full(n, g), x, y], [], np.dtype(F32),
                           (n,), np)[0]
    # a few ulp of each term: near the sum's zeros that is more than its own ulp
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-7 * np.abs(want).max())


def test_regions_with_ops_without_a_compiled_form_run_on_numpy():
    nodes, live, outputs = _traced(lambda F, g, x: g * F.log(x), 2)
    assert region.compile(nodes, live, outputs, (False, False), 0, np.float32) is None
    nodes, live, outputs = _traced(lambda F, g, x: g * F.exp(x), 2)   # float64: numpy's exp
    assert region.compile(nodes, live, outputs, (False, False), 0, np.float64) is None


def _elementwise_grad(x0, n_threads):
    gpugrad.set_num_threads(n_threads)
    x = gpugrad.tensor(x0, requires_grad=True)
    (gpugrad.tanh(x) * gpugrad.sigmoid(x) + gpugrad.relu(x) - x / 3).sum().backward()
    return x.grad.numpy()


def test_a_fused_backward_runs_compiled_with_the_same_bits_on_any_thread_count(threads,
                                                                               monkeypatch):
    monkeypatch.setattr(_parallel, "MIN_ELEMENTS", 1 << 15)
    x0 = normal(fusion.CPU_COMPILED_MIN_ELEMENTS * 8 + 11, seed=10)
    compiled = region.stats["compiled"]
    one = _elementwise_grad(x0, 1)
    assert region.stats["compiled"] == compiled + 1   # one region, one loop
    for n in (2, 3):
        assert np.array_equal(_elementwise_grad(x0, n), one)
    with fusion.using("off"):
        unfused = _elementwise_grad(x0, 1)
    np.testing.assert_allclose(one, unfused, rtol=1e-6, atol=1e-7)


def test_compiled_regions_are_kept_on_disk_and_loaded_by_a_new_process(tmp_path):
    script = ("import numpy as np, gpugrad\n"
              "from gpugrad._cpu_kernels import region\n"
              "x = gpugrad.tensor(np.linspace(-2, 2, 1 << 15, dtype=np.float32), "
              "requires_grad=True)\n"
              "(gpugrad.tanh(x) * x * 3).sum().backward()\n"
              "print(region.stats['compiled'], float(x.grad.sum()))\n")
    env = {**os.environ, "GPUGRAD_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout
    files = sorted(p.name for p in (tmp_path / "cpu_regions").iterdir())
    assert [f for f in files if f.endswith(".py")] and "__pycache__" in files
    assert stat.S_IMODE((tmp_path / "cpu_regions").stat().st_mode) & 0o077 == 0
    second = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                            text=True, check=True).stdout
    assert first == second and first.split()[0] == "1"
    cached = list((tmp_path / "cpu_regions" / "__pycache__").iterdir())
    assert any(p.suffix == ".nbc" for p in cached)


def test_a_cache_directory_others_may_write_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "cpu_regions"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv("GPUGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(region, "_cache", [])
    assert region.cache_dir() is None
    nodes, live, outputs = _traced(lambda F, g, x: g * x * x, 2)
    fn = region.compile(nodes, live, outputs, (False, False), 0, np.float32)   # in memory
    out = np.empty(4, F32)
    fn(np.ones(4, F32), np.full(4, 3, F32), out, 4)
    assert np.array_equal(out, np.full(4, 9, F32)) and not list(shared.iterdir())


# -- switches and thresholds -------------------------------------------------------------------
def test_disabled_kernels_run_the_references():
    hh, gi, c = normal(N, 4 * H), normal(N, 4 * H), normal(N, H)
    _cpu_kernels.set_enabled(False)
    try:
        assert _cpu_kernels.status() == "numpy references (set_enabled(False))"
        assert _cpu_kernels.get("lstm_cell") is None
        for g, w in zip(kernels.lstm_cell(hh, gi, None, c), ref("lstm_cell", hh, gi, None, c)):
            assert np.array_equal(g, w)
    finally:
        _cpu_kernels.set_enabled(True)
    assert _cpu_kernels.status() == "compiled (numba)"


def test_without_numba_everything_runs_on_numpy():
    script = ("import sys; sys.modules['numba'] = None\n"
              "import numpy as np, gpugrad\n"
              "from gpugrad import _cpu_kernels\n"
              "x = gpugrad.tensor(np.linspace(-2, 2, 1 << 16, dtype=np.float32), "
              "requires_grad=True)\n"
              "(gpugrad.sigmoid(x) * gpugrad.tanh(x) * 2).sum().backward()\n"
              "lstm = gpugrad.nn.LSTM(4, 8)\n"
              "lstm(gpugrad.randn(3, 2, 4))[0].sum().backward()\n"
              "print(_cpu_kernels.status())\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("numpy references (numba unavailable: ModuleNotFoundError")


def test_small_work_never_starts_the_compiler():
    script = ("import sys, numpy as np, gpugrad\n"
              "m = gpugrad.nn.Sequential(gpugrad.nn.Linear(64, 64), gpugrad.nn.Sigmoid(), "
              "gpugrad.nn.Linear(64, 2))\n"
              "opt = gpugrad.optim.Adam(m.parameters())\n"
              "for _ in range(3):\n"
              "    opt.zero_grad()\n"
              "    gpugrad.nn.functional.cross_entropy(gpugrad.softmax(m(gpugrad.randn(32, 64)), "
              "-1), gpugrad.zeros(32, dtype=gpugrad.long)).backward()\n"
              "    opt.step()\n"
              "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"


# -- the activations' backward formulas --------------------------------------------------------
POINTWISE_N = _cpu_kernels.MIN_ELEMENTS["relu_bwd"] + 7


def _activation_inputs(dtype):
    x = normal(POINTWISE_N, scale=3, seed=11).astype(dtype)
    x[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    g = normal(POINTWISE_N, seed=12).astype(dtype)
    g[5:7] = [np.inf, np.nan]
    with np.errstate(all="ignore"):
        return x, g, np.tanh(x), (1 / (1 + np.exp(-x))).astype(dtype), np.maximum(x, 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("expanded", [False, True])
def test_arithmetic_activation_backwards_give_their_references_bits(dtype, expanded):
    x, g, t, s, r = _activation_inputs(dtype)
    if expanded:   # a sum's gradient: one value, zero strides
        g = np.broadcast_to(dtype(0.75), x.shape)
    for name, args in [("relu_bwd", (r, g)), ("leaky_relu_bwd", (x, g, 0.1)),
                       ("sigmoid_bwd", (s, g)), ("tanh_bwd", (t, g))]:
        with np.errstate(all="ignore"):
            got, want = getattr(kernels, name)(*args), ref(name, *args)
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True), name


@pytest.mark.parametrize("name, args", [("silu_bwd", ()), ("gelu_bwd", (False,)),
                                        ("gelu_bwd", (True,))])
def test_activation_backwards_with_tanh_or_exp_match_their_references(name, args):
    x, g = _activation_inputs(np.float32)[:2]
    with np.errstate(all="ignore"):
        got, want = getattr(kernels, name)(x, g, *args), ref(name, x, g, *args)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    # a few ulp of tanh, times the formula's conditioning (|x| up to ~12 here)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-5)



def test_a_region_that_does_not_compile_warns_and_runs_on_numpy(monkeypatch, tmp_path):
    monkeypatch.setattr(region, "source", lambda *a: "def region(:\n")   # a generator bug
    monkeypatch.setenv("GPUGRAD_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(region, "_cache", [])
    monkeypatch.setattr(fusion, "_plans", {})
    x0 = normal(fusion.CPU_COMPILED_MIN_ELEMENTS + 3, seed=13)
    x = gpugrad.tensor(x0, requires_grad=True)
    with pytest.warns(UserWarning, match="did not compile for the CPU"):
        (gpugrad.tanh(x) * x * 3).sum().backward()
    t = np.tanh(x0)
    np.testing.assert_allclose(x.grad.numpy(), 3 * (t + x0 * (1 - t * t)), rtol=1e-6,
                               atol=1e-6)


def test_a_kernel_that_fails_to_compile_warns_and_runs_its_reference(monkeypatch):
    from numba.core.errors import TypingError

    from gpugrad._cpu_kernels import rnn

    def broken(*args):
        raise TypingError("a loop this numba cannot type")
    monkeypatch.setattr(rnn, "_lstm_cell", broken)
    monkeypatch.setitem(_cpu_kernels._found, "lstm_cell",
                        _cpu_kernels._guarded("lstm_cell", rnn.lstm_cell))
    hh, gi, c = normal(N, 4 * H), normal(N, 4 * H), normal(N, H)
    with pytest.warns(UserWarning, match="compiled CPU kernel lstm_cell failed"):
        got = kernels.lstm_cell(hh, gi, None, c)
    for g, w in zip(got, ref("lstm_cell", hh, gi, None, c)):
        assert np.array_equal(g, w)
    assert _cpu_kernels._found["lstm_cell"] is None   # the reference from now on
