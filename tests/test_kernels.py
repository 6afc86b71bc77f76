"""Fused kernels: every ``kernels/*.cu`` compiles to PTX without a GPU, every numpy reference
matches the unfused math written out here, and on a GPU every kernel matches its reference."""
from __future__ import annotations

import functools
import math
import os
import re
from pathlib import Path

import host_cuda
import numpy as np
import pytest

from gpugrad import _backend, _cuda_kernels
from gpugrad.kernels import REGISTRY

KERNEL_DIR = Path(__file__).resolve().parent.parent / "kernels"
CU_FILES = sorted(KERNEL_DIR.glob("*.cu"))
ARCHS = ("sm_80", "sm_90")
LAYOUTS = ("0", "1", "1023", "strided")
DTYPES = (np.float32, np.float64)
SHAPES = {"0": (0,), "1": (1,), "1023": (1023,), "strided": (33, 31)}
ROW_SHAPES = {"0": (0, 5), "1": (1, 1), "1023": (31, 33), "strided": (31, 33)}

REF_TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}
FD_TOL = {np.float32: REF_TOL[np.float32], np.float64: dict(rtol=1e-7, atol=1e-8)}
# CUDA's exp/erf/tanh are within 2 ulp of numpy's, and FMA contraction rounds differently.
GPU_TOL = {np.float32: dict(rtol=1e-5, atol=1e-5), np.float64: dict(rtol=1e-11, atol=1e-11)}

_C_DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "long long": np.int64}
# Frames: sources the engine splices generated code into (they compile as they stand, with an
# example); their reference is the module that generates the code, not a numpy function.
FRAMES = {"backward_region": "gpugrad/autograd/fusion.py"}


SIMULATED = os.environ.get("GPUGRAD_CUPY_SIM") == "1"


@pytest.fixture(scope="module")
def cupy():
    cp = _backend.cupy_module()
    if cp is None:
        pytest.skip("CuPy is not installed")
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver: CUDARuntimeError
        pytest.skip(f"no CUDA device ({type(e).__name__}: {e})")
    if count == 0:
        pytest.skip("no CUDA device")
    if SIMULATED:
        pytest.skip("compares compiled kernels with their references: needs a real GPU")
    return cp


# -- sources: compile, reject, pair with the registry -----------------------------------------
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.stem)
def test_kernel_compiles_to_ptx(nvrtc, path, arch):
    ptx = _cuda_kernels.compile_to_ptx(path.read_text(), path.name, arch)
    assert f".target {arch}" in ptx
    for ctype in ("float", "double"):
        assert f".entry {path.stem}_{ctype}(" in ptx   # extern "C": unmangled


def test_compile_rejects_broken_source(nvrtc):
    src = 'extern "C" __global__ void broken_float(float* x) { x[0] = undeclared_name; }'
    with pytest.raises(_cuda_kernels.KernelCompileError, match="undeclared_name") as err:
        _cuda_kernels.compile_to_ptx(src, "broken.cu")
    assert "broken.cu" in str(err.value) and "sm_80" in str(err.value)


def test_compile_rejects_host_headers(nvrtc):
    # NVRTC has no host headers; a kernel that needs one would compile with nvcc and fail here.
    src = '#include <cmath>\nextern "C" __global__ void k(float* x) { x[0] = std::sqrt(x[0]); }'
    with pytest.raises(_cuda_kernels.KernelCompileError, match="cmath"):
        _cuda_kernels.compile_to_ptx(src, "host_header.cu", "sm_90")


def test_every_kernel_has_a_source_and_every_source_a_kernel():
    assert {p.stem for p in CU_FILES} - set(FRAMES) == set(REGISTRY)
    assert set(FRAMES) <= {p.stem for p in CU_FILES}
    for k in REGISTRY.values():
        assert k.source == f"{k.name}.cu"
        found = _cuda_kernels.kernel_path(k.source)   # the installed copy, if any
        assert found.read_text() == (KERNEL_DIR / k.source).read_text()


@pytest.mark.parametrize("path", CU_FILES, ids=lambda p: p.stem)
def test_source_first_line_names_its_reference(path):
    first = path.read_text().splitlines()[0]
    ref = (re.escape(FRAMES[path.stem]) if path.stem in FRAMES
           else rf"gpugrad/kernels\.py {path.stem}")
    assert re.fullmatch(rf"// \S.* {{2,}}reference: {ref}", first), first


@pytest.mark.parametrize("name", sorted(set(REGISTRY) - set(_cuda_kernels._BINDERS)))
def test_entry_parameters_bind_to_reference(name):
    """The launcher binds by name (see gpugrad/_cuda_kernels.py); check every entry can bind."""
    k = REGISTRY[name]
    entries = _cuda_kernels.entries_of(k.source)
    assert set(entries) - set(MULTI.get(name, ())) == {f"{name}_float", f"{name}_double"}
    ref_names = _cuda_kernels._ref_names(k.ref)
    inplace = {ref_names[i] for i in k.inplace}
    for ctype in ("float", "double"):
        params = entries[f"{name}_{ctype}"]
        assert [p.name for p in params] == [p.name for p in entries[f"{name}_float"]]
        names = {p.name for p in params}
        assert set(ref_names) <= names, f"reference arguments missing from {name}_{ctype}"
        outputs = [p for p in params if p.pointer and p.name not in ref_names]
        assert len(outputs) == k.outputs
        assert all(p.ctype == ctype and not p.const for p in outputs)
        for p in params:
            if p.pointer and p.name in ref_names:
                assert p.const == (p.name not in inplace), p
            elif not p.pointer and p.name not in ref_names:
                assert p.name in {"n", "cols"} | {f"{a}_stride" for a in ref_names}, p
                assert p.ctype == "long long", p
            if not p.pointer:
                assert p.ctype in ("double", "int", "long long"), p


# -- multi-tensor entries: one launch updates up to SLOTS tensors ------------------------------
MULTI = {name: (f"{name}_multi_float", f"{name}_multi_double")
         for name in ("sgd_step", "adam_step")}


