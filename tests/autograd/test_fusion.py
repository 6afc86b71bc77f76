"""Backward fusion (gpugrad/autograd/fusion.py): a region of elementwise nodes runs as one
generated kernel. On the CPU the tests run it in mode "always" (the traced DAG evaluated with
numpy, the reference the CUDA code is held to); on a GPU in the default mode, as users get it.
Every case is checked against the unfused engine, node by node, on the same inputs."""
from __future__ import annotations

import os
import subprocess
import sys

import host_cuda
import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn.functional as F
from gpugrad import _cuda_kernels
from gpugrad.autograd import _trace, fusion
from gpugrad.ops._op import Op

FUSED = {"cpu": "always", "cuda": "auto"}
TOL = {gpugrad.float64: dict(rtol=1e-12, atol=1e-12), gpugrad.float32: dict(rtol=2e-5, atol=2e-6)}


@pytest.fixture(autouse=True)
def _fresh_stats():
    fusion.reset_stats()
    yield
    fusion.set_mode("auto")


def _grads(fn, arrays, device, mode, dtype=gpugrad.float64, needs=None):
    xs = [gpugrad.tensor(a, dtype=dtype, device=device,
                         requires_grad=needs is None or needs[i]) for i, a in enumerate(arrays)]
    fusion.reset_stats()
    with fusion.using(mode):
        fn(*xs).backward()
    return [None if x.grad is None else to_numpy(x.grad) for x in xs], dict(fusion.stats)


def _check(fn, arrays, device, dtype=gpugrad.float64, min_nodes=2, needs=None):
    """Fused and unfused gradients agree, and a region of at least ``min_nodes`` ran fused."""
    want, off = _grads(fn, arrays, device, "off", dtype, needs)
    got, stats = _grads(fn, arrays, device, FUSED[device], dtype, needs)
    assert off["regions"] == 0
    assert stats["nodes"] >= min_nodes, stats
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if w is not None:
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, **TOL[dtype])
    return stats


# -- every elementwise op, in regions -----------------------------------------------------------
def _bench(x):
    return (x.tanh() * x.sigmoid() + x.relu()).sum()


CASES = {
    "bench": (_bench, 1, None),
    "transcendental": (lambda x: (x.exp() + x.sin() * x.cos() - x.tanh() / 3 + gpugrad.erf(x))
                       .sum(), 1, None),
    "logs": (lambda x: (x.log() + x.sqrt() + x.log2() - x.log10() + x.log1p()
                        + x.reciprocal()).sum(), 1, "positive"),
    "inverse_trig": (lambda x: (x.asin() + x.acos() * x.atan()).sum(), 1, "unit"),
    "hyperbolic": (lambda x: (x.sinh() * x.cosh() + x.tan() + x.expm1()).sum(), 1, "unit"),
    "powers": (lambda x: (x ** 2 + x ** 3 - x.abs() ** 0.5 + 2 ** x + (x.abs() + 0.5) ** x
                          + 1 / (x * x + 1) + x ** -1.5 * 0).sum(), 1, "positive"),
    "activations": (lambda x: (F.leaky_relu(x, 0.1) + F.gelu(x) * F.gelu(x, approximate="tanh")
                               + F.silu(x) - F.softplus(x, beta=2, threshold=1)
                               + F.elu(x, alpha=0.5) * F.hardtanh(x, -0.5, 0.5)
                               + F.mish(x)).sum(), 1, None),
    "piecewise": (lambda x, y: (x.clamp(-0.5, 0.5) + x.clamp(min=y) * gpugrad.maximum(x, y)
                                - gpugrad.minimum(x, y) + x.floor() + x.frac() * y.sign()
                                + x.clamp(max=0.25)).sum(), 2, "ties"),
    "blends": (lambda x, y, z: (gpugrad.atan2(x, y) + gpugrad.lerp(x, y, 0.3)
                                * gpugrad.lerp(x, y, z) + gpugrad.addcmul(x, y, z, value=0.5)
                                - gpugrad.addcdiv(x, y, z.abs() + 1, value=2) * x.clone())
               .sum(), 3, None),
    "arithmetic": (lambda x, y: ((x - y) * (x + 2 * y) / (y * y + 1) - (-x) + 3 - x
                                 - gpugrad.sub(x, y, alpha=2) + gpugrad.add(x, y, alpha=0.5))
                   .sum(), 2, None),
    "weighted": (lambda x, w: ((x.tanh() + x.exp()) * w).sum(), 2, None),
    "pairs": (lambda x, y: (gpugrad.hypot(x, y) * gpugrad.logaddexp(x, y)
                            + gpugrad.fmod(x, 0.75) - x.remainder(0.5)).sum(), 2, None),
    "transposed": (lambda x: (x.t().exp() * x.t().sin() + x.t().cos()).sum(), 1, "matrix"),
}