@pytest.mark.parametrize("name", sorted(MULTI))
def test_multi_entries_bind_every_slot(name):
    k = REGISTRY[name]
    single = _cuda_kernels.entries_of(k.source)[f"{name}_float"]
    arrays = [p.name for p in single if p.pointer]
    scalars = [p.name for p in single if not p.pointer and p.name != "n"]
    for entry in MULTI[name]:
        plan = _cuda_kernels._multi_plan(k, entry)
        slots = sorted((kind, i, j) for kind, i, j in plan if kind != "scalar")
        assert slots == sorted([("slot", i, j) for i in range(len(arrays))
                                for j in range(_cuda_kernels.SLOTS)]
                               + [("n", -1, j) for j in range(_cuda_kernels.SLOTS)])
        assert [i for kind, i, _ in plan if kind == "scalar"] == list(range(len(scalars)))


MULTI_CASES = {   # name -> the scalars of each variant
    "sgd_step": [(0.1, 0.0, 0.0, 0.0, False, False), (0.1, 0.0, 0.0, 0.01, False, False),
                 (0.05, 0.9, 0.0, 0.0, False, True), (0.05, 0.9, 0.1, 1e-3, False, False),
                 (0.05, 0.9, 0.0, 0.0, True, False)],
    "adam_step": [(1e-3, 0.9, 0.999, 1e-8, 0.0, 1, False), (1e-2, 0.8, 0.99, 1e-6, 0.1, 7, False),
                  (1e-2, 0.9, 0.999, 1e-8, 0.05, 3, True)],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(MULTI_CASES))
def test_multi_entry_updates_each_tensor_as_the_reference(host_cxx, name, dtype, rng):
    """The multi entry, run on the host (tests/host_cuda.py) over tensors of different sizes
    with its unused slots null, against the reference applied to each tensor."""
    k = REGISTRY[name]
    ctype = _cuda_kernels.CTYPES[np.dtype(dtype)]
    lib = host_cuda.build(KERNEL_DIR.joinpath(k.source).read_text(), host_cxx[1], host_cxx[0])
    for scalars in MULTI_CASES[name]:
        sizes = (1023, 1, 0, 37, 5)
        group = []
        for n in sizes:
            arrays = [rng.standard_normal(n).astype(dtype) for _ in range(4)]
            if name == "adam_step":
                arrays[3] = np.abs(arrays[3])   # v >= 0
            group.append(tuple(arrays[:3] if name == "sgd_step" else arrays))
        want = [tuple(a.copy() for a in arrays) for arrays in group]
        for arrays in want:
            k.ref(np, *arrays, *scalars)
        args = _cuda_kernels.multi_arguments(k, group, scalars, ctype)
        host_cuda.call(lib, f"{name}_multi_{ctype}", args, grid_y=len(group))
        for got, exp in zip(group, want):
            for g, e in zip(got, exp):
                np.testing.assert_allclose(g, e, **REF_TOL[dtype])


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(MULTI_CASES))
def test_foreach_on_the_gpu_matches_the_reference(cupy, name, rng):
    """Eleven tensors (two launches of the multi entry), one of them float64 and one
    non-contiguous (each updated by its own launch)."""
    from gpugrad import kernels
    k = REGISTRY[name]
    scalars = MULTI_CASES[name][-1]
    host = []
    for i, n in enumerate((1023, 1, 0, 37, 5, 6, 3, 2, 1, 64, 7)):
        dtype = np.float64 if i == 3 else np.float32
        arrays = [rng.standard_normal(n).astype(dtype) for _ in range(4)]
        arrays[3] = np.abs(arrays[3])
        host.append(tuple(arrays[:3] if name == "sgd_step" else arrays))
    dev = [tuple(cupy.asarray(a) for a in arrays) for arrays in host]
    wide = cupy.zeros(12, dtype=cupy.float32)   # tensor 5's parameter: every other element
    wide[::2] = dev[5][0]
    dev[5] = (wide[::2],) + dev[5][1:]
    kernels.foreach(getattr(kernels, name), dev, *scalars)
    for arrays in host:
        k.ref(np, *arrays, *scalars)
    for got, want in zip(dev, host):
        for g, w in zip(got, want):
            np.testing.assert_allclose(cupy.asnumpy(g), w, **GPU_TOL[w.dtype.type])


def test_optimizer_steps_go_through_foreach(monkeypatch):
    """SGD and Adam hand all their parameters to one ``kernels.foreach`` call per kind of
    update, which on CUDA is one launch per eight tensors."""
    import gpugrad
    from gpugrad import kernels, optim
    calls = []
    real = kernels.foreach
    monkeypatch.setattr(kernels, "foreach", lambda u, t, *s: (calls.append((u, len(t))),
                                                              real(u, t, *s)))
    params = [gpugrad.randn(3, requires_grad=True) for _ in range(5)]
    for opt in (optim.SGD(params, lr=0.1), optim.SGD(params, lr=0.1, momentum=0.9),
                optim.Adam(params)):
        for p in params:
            p.grad = gpugrad.ones(3)
        opt.step()
    assert [(u.__name__, n) for u, n in calls if n] == [
        ("sgd_step", 5), ("sgd_step", 5), ("adam_step", 5)]


# -- cases: each runs a kernel through `run` and returns (results, unfused float64 math) -------
CASES = {}


def case(kernel, fd=False, **params):
    """Register a case; ``params`` are passed to it and name it in test ids."""
    def register(fn):
        label = kernel + (f"[{','.join(f'{k}={v}' for k, v in params.items())}]" if params else "")
        CASES[label] = (kernel, functools.partial(fn, **params), fd)
        return fn
    return register


def _arr(a64, dtype, layout):
    """``a64`` as ``dtype``; for the strided layout a view that skips every other element."""
    a64 = np.asarray(a64)
    if layout != "strided" or a64.ndim == 0:
        return np.array(a64, dtype=dtype)
    full = np.zeros(a64.shape[:-1] + (2 * a64.shape[-1],), dtype)
    full[..., ::2] = a64
    return full[..., ::2]


def _inputs(layout, dtype, *arrays64):
    """Arrays as the kernel gets them, and the exact float64 values they hold."""
    arrays = [_arr(a, dtype, layout) for a in arrays64]
    return arrays, [a.astype(np.float64) for a in arrays]


def _uniform(rng, layout, low=-3.0, high=3.0):
    return rng.uniform(low, high, SHAPES[layout])


def _fd(f, x, h=1e-6):
    """Central difference of an elementwise ``f`` at float64 ``x``."""
    return (f(x + h) - f(x - h)) / (2 * h)


_erf = np.vectorize(math.erf, otypes=[np.float64])


@case("relu_bwd")
def _relu(rng, layout, dtype, run):
    x = _uniform(rng, layout)
    x[np.abs(x) < 0.5] = 0.0   # exact zeros: relu'(0) = 0
    (y, gy), (_, g) = _inputs(layout, dtype, np.maximum(x, 0), _uniform(rng, layout))
    return run(y, gy), [np.where(x > 0, g, 0.0)]


@case("leaky_relu_bwd", slope=0.01)
@case("leaky_relu_bwd", slope=-0.5)
def _leaky_relu(rng, layout, dtype, run, slope):
    x = _uniform(rng, layout)
    x[np.abs(x) < 0.5] = 0.0   # x == 0 takes the slope branch
    (x, gy), (x64, g) = _inputs(layout, dtype, x, _uniform(rng, layout))
    return run(x, gy, slope), [g * np.where(x64 > 0, 1.0, slope)]


@case("add")
def _add_forward(rng, layout, dtype, run):
    args, (x, y) = _inputs(layout, dtype, _uniform(rng, layout), _uniform(rng, layout))
    return run(*args), [x + y]


@case("mul")
def _mul_forward(rng, layout, dtype, run):
    args, (x, y) = _inputs(layout, dtype, _uniform(rng, layout), _uniform(rng, layout))
    return run(*args), [x * y]


@case("add_scalar", s=-0.1)
@case("add_scalar", s=0.5)
def _add_scalar(rng, layout, dtype, run, s):
    (xa,), (x,) = _inputs(layout, dtype, _uniform(rng, layout))
    return run(xa, s), [x + np.float64(dtype(s))]


@case("mul_scalar", s=1.01)
def _mul_scalar(rng, layout, dtype, run, s):
    (xa,), (x,) = _inputs(layout, dtype, _uniform(rng, layout))
    return run(xa, s), [x * np.float64(dtype(s))]


@case("relu")
def _relu_forward(rng, layout, dtype, run):
    x = _uniform(rng, layout)
    x.flat[:3] = [0.0, np.nan, -0.0][:x.size]   # the edge values: zero, NaN kept
    (xa,), (x64,) = _inputs(layout, dtype, x)
    return run(xa), [np.maximum(x64, 0)]


@case("tanh")
def _tanh_forward(rng, layout, dtype, run):
    (xa,), (x64,) = _inputs(layout, dtype, _uniform(rng, layout, -10.0, 10.0))
    return run(xa), [np.tanh(x64)]


@case("sigmoid")
def _sigmoid_forward(rng, layout, dtype, run):
    x = _uniform(rng, layout, -30.0, 30.0)   # far tails: no overflow, no NaN
    (xa,), (x64,) = _inputs(layout, dtype, x)
    return run(xa), [1 / (1 + np.exp(-x64))]


@case("sigmoid_bwd", fd=True)
def _sigmoid(rng, layout, dtype, run):
    x = _uniform(rng, layout)
    s = lambda t: 1 / (1 + np.exp(-t))
    (y, gy), (_, g) = _inputs(layout, dtype, s(x), _uniform(rng, layout))
    return run(y, gy), [g * _fd(s, x)]


@case("tanh_bwd", fd=True)
def _tanh(rng, layout, dtype, run):
    x = _uniform(rng, layout)
    (y, gy), (_, g) = _inputs(layout, dtype, np.tanh(x), _uniform(rng, layout))
    return run(y, gy), [g * _fd(np.tanh, x)]


@case("gelu_bwd", fd=True, tanh_approx=False)
@case("gelu_bwd", fd=True, tanh_approx=True)
def _gelu(rng, layout, dtype, run, tanh_approx):
    if tanh_approx:
        def f(t):
            return 0.5 * t * (1 + np.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))
    else:
        def f(t):
            return 0.5 * t * (1 + _erf(t / math.sqrt(2)))
    (x, gy), (x64, g) = _inputs(layout, dtype, _uniform(rng, layout), _uniform(rng, layout))
    return run(x, gy, tanh_approx), [g * _fd(f, x64)]


@case("silu_bwd", fd=True)
def _silu(rng, layout, dtype, run):
    (x, gy), (x64, g) = _inputs(layout, dtype, _uniform(rng, layout), _uniform(rng, layout))
    return run(x, gy), [g * _fd(lambda t: t / (1 + np.exp(-t)), x64)]


@case("mul_bwd")
def _mul(rng, layout, dtype, run):
    args, (x, y, gz) = _inputs(layout, dtype, *(_uniform(rng, layout) for _ in range(3)))
    return run(*args), [gz * y, gz * x]


@case("div_bwd")
def _div(rng, layout, dtype, run):
    y = _uniform(rng, layout, 0.5, 2.0) * rng.choice([-1.0, 1.0], SHAPES[layout])
    args, (x, y, gz) = _inputs(layout, dtype, _uniform(rng, layout), y, _uniform(rng, layout))
    return run(*args), [gz / y, -gz * x / y ** 2]


@case("pow_bwd", fd=True, p=2)
@case("pow_bwd", fd=True, p=3)
@case("pow_bwd", fd=True, p=-2)     # integral exponents: multiplied out in the kernel
@case("pow_bwd", fd=True, p=1)
@case("pow_bwd", fd=True, p=18)     # past the multiplied-out range: pow
@case("pow_bwd", fd=True, p=0.5)
@case("pow_bwd", fd=True, p=-1.5)
def _pow(rng, layout, dtype, run, p):
    low = -3.0 if float(p).is_integer() else 0.2   # fractional powers of negatives are nan
    high = 1.5 if abs(p) > 8 else 3.0                # large powers: keep the values moderate
    x = _uniform(rng, layout, low, high)
    if p < 0:
        x[np.abs(x) < 0.3] = 0.3                     # away from the pole at 0
    (x, gy), (x64, g) = _inputs(layout, dtype, x, _uniform(rng, layout))
    return run(x, gy, p), [g * _fd(lambda t: t ** p, x64)]