def _inputs(n, domain, shape, rng):
    if domain == "matrix" and len(shape) != 2:
        shape = (7, 5)
    xs = [rng.standard_normal(shape) for _ in range(n)]
    if domain == "positive":
        xs = [np.abs(x) + 0.25 for x in xs]
    elif domain == "unit":
        xs = [np.tanh(x) * 0.9 for x in xs]
    elif domain == "ties":
        xs[1] = np.where(rng.random(shape) < 0.3, xs[0], xs[1])
    return xs


@pytest.mark.parametrize("shape", [(), (1,), (1023,), (33, 31)], ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_region_matches_the_unfused_engine(device, case, shape, rng):
    fn, n, domain = CASES[case]
    _check(fn, _inputs(n, domain, shape, rng), device)


@pytest.mark.parametrize("case", ["bench", "activations", "blends"])
def test_region_in_float32(device, case, rng):
    fn, n, domain = CASES[case]
    _check(fn, _inputs(n, domain, (257,), rng), device, gpugrad.float32)


def test_an_input_that_needs_no_gradient_gets_none(device, rng):
    fn, _, _ = CASES["weighted"]
    _check(fn, _inputs(2, None, (64,), rng), device, needs=(True, False))


def test_empty_tensors(device):
    got, stats = _grads(_bench, [np.zeros((0, 3))], device, FUSED[device])
    assert stats["regions"] == 1 and got[0].shape == (0, 3)


# -- what a region is ---------------------------------------------------------------------------
def test_the_benchmark_expression_is_one_region_of_five_nodes(device, rng):
    stats = _check(_bench, [rng.standard_normal(100)], device)
    assert stats["regions"] == 1 and stats["nodes"] == 5


def test_one_plan_serves_every_value_of_a_saved_number(device, rng):
    x = gpugrad.tensor(rng.standard_normal(10), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        for s in (0.5, 2.0, -3.0):
            x.grad = None
            (x * s).tanh().sum().backward()
            np.testing.assert_allclose(to_numpy(x.grad),
                                       s * (1 - np.tanh(s * to_numpy(x)) ** 2), rtol=1e-12)
    assert fusion.stats["regions"] == 3 and fusion.stats["plans_built"] <= 1


def test_a_different_constant_attribute_is_a_different_plan(device, rng):
    x = gpugrad.tensor(rng.standard_normal(10), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        for slope in (0.1, 0.2):
            x.grad = None
            F.leaky_relu(x, slope).exp().sum().backward()
            want = np.exp(np.where(to_numpy(x) > 0, to_numpy(x), slope * to_numpy(x)))
            want *= np.where(to_numpy(x) > 0, 1, slope)
            np.testing.assert_allclose(to_numpy(x.grad), want, rtol=1e-12)
    assert fusion.stats["regions"] == 2


def test_broadcasting_ops_stay_out_of_regions(device, rng):
    # x * y with x (3, 1) sums its gradient back to x's shape: not one elementwise pass
    fn = lambda x, y: (x * y).exp().sum()  # noqa: E731
    want, _ = _grads(fn, [rng.standard_normal((3, 1)), rng.standard_normal((3, 4))], device,
                     "off")
    got, stats = _grads(fn, [rng.standard_normal((3, 1)), rng.standard_normal((3, 4))], device,
                        FUSED[device])
    assert stats["regions"] == 0


def test_gradient_buffered_before_the_region_runs(device, rng):
    # exp(x) gets one gradient through the matrix product, one through sin: the product's
    # arrives first and is an input of the region (exp, sin)
    m = rng.standard_normal((6, 2))

    def fn(x):
        a = x.exp()
        return a.sin().sum() + (a @ gpugrad.tensor(m, device=device)).sum()
    stats = _check(fn, [rng.standard_normal(6)], device)
    assert stats["nodes"] == 2


def test_float16_is_not_fused(device, rng):
    _, stats = _grads(_bench, [rng.standard_normal(8)], device, FUSED[device], gpugrad.float16)
    assert stats["regions"] == 0


def test_create_graph_and_anomaly_mode_are_never_fused(device, rng):
    x = gpugrad.tensor(rng.standard_normal(5), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        (gx,) = gpugrad.autograd.grad(_bench(x), x, create_graph=True)
        assert fusion.stats["regions"] == 0
        with pytest.warns(UserWarning, match="Anomaly Detection"), \
                gpugrad.autograd.detect_anomaly():
            _bench(x).backward()
        assert fusion.stats["regions"] == 0
        (ggx,) = gpugrad.autograd.grad(gx.sum(), x)   # the graph of the backward: fused
        assert fusion.stats["regions"] >= 1
    v = to_numpy(x)
    t, s = np.tanh(v), 1 / (1 + np.exp(-v))
    dt, ds = 1 - t * t, s * (1 - s)
    np.testing.assert_allclose(to_numpy(gx), dt * s + t * ds + (v > 0), rtol=1e-12)
    d2 = -2 * t * dt * s + 2 * dt * ds + t * ds * (1 - 2 * s)
    np.testing.assert_allclose(to_numpy(ggx), d2, rtol=1e-10)


# -- nothing users see changes ------------------------------------------------------------------
def test_a_hooked_tensor_is_not_fused_and_its_hook_sees_its_gradient(device, rng):
    v = rng.standard_normal(16)
    seen = []

    def fn(x):
        t = x.tanh()
        t.register_hook(lambda g: seen.append(to_numpy(g)))
        return (t * x.sigmoid() + x.relu()).sum()
    stats = _check(fn, [v], device)
    assert stats["nodes"] == 4   # add, mul, sigmoid, relu; tanh ran alone for its hook
    np.testing.assert_allclose(seen[-1], 1 / (1 + np.exp(-v)), rtol=1e-12)
    assert len(seen) == 2   # once unfused, once fused


def test_retain_grad_and_node_hooks_keep_their_nodes_out(device, rng):
    v = rng.standard_normal(16)
    kept = {}

    def fn(x):
        s = x.sigmoid()
        s.retain_grad()
        kept["s"] = s
        r = x.relu()
        r.grad_fn.register_prehook(lambda grads: kept.update(pre=to_numpy(grads[0])))
        return (x.tanh() * s + r).sum()
    stats = _check(fn, [v], device)
    assert stats["nodes"] == 3   # add, mul, tanh
    np.testing.assert_allclose(to_numpy(kept["s"].grad), np.tanh(v), rtol=1e-12)
    np.testing.assert_allclose(kept["pre"], np.ones(16))


def test_autograd_grad_of_an_intermediate(device, rng):
    x = gpugrad.tensor(rng.standard_normal(8), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        t = x.tanh()
        y = (t.exp() * x.sin()).sum()
        gt, gx = gpugrad.autograd.grad(y, (t, x))
    v = to_numpy(x)
    np.testing.assert_allclose(to_numpy(gt), np.exp(np.tanh(v)) * np.sin(v), rtol=1e-12)
    want = np.exp(np.tanh(v)) * np.cos(v) + to_numpy(gt) * (1 - np.tanh(v) ** 2)
    np.testing.assert_allclose(to_numpy(gx), want, rtol=1e-12)
    assert fusion.stats["regions"] == 1


def _error(fn, device, mode):
    x = gpugrad.tensor([0.5, -1.0, 2.0], device=device, requires_grad=True)
    with fusion.using(mode):
        with pytest.raises(RuntimeError) as e:
            fn(x)
    return str(e.value).replace(hex(id(x)), "")


def test_second_backward_fails_as_unfused(device):
    def twice(x):
        y = _bench(x)
        y.backward()
        y.backward()
    msg = _error(twice, device, FUSED[device])
    assert msg.startswith("Trying to backward through the graph a second time")
    assert msg == _error(twice, device, "off")


def test_retain_graph_keeps_the_region_runnable(device, rng):
    x = gpugrad.tensor(rng.standard_normal(8), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        y = _bench(x)
        y.backward(retain_graph=True)
        once = to_numpy(x.grad).copy()
        y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), 2 * once, rtol=1e-12)
    assert fusion.stats["regions"] == 2


def test_saved_values_are_released_after_a_fused_backward(device, rng):
    x = gpugrad.tensor(rng.standard_normal(8), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        t = x.tanh()
        y = (t * x.sigmoid()).sum()
        y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second"):
        t.grad_fn._saved_result


def test_modified_in_place_fails_as_unfused(device):
    def modified(x):
        s = x.sigmoid()
        y = (s * x.tanh()).sum()
        s.mul_(2)
        y.backward()
    msg = _error(modified, device, FUSED[device])
    assert msg.startswith("one of the variables needed for gradient computation has been "
                          "modified by an inplace operation")
    assert msg == _error(modified, device, "off")


class _SumsInBackward(Op):
    """An op that claims to be elementwise but whose formula reduces: tracing refuses it."""
    elementwise = True
    saves = (0,)

    def forward(self, xp, x):
        return x * 2

    def backward(self, F, gy, x):
        return gy * 2 + F.sum(x) * 0


def test_a_formula_that_cannot_be_traced_runs_unfused(device, rng):
    x = gpugrad.tensor(rng.standard_normal(4), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        _SumsInBackward.apply(x.exp()).tanh().sum().backward()
    v = to_numpy(x)
    np.testing.assert_allclose(to_numpy(x.grad),
                               2 * np.exp(v) * (1 - np.tanh(2 * np.exp(v)) ** 2), rtol=1e-12)
    # tried from tanh (tanh, the op, exp), then from the op (the op, exp): both refused
    assert fusion.stats["plans_built"] == 2 and fusion.stats["regions"] == 0


class _DivmodInBackward(Op):
    """An elementwise op whose formula uses a Python builtin arrays support and traced symbols
    do not (divmod): tracing fails with a TypeError, and the op runs unfused."""
    elementwise = True
    saves = (0,)

    def forward(self, xp, x):
        return x * 3

    def backward(self, F, gy, x):
        return gy * 3 + divmod(x, 1.0)[1] * 0


def test_a_formula_that_fails_on_symbols_in_any_way_runs_unfused(device, rng):
    x = gpugrad.tensor(rng.standard_normal(4), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        _DivmodInBackward.apply(x.exp()).tanh().sum().backward()
    v = to_numpy(x)
    np.testing.assert_allclose(to_numpy(x.grad),
                               3 * np.exp(v) * (1 - np.tanh(3 * np.exp(v)) ** 2), rtol=1e-12)
    assert fusion.stats["regions"] == 0


def test_abs_traces(device, rng):
    x = gpugrad.tensor(rng.standard_normal(5), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        (x.abs() * x.tanh()).sum().backward()
    v = to_numpy(x)
    np.testing.assert_allclose(to_numpy(x.grad),
                               np.sign(v) * np.tanh(v) + np.abs(v) * (1 - np.tanh(v) ** 2),
                               rtol=1e-12)
    assert fusion.stats["regions"] == 1


def test_a_region_that_does_not_compile_runs_unfused_with_one_warning(device, rng,
                                                                      monkeypatch):
    def broken(*args):
        raise fusion.RegionCompileError("a fused backward region did not compile (NVRTC: ...)")
    monkeypatch.setattr(fusion.Plan, "run", broken)
    fusion._plans.clear()
    x = gpugrad.tensor(rng.standard_normal(6), device=device, requires_grad=True)
    with fusion.using(FUSED[device]):
        with pytest.warns(UserWarning, match="did not compile .*run one by one"):
            _bench(x).backward()
        first = to_numpy(x.grad).copy()
        x.grad = None
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # the region is remembered: no second warning
            _bench(x).backward()
    v = to_numpy(x)
    t, s = np.tanh(v), 1 / (1 + np.exp(-v))
    want = (1 - t * t) * s + t * s * (1 - s) + (v > 0)
    np.testing.assert_allclose(first, want, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(x.grad), want, rtol=1e-12)
    assert fusion.stats["regions"] == 0


# -- tracing and the mode switch ----------------------------------------------------------------
def test_tracing_refuses_what_is_not_elementwise():
    tracer = _trace.Tracer()
    ns, x = _trace.SymNS(tracer), tracer.input(0)
    for bad in (lambda: ns.sum(x), lambda: x.shape, lambda: x[0], lambda: bool(x > 0),
                lambda: ~x, lambda: x & x, lambda: tracer.const("a")):
        with pytest.raises(_trace.TraceError):
            bad()


def test_identical_subexpressions_are_recorded_once():
    tracer = _trace.Tracer()
    x = tracer.input(0)
    a, b = x * x + 1, x * x + 1
    assert a.index == b.index and len(tracer.nodes) == 4   # x, x*x, 1, x*x+1


def test_mode_switch():
    assert fusion.mode() == "auto"
    with fusion.using("off"):
        assert fusion.mode() == "off"
        assert not fusion.active(np.zeros(1))
    assert fusion.mode() == "auto" and not fusion.active(np.zeros(1))
    assert not fusion.active(np.float32(1))   # numpy's 0-d results are numpy too
    with pytest.raises(ValueError, match="^fusion mode must be one of 'auto', 'always', 'off', "
                                         "got 'sometimes'$"):
        fusion.set_mode("sometimes")


def test_environment_variable_sets_the_mode():
    code = "from gpugrad.autograd import fusion; print(fusion.mode())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"GPUGRAD_FUSION": "off", "PATH": ""}, check=True)
    assert out.stdout.strip() == "off"
    bad = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"GPUGRAD_FUSION": "maybe", "PATH": ""})
    assert bad.returncode != 0 and "fusion mode must be one of" in bad.stderr


# -- the generated CUDA -------------------------------------------------------------------------
def _traced_plans(rng):
    """Plans of every case above, traced on the CPU."""
    fusion._plans.clear()
    for fn, n, domain in CASES.values():
        _grads(fn, _inputs(n, domain, (5, 4), rng), "cpu", "always")
    return fusion.plans()


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_generated_region_compiles(nvrtc, arch, rng):
    plans = _traced_plans(rng)
    assert len(plans) >= len(CASES)
    for plan in plans:
        for ctype in ("float", "double"):
            ptx = _cuda_kernels.compile_to_ptx(plan.source(ctype), "region.cu", arch)
            assert ".entry backward_region(" in ptx


def test_generated_source_reads_each_input_once_and_writes_each_output_once(rng):
    fusion._plans.clear()
    _grads(_bench, [rng.standard_normal(4)], "cpu", "always")
    (plan,) = fusion.plans()
    src = plan.source("float")
    body = src.split('extern "C"')[-1]
    assert [body.count(f"in{k}[i * in{k}_stride]") for k in range(4)] == [1, 1, 1, 1]
    assert body.count("out0[i] = ") == 1 and "out1" not in body
    assert "typedef float T;" in src and "gg_sigmoid" in src   # the frame's helpers


# The generated code is plain C++ apart from CUDA's launch geometry (tests/host_cuda.py): run on
# the host, on the very arrays a fused backward hands the kernel, it is checked against the
# numpy evaluation without a GPU.
def _run_on_host(host_cxx, plan, arrays, params, shape, dtype):
    cxx, tmp = host_cxx
    ctype = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}[dtype]
    lib = host_cuda.build(plan.source(ctype), tmp, cxx)
    args, outs = plan.arguments(arrays, params, shape, dtype, np)
    host_cuda.call(lib, "backward_region", args)
    return outs


@pytest.mark.parametrize("dtype", [gpugrad.float64, gpugrad.float32], ids=str)
@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_code_computes_what_the_trace_does(host_cxx, case, dtype, rng, monkeypatch):
    runs = []
    original = fusion.Plan.run

    def spy(plan, arrays, params, shape, dt):
        outs = original(plan, arrays, params, shape, dt)
        runs.append((plan, arrays, params, shape, dt, outs))
        return outs
    monkeypatch.setattr(fusion.Plan, "run", spy)
    fn, n, domain = CASES[case]
    _grads(fn, _inputs(n, domain, (9, 7), rng), "cpu", "always", dtype)
    assert runs
    for plan, arrays, params, shape, dt, want in runs:
        got = _run_on_host(host_cxx, plan, arrays, params, shape, dt)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **TOL[dtype])


@pytest.mark.gpu
def test_compiles_once_per_plan_and_device(rng):
    from conftest import cuda_available
    if not cuda_available():
        pytest.skip("no CUDA device (gpugrad.cuda.is_available() is false)")
    if os.environ.get("GPUGRAD_CUPY_SIM") == "1":
        pytest.skip("counts NVRTC compiles: needs a real GPU")
    fusion._plans.clear()
    x = gpugrad.tensor(rng.standard_normal(1000), device="cuda", requires_grad=True)
    for _ in range(3):
        _bench(x).backward()
    assert fusion.stats["regions"] == 3 and fusion.stats["kernels_compiled"] == 1
    assert fusion.stats["compile_seconds"] > 0