@case("mse_bwd", gy="scalar")
@case("mse_bwd", gy="full")
def _mse(rng, layout, dtype, run, gy):
    (x, target), (x64, t64) = _inputs(layout, dtype, _uniform(rng, layout), _uniform(rng, layout))
    gy = np.array(0.75, dtype) if gy == "scalar" else _arr(_uniform(rng, layout), dtype, layout)
    scale = 1 / max(x.size, 1)
    # d/dx of scale * sum(gy * (x - target)^2)
    return run(x, target, gy, scale), [2 * scale * (x64 - t64) * gy.astype(np.float64)]


@case("softmax_xent_bwd", fd=True)
def _softmax_xent(rng, layout, dtype, run):
    n, c = ROW_SHAPES[layout]
    z = rng.uniform(-3, 3, (n, c))
    target = rng.integers(0, c, n)
    target[3::4] = -1      # ignored rows
    target[5::8] = -100    # PyTorch's default ignore_index
    valid = target >= 0
    gy, scale = np.array(1.5, dtype), 1 / max(valid.sum(), 1)

    def row_losses(z):
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        picked = logp[np.arange(n), np.where(valid, target, 0)]
        return np.where(valid, -picked, 0.0) * (scale * 1.5)

    # Rows are independent, so one column perturbed in every row at once is a per-row FD.
    expected = np.zeros((n, c))
    for j in range(c):
        e = np.zeros((n, c))
        e[:, j] = 1e-6
        expected[:, j] = (row_losses(z + e) - row_losses(z - e)) / 2e-6
    logp = _arr(z - np.log(np.exp(z).sum(axis=1, keepdims=True)), dtype, layout)
    return run(logp, _arr(target, np.int64, layout), gy, scale), [expected]


def _log_softmax64(z):
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


@case("log_softmax")
def _log_softmax(rng, layout, dtype, run):
    n, c = ROW_SHAPES[layout]
    z = rng.uniform(-3, 3, (n, c))
    z[2::5] += 80.0   # large logits: the max is taken out before exp
    (za,), (z64,) = _inputs(layout, dtype, z)
    return run(za), [_log_softmax64(z64)]   # exp(83) is finite in float64: no max needed


@case("sum_rows")
def _sum_rows(rng, layout, dtype, run):
    (x,), (x64,) = _inputs(layout, dtype, rng.uniform(-3, 3, ROW_SHAPES[layout]))
    return run(x), [x64.sum(axis=0)]


@case("log_softmax_bwd", fd=True)
def _log_softmax_bwd(rng, layout, dtype, run):
    n, c = ROW_SHAPES[layout]
    z, g = rng.uniform(-3, 3, (n, c)), rng.uniform(-1, 1, (n, c))
    # Rows are independent: one column perturbed in every row at once is a per-row FD of
    # sum_j g_j * log_softmax(z)_j.
    expected = np.zeros((n, c))
    for j in range(c):
        e = np.zeros((n, c))
        e[:, j] = 1e-6
        expected[:, j] = ((g * (_log_softmax64(z + e) - _log_softmax64(z - e))).sum(axis=1)
                          / 2e-6)
    (y, gy), _ = _inputs(layout, dtype, _log_softmax64(z), g)
    return run(y, gy), [expected]


@case("nll_fwd", weights=False)
@case("nll_fwd", weights=True)
def _nll(rng, layout, dtype, run, weights):
    n, c = ROW_SHAPES[layout]
    x = rng.uniform(-3, 3, (n, c))
    target = rng.integers(0, c, n)
    target[3::4] = -100   # ignored rows
    target[1::9], target[6::9] = c, -1   # out of range: NaN, where the GPU has no check
    w = rng.uniform(0.5, 2.0, c) if weights else None
    loss, wr = np.zeros(n), np.zeros(n)
    for i, t in enumerate(target):
        if t in (c, -1):
            loss[i] = wr[i] = np.nan
        elif t != -100:
            wr[i] = w[t] if weights else 1.0
            loss[i] = -wr[i] * x[i, t]
    (xa,), _ = _inputs(layout, dtype, x)
    wa = None if w is None else _arr(w, dtype, layout)
    return run(xa, _arr(target, np.int64, layout), wa, -100), [loss, wr]


@case("accumulate_grad", src="same")
@case("accumulate_grad", src="float64")
def _accumulate(rng, layout, dtype, run, src):
    (dst,), (d64,) = _inputs(layout, dtype, _uniform(rng, layout))
    (s,), (s64,) = _inputs(layout, dtype if src == "same" else np.float64, _uniform(rng, layout))
    expected = d64 + s64
    return run(dst, s), [expected]


SGD_CONFIGS = {
    "plain": dict(momentum=0.0),
    "plain_nobuf": dict(momentum=0.0, buf=None),
    "momentum": dict(momentum=0.9),
    "nesterov_wd": dict(momentum=0.9, nesterov=True, weight_decay=0.01),
    "dampening_wd": dict(momentum=0.8, dampening=0.3, weight_decay=0.05),
}


@case("sgd_step", config="plain")
@case("sgd_step", config="plain_nobuf")
@case("sgd_step", config="momentum")
@case("sgd_step", config="nesterov_wd")
@case("sgd_step", config="dampening_wd")
def _sgd(rng, layout, dtype, run, config, steps=3):
    hp = dict(lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, buf=0)
    hp.update(SGD_CONFIGS[config])
    lr, mom, damp, wd, nesterov = (hp[k] for k in
                                   ("lr", "momentum", "dampening", "weight_decay", "nesterov"))
    (p, buf), (P, B) = _inputs(layout, dtype, _uniform(rng, layout), np.zeros(SHAPES[layout]))
    buf = None if hp["buf"] is None else buf
    for t in range(steps):   # PyTorch's SGD, written out in float64
        (g,), (G,) = _inputs(layout, dtype, _uniform(rng, layout))
        res = run(p, g, buf, lr, mom, damp, wd, nesterov, t == 0)
        p = _arr(res[0], dtype, layout)
        buf = None if buf is None else _arr(res[1], dtype, layout)
        D = G + wd * P
        if mom:
            B = D.copy() if t == 0 else mom * B + (1 - damp) * D
            D = D + mom * B if nesterov else B
        P = P - lr * D
    return [p] + ([] if buf is None else [buf]), [P] + ([] if buf is None else [B])


@case("adam_step", weight_decay=0.0, decoupled=False)
@case("adam_step", weight_decay=0.1, decoupled=False)
@case("adam_step", weight_decay=0.1, decoupled=True)
def _adam(rng, layout, dtype, run, weight_decay, decoupled, steps=3):
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, weight_decay
    zeros = np.zeros(SHAPES[layout])
    (p, m, v), (P, M, V) = _inputs(layout, dtype, _uniform(rng, layout), zeros, zeros)
    for t in range(1, steps + 1):   # Adam / AdamW with bias correction, written out in float64
        (g,), (G,) = _inputs(layout, dtype, _uniform(rng, layout))
        p, m, v = (_arr(a, dtype, layout)
                   for a in run(p, g, m, v, lr, b1, b2, eps, wd, t, decoupled))
        if decoupled:
            P = P * (1 - lr * wd)
        else:
            G = G + wd * P
        M = b1 * M + (1 - b1) * G
        V = b2 * V + (1 - b2) * G ** 2
        m_hat, v_hat = M / (1 - b1 ** t), V / (1 - b2 ** t)
        P = P - lr * m_hat / (np.sqrt(v_hat) + eps)
    return [p, m, v], [P, M, V]


def _results(k, args, out):
    """What a call produced: its outputs, or the arrays it updated in place."""
    if k.outputs == 0:
        return [args[i] for i in k.inplace if args[i] is not None]
    return [out] if k.outputs == 1 else list(out)


def _ref_runner(k):
    return lambda *args: _results(k, args, k.ref(np, *args))


def _to_cupy(cp, a):
    if not isinstance(a, np.ndarray):
        return a
    if a.ndim == 0 or a.flags.c_contiguous:
        return cp.asarray(a)
    full = cp.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)   # keep the strided layout
    full[..., ::2] = cp.asarray(np.ascontiguousarray(a))
    return full[..., ::2]


def _gpu_runner(k, cp):
    def run(*args):
        dev = [_to_cupy(cp, a) for a in args]
        out = k(*dev)   # CuPy arrays: Kernel dispatches to the CUDA launch
        return [cp.asnumpy(r) for r in _results(k, dev, out)]
    return run


def _binding_runner(k):
    """Checks the CuPy launcher's argument binding (with numpy arrays), then runs the reference."""
    ref = _ref_runner(k)

    def run(*args):
        entry, kargs, n, outputs, _ = _cuda_kernels.bind(k, args, np)
        params = _cuda_kernels.entries_of(k.source)[entry]
        assert entry == f"{k.name}_{_cuda_kernels.CTYPES[args[0].dtype]}"
        assert len(kargs) == len(params) and len(outputs) == k.outputs
        values = dict(zip((p.name for p in params), kargs))
        assert values["n"] == args[0].size == n
        rows = n // int(values["cols"]) if values.get("cols") else n
        for p, v in zip(params, kargs):
            if not p.pointer:
                assert type(v) is _C_DTYPES[p.ctype], p
            elif isinstance(v, np.ndarray):
                assert v.flags.c_contiguous and v.dtype == _C_DTYPES[p.ctype], p
                stride = values.get(f"{p.name}_stride")
                per_row = "cols" in values and (stride is not None or p.ctype == "long long"
                                                or p.name.endswith("_row"))
                per_col = "cols" in values and p.name.endswith("_col")
                assert v.size == (1 if stride == 0 else rows if per_row
                                  else int(values["cols"]) if per_col else n), p
            else:
                assert type(v) is np.uint64 and v == 0, p   # null for an unused buffer
        return ref(*args)
    return run


def _host_runner(k, lib, grid_x=1, block_x=1):
    """Runs the kernel's own source compiled for the host (tests/host_cuda.py), bound by the
    CuPy launcher's binding, as a launch of ``grid_x`` blocks of ``block_x`` threads."""
    def run(*args):
        entry, kargs, n, outputs, writeback = _cuda_kernels.bind(k, args, np)
        if n:
            host_cuda.call(lib, entry, kargs, grid_x=grid_x, block_x=block_x)
        for a, copy in writeback:
            a[...] = copy
        out = None if not k.outputs else outputs[0] if k.outputs == 1 else tuple(outputs)
        return _results(k, args, out)
    return run


_case_params = pytest.mark.parametrize("label", list(CASES))
_layout_params = pytest.mark.parametrize("layout", LAYOUTS)
_dtype_params = pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)


# -- references == unfused math (CPU) ----------------------------------------------------------
@_dtype_params
@_layout_params
@_case_params
def test_reference_matches_unfused_math(label, layout, dtype):
    name, make, fd = CASES[label]
    got, expected = make(np.random.default_rng(0), layout, dtype, _ref_runner(REGISTRY[name]))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == dtype and g.shape == e.shape
        np.testing.assert_allclose(g, e, **(FD_TOL if fd else REF_TOL)[dtype])


@_dtype_params
@pytest.mark.parametrize("layout", ["1", "strided"])
@_case_params
def test_launcher_binds_reference_arguments(label, layout, dtype):
    name, make, _ = CASES[label]
    make(np.random.default_rng(0), layout, dtype, _binding_runner(REGISTRY[name]))


def test_launcher_rejects_unsupported_dtype():
    x = np.ones(3, np.float16)
    with pytest.raises(TypeError, match="float16"):
        _cuda_kernels.bind(REGISTRY["relu_bwd"], (x, x), np)


def test_launcher_rejects_none_scalar():
    x = np.ones(3)
    with pytest.raises(TypeError, match="slope must be a number"):
        _cuda_kernels.bind(REGISTRY["leaky_relu_bwd"], (x, x, None), np)


def test_launcher_checks_argument_count():
    x = np.ones(3)
    with pytest.raises(TypeError, match=r"relu_bwd\(\) takes 2 arguments"):
        _cuda_kernels.bind(REGISTRY["relu_bwd"], (x,), np)


# -- kernels == references (the host) ----------------------------------------------------------
# Kernels whose threads never talk to each other (grid-stride loops over elements or rows) run
# on the host; those that share memory or shuffle within a warp can only run on a GPU.
HOST_KERNELS = sorted(name for name, k in REGISTRY.items() if not re.search(
    r"__shared__|__shfl|__syncthreads|warpSize", (KERNEL_DIR / k.source).read_text()))


@_dtype_params
@_layout_params
@pytest.mark.parametrize("label", [c for c in CASES if CASES[c][0] in HOST_KERNELS])
def test_kernel_matches_reference_on_the_host(host_libs, label, layout, dtype):
    name, make, _ = CASES[label]
    k = REGISTRY[name]
    want, _ = make(np.random.default_rng(0), layout, dtype, _ref_runner(k))
    got, _ = make(np.random.default_rng(0), layout, dtype, _host_runner(k, host_libs(name)))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **GPU_TOL[dtype])


@pytest.mark.parametrize("grid_x, block_x", [(3, 5), (2, 64)])
@pytest.mark.parametrize("label", [c for c in CASES if CASES[c][0] in HOST_KERNELS])
def test_kernel_covers_every_element_once_at_any_launch_geometry(host_libs, label, grid_x,
                                                                 block_x):
    # On a GPU every thread runs the grid-stride loop from its own start: a stride of 15
    # (3 blocks of 5) or 128 against rows of 33 values exercises the index arithmetic that a
    # one-thread host run never reaches (softmax_xent_bwd steps its row and column with i).
    name, make, _ = CASES[label]
    k = REGISTRY[name]
    runner = _host_runner(k, host_libs(name), grid_x, block_x)
    want, _ = make(np.random.default_rng(1), "1023", np.float64, _ref_runner(k))
    got, _ = make(np.random.default_rng(1), "1023", np.float64, runner)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **GPU_TOL[np.float64])


def test_most_kernels_run_on_the_host():
    assert len(HOST_KERNELS) >= len(REGISTRY) - 3, HOST_KERNELS


# -- kernels == references (GPU) ---------------------------------------------------------------
@pytest.mark.gpu
@_dtype_params
@_layout_params
@_case_params
def test_kernel_matches_reference_on_gpu(cupy, label, layout, dtype):
    name, make, _ = CASES[label]
    k = REGISTRY[name]
    want, _ = make(np.random.default_rng(0), layout, dtype, _ref_runner(k))
    got, _ = make(np.random.default_rng(0), layout, dtype, _gpu_runner(k, cupy))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **GPU_TOL[dtype])
    assert _cuda_kernels.COMPILE_SECONDS[name] > 0


@pytest.mark.gpu
def test_kernel_updates_strided_view_in_place_on_gpu(cupy):
    base = cupy.zeros((4, 6), cupy.float32)
    dst = base[:, ::2]
    REGISTRY["accumulate_grad"](dst, cupy.ones((4, 3), cupy.float32))
    np.testing.assert_array_equal(cupy.asnumpy(base), np.tile([1, 0], (4, 3)))


@pytest.mark.parametrize("name, extra", [
    ("sgd_step", (0.1, 0.9, 0.0, 0.01, True, False)),
    ("adam_step", (1e-3, 0.9, 0.999, 1e-8, 0.01, 3, True)),
])
def test_optimizer_references_update_large_arrays_in_slices_bit_for_bit(name, extra):
    # large contiguous arrays go through 64K-element slices (bounded temporaries): same bits
    ref = REGISTRY[name].ref
    rng = np.random.default_rng(0)
    shape = (300, 700)   # > 64K elements, not a multiple of the slice
    p, g = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    state = [rng.random(shape).astype(np.float32) for _ in range(2 if name == "adam_step" else 1)]
    p2, state2 = p.copy(), [s.copy() for s in state]
    if name == "sgd_step":
        ref(np, p, g, state[0], *extra)
        ref.__wrapped__(np, p2, g, state2[0], *extra)
    else:
        ref(np, p, g, *state, *extra)
        ref.__wrapped__(np, p2, g, *state2, *extra)
    np.testing.assert_array_equal(p, p2)
    for a, b in zip(state, state2):
        np.testing.assert_array_equal(a, b)


# -- an upstream gradient that is one value expanded (the gradient of a sum) -----------------
def _expanded_gradient_cases():
    """(kernel name, index of its upstream-gradient argument) for entries with a stride for it."""
    out = []
    for name, k in sorted(REGISTRY.items()):
        params = {p.name for p in _cuda_kernels.entries_of(k.source)[f"{name}_float"]}
        names = _cuda_kernels._ref_names(k.ref)
        for g in ("gy", "gz"):
            if g in names and f"{g}_stride" in params and "cols" not in params:
                out.append((name, names.index(g)))
    return out


EXPANDED = _expanded_gradient_cases()


def _expanded_args(name, index, dtype):
    from gpugrad.bench import kernel_args
    args = [a.astype(dtype) if isinstance(a, np.ndarray) else a
            for a in kernel_args(name, "cpu", 1023)]
    args[index] = np.broadcast_to(np.asarray(0.75, dtype), (1023,))   # strides (0,)
    return args


def test_expanded_gradient_cases_cover_the_elementwise_backward_kernels():
    assert {n for n, _ in EXPANDED} == {"relu_bwd", "leaky_relu_bwd", "sigmoid_bwd", "tanh_bwd",
                                        "gelu_bwd", "silu_bwd", "pow_bwd", "mul_bwd", "div_bwd",
                                        "mse_bwd"}


@pytest.mark.parametrize("name, index", EXPANDED, ids=[n for n, _ in EXPANDED])
def test_expanded_gradient_binds_one_value_without_a_copy(name, index):
    k = REGISTRY[name]
    args = _expanded_args(name, index, np.float32)
    _, kargs, n, _, _ = _cuda_kernels.bind(k, args, np)
    params = [p.name for p in _cuda_kernels.entries_of(k.source)[f"{name}_float"]]
    g = _cuda_kernels._ref_names(k.ref)[index]
    values = dict(zip(params, kargs))
    assert n == 1023 and values[f"{g}_stride"] == 0 and values[g].shape == (1,)
    assert values[g][0] == np.float32(0.75)


@pytest.mark.gpu
@_dtype_params
@pytest.mark.parametrize("name, index", EXPANDED, ids=[n for n, _ in EXPANDED])
def test_expanded_gradient_matches_reference_on_gpu(cupy, name, index, dtype):
    k = REGISTRY[name]
    args = _expanded_args(name, index, dtype)
    want = _results(k, args, k.ref(np, *args))
    dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    dev[index] = cupy.broadcast_to(cupy.asarray(0.75, dtype), (1023,))
    got = [cupy.asnumpy(r) for r in _results(k, dev, k(*dev))]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, **GPU_TOL[dtype])


@pytest.mark.gpu
def test_half_precision_runs_the_reference_through_cupy(cupy):
    # the .cu entries are float/double; other dtypes run the (array-module generic) reference
    x = np.linspace(-4, 4, 9, dtype=np.float16)
    y = REGISTRY["sigmoid"](cupy.asarray(x))
    assert isinstance(y, cupy.ndarray) and y.dtype == np.float16
    np.testing.assert_allclose(cupy.asnumpy(y), 1 / (1 + np.exp(-x.astype(np.float64))),
                               rtol=2e-3, atol=2e-3)
    gx = REGISTRY["relu_bwd"](cupy.asarray(np.maximum(x, 0)), cupy.ones(9, np.float16))
    np.testing.assert_array_equal(cupy.asnumpy(gx), (x > 0).astype(np.float16))


ROW_KERNELS = ("softmax_xent_bwd", "log_softmax", "log_softmax_bwd", "nll_fwd", "sum_rows")


@pytest.mark.gpu
@_dtype_params
@pytest.mark.parametrize("cols", [1, 2, 3, 7, 10, 31, 32, 33, 1000, 1024, 1025, 4097])
@pytest.mark.parametrize("name", ROW_KERNELS)
def test_row_kernels_at_every_row_length_on_gpu(cupy, name, cols, dtype):
    # Row-wise kernels switch strategy with the row length (one thread per element or per row,
    # one warp per row, the row in registers up to 1024 values, several passes beyond): check
    # every row boundary at lengths around each switch.
    rng = np.random.default_rng(cols)
    rows = max(1, 200_000 // cols)
    z = rng.standard_normal((rows, cols)).astype(dtype)
    logp = (z - np.log(np.exp(z.astype(np.float64)).sum(axis=1, keepdims=True))).astype(dtype)
    target = rng.integers(-1, cols, rows)            # -1: an ignored row
    args = {"softmax_xent_bwd": (logp, target, rng.standard_normal(rows).astype(dtype), 0.5),
            "log_softmax": (z,),
            "sum_rows": (z,),
            "log_softmax_bwd": (logp, rng.standard_normal((rows, cols)).astype(dtype)),
            "nll_fwd": (z, target, rng.uniform(0.5, 2, cols).astype(dtype), -1)}[name]
    k = REGISTRY[name]
    want = _results(k, args, k.ref(np, *args))
    dev = [cupy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    got = _results(k, dev, k(*dev))
    for g, w in zip(got, want):
        np.testing.assert_allclose(cupy.asnumpy(g), w, **GPU_TOL[dtype])


# -- gemm: a product with its own binding (shapes and strides, not elementwise) ----------------
GEMM_LAYOUTS = {   # (m, k, n) and how each operand lies in memory
    "contiguous": ((5, 7, 3), False, False),
    "a_transposed": ((4, 6, 9), True, False),
    "b_transposed": ((8, 33, 2), False, True),    # linear: input @ weight.T
    "row_by_column": ((1, 31, 1), True, True),
    "empty_sum": ((3, 0, 4), False, False),
}


def _gemm_operands(rng, layout, dtype):
    (m, k, n), a_t, b_t = GEMM_LAYOUTS[layout]
    a = rng.uniform(-2, 2, (k, m) if a_t else (m, k)).astype(dtype)
    b = rng.uniform(-2, 2, (n, k) if b_t else (k, n)).astype(dtype)
    return (a.T if a_t else a), (b.T if b_t else b)


@_dtype_params
@pytest.mark.parametrize("layout", GEMM_LAYOUTS)
@pytest.mark.parametrize("grid_x, block_x", [(1, 1), (3, 5)])
def test_gemm_matches_the_product_on_the_host(host_libs, layout, dtype, grid_x, block_x):
    a, b = _gemm_operands(np.random.default_rng(0), layout, dtype)
    k = REGISTRY["gemm"]
    entry, kargs, n, outputs, writeback = _cuda_kernels.bind(k, (a, b), np)
    assert entry == f"gemm_{_cuda_kernels.CTYPES[np.dtype(dtype)]}" and not writeback
    assert kargs[0] is a and kargs[1] is b   # strided operands are read in place, not copied
    if n:
        host_cuda.call(host_libs("gemm"), entry, kargs, grid_x=grid_x, block_x=block_x)
    (out,) = outputs
    assert out.shape == (a.shape[0], b.shape[1]) and out.dtype == dtype
    np.testing.assert_allclose(out, a.astype(np.float64) @ b.astype(np.float64),
                               **GPU_TOL[dtype])


def test_gemm_binding_refuses_what_it_cannot_multiply():
    k = REGISTRY["gemm"]
    with pytest.raises(ValueError, match=r"gemm: shapes \(2, 3\) and \(4, 2\) cannot be"):
        _cuda_kernels.bind(k, (np.ones((2, 3)), np.ones((4, 2))), np)
    with pytest.raises(TypeError, match="gemm: expected two float32 or float64 matrices"):
        _cuda_kernels.bind(k, (np.ones((2, 3), np.float32), np.ones((3, 2))), np)


def test_matmul_takes_the_kernel_only_while_a_graph_is_captured(monkeypatch):
    from gpugrad import kernels
    launched = []
    monkeypatch.setattr(kernels, "gemm", lambda *args: launched.append(args))

    class FakeCupy:   # stands for CuPy: anything but numpy
        matmul = staticmethod(np.matmul)
    a, b = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    assert kernels.matmul(FakeCupy, a, b).shape == (2, 4) and not launched
    monkeypatch.setattr(_backend.captures, "count", 1)
    kernels.matmul(FakeCupy, a, b)
    assert len(launched) == 1
    kernels.matmul(FakeCupy, a[None], b[None])   # batched: not the kernel's
    kernels.matmul(FakeCupy, a.astype(np.float16), b.astype(np.float16))
    assert len(launched) == 1


@pytest.mark.gpu
@_dtype_params
@pytest.mark.parametrize("layout", GEMM_LAYOUTS)
def test_gemm_matches_the_product_on_gpu(cupy, layout, dtype):
    a, b = _gemm_operands(np.random.default_rng(0), layout, dtype)
    ga, gb = _to_cupy(cupy, np.ascontiguousarray(a)), _to_cupy(cupy, np.ascontiguousarray(b))
    ga = ga if a.flags.c_contiguous else cupy.ascontiguousarray(ga.T).T
    gb = gb if b.flags.c_contiguous else cupy.ascontiguousarray(gb.T).T
    out = REGISTRY["gemm"](ga, gb)
    np.testing.assert_allclose(cupy.asnumpy(out), a.astype(np.float64) @ b.astype(np.float64),
                               **GPU_TOL[dtype])


def _fast_vs_general_runner(k):
    """Binds each call both ways: the generated fast binding either declines (None) or gives
    exactly the general binding's entry, arguments, size and output shapes."""
    ref = _ref_runner(k)

    def run(*args):
        fast = _cuda_kernels._fast_binder(k, args[0].dtype, np)(args)
        general = _cuda_kernels._bind(k, args, np)
        if fast is not None:
            assert fast[0] == general[0] and fast[2] == general[2] and not fast[4]
            assert len(fast[1]) == len(general[1])
            for f, g in zip(fast[1], general[1]):
                if isinstance(g, np.ndarray) and any(g is o for o in general[3]):
                    assert f.shape == g.shape and f.dtype == g.dtype   # a fresh output
                elif isinstance(g, np.ndarray):
                    assert f is g or (f.size == g.size == 1 and f.reshape(1)[0] == g[0])
                else:
                    assert type(f) is type(g) and f == g
            run.fast += 1
        return ref(*args)
    run.fast = 0
    return run


@_dtype_params
@_layout_params
@pytest.mark.parametrize("label", list(CASES))
def test_fast_binding_gives_the_general_bindings_arguments(label, layout, dtype):
    name, make, _ = CASES[label]
    runner = _fast_vs_general_runner(REGISTRY[name])
    make(np.random.default_rng(0), layout, dtype, runner)
    if layout != "strided" and "src=float64" not in label:   # contiguous, of the entry's
        assert runner.fast > 0, label                           # dtype: the fast path serves


@pytest.mark.gpu
def test_forward_ops_launch_the_lean_kernels_when_their_operands_fit(monkeypatch):
    """add, sub, mul, relu and tanh of contiguous float CUDA arrays (with each other, or with a
    Python number) launch gpugrad's kernels; anything else (broadcasting, a strided view, an
    integer or half dtype, the switch off) keeps CuPy's ufuncs, with the same values."""
    from conftest import cuda_available

    import gpugrad
    from gpugrad import kernels
    if not cuda_available():
        pytest.skip("no CUDA device")
    launched, real = [], _cuda_kernels.launch
    monkeypatch.setattr(_cuda_kernels, "launch",
                        lambda k, args: (launched.append(k.name), real(k, args))[1])
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    a[0, 0] = np.nan
    x, y = (gpugrad.tensor(v, dtype=gpugrad.float32, device="cuda") for v in (a, b))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    lean = {"add": (lambda: x + y, a32 + b32), "mul": (lambda: x * y, a32 * b32),
            "add_scalar": (lambda: x + 0.5, a32 + np.float32(0.5)),
            "sub_scalar": (lambda: x - 0.1, a32 - np.float32(0.1)),
            "mul_scalar": (lambda: x * 1.01, a32 * np.float32(1.01)),
            "relu": (lambda: gpugrad.relu(x), np.maximum(a32, 0)),
            "tanh": (lambda: gpugrad.tanh(x), np.tanh(a32))}
    for name, (run, want) in lean.items():
        launched.clear()
        np.testing.assert_allclose(run().cpu().numpy(), want, rtol=2e-7, atol=0, err_msg=name)
        assert launched == [name.replace("sub", "add")], (name, launched)
    z = gpugrad.tensor(b[0], dtype=gpugrad.float32, device="cuda")
    i = gpugrad.tensor([[1, 2, 3]], device="cuda")
    h = x.half()
    for name, run in {"broadcast": lambda: x + z, "strided": lambda: x.t() * y.t(),
                      "integer": lambda: i * 2, "half": lambda: h + h,
                      "tensor minus tensor": lambda: x - y}.items():
        launched.clear()
        run()
        assert launched == [], (name, launched)
    monkeypatch.setattr(kernels.lean, "enabled", False)
    launched.clear()
    np.testing.assert_array_equal((x * y + 0.5).cpu().numpy(), a32 * b32 + np.float32(0.5))
    assert launched == []


@pytest.mark.parametrize("compiled", [True, False])
def test_gelu_cdf_stays_within_its_float32_error_bound(compiled, monkeypatch):
    """The exact GELU's gate on float32 arrays is (1 + tanh(x P(x^2))) / 2 (kernels._GELU_Y): at
    most 2e-7 from the double-precision value, inside [0, 1] (exactly 0 and 1 beyond |x| = 6,
    and at +-inf), NaN for NaN, and exact in float64; the same for the compiled loop
    (gpugrad/_cpu_kernels/activation.py) and the numpy passes."""
    from scipy import special

    from gpugrad import _cpu_kernels, kernels
    monkeypatch.setattr(_cpu_kernels, "_enabled", compiled)
    x = np.linspace(-9, 9, 2_000_001)
    exact = 0.5 * (1 + special.erf(x / math.sqrt(2)))
    got = kernels.gelu_cdf(x.astype(np.float32))
    assert got.dtype == np.float32
    if not compiled:   # blocks: the whole array's bits
        assert np.array_equal(got, kernels._gelu_cdf32(x.astype(np.float32)))
    assert np.abs(got - exact).max() <= 2e-7
    assert got.min() == 0 and got.max() == 1 and got[x.size // 2] == 0.5
    assert np.all(np.diff(got) >= 0)   # increasing, as Phi
    ends = kernels.gelu_cdf(np.array([-np.inf, -7, 7, np.inf, np.nan], np.float32))
    assert ends[:4].tolist() == [0, 0, 1, 1] and np.isnan(ends[4])
    np.testing.assert_allclose(kernels.gelu_cdf(x), exact, rtol=0, atol=1e-15)
    half = kernels.gelu_cdf(x[::1000].astype(np.float16))
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, exact[::1000], atol=1e-3)
