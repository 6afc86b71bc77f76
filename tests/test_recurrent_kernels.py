"""The recurrent cells' fused kernels (``lstm_cell``, ``gru_cell`` and their backwards): each
numpy reference against the gate math written out in float64, each CUDA source run on the host
(tests/host_cuda.py) and on a GPU against its reference, and the binding that sizes them."""
from __future__ import annotations

import host_cuda
import numpy as np
import pytest

import gpugrad
from gpugrad import _backend, _cuda_kernels, kernels
from gpugrad.kernels import REGISTRY
from tests.test_kernels import SIMULATED

DTYPES = (np.float32, np.float64)
TOL = {np.float32: dict(rtol=2e-5, atol=2e-6), np.float64: dict(rtol=1e-12, atol=1e-13)}
CELLS = ("lstm_cell", "lstm_cell_bwd", "gru_cell", "gru_cell_bwd")
SHAPES = [(3, 5), (1, 1), (0, 4)]   # (rows, hidden)


def sig(x):
    return 1 / (1 + np.exp(-x))


def lstm_unfused(hh, gi, b, c):
    i, f, g, o = np.split(hh + gi + (0 if b is None else b), 4, axis=1)
    i, f, g, o = sig(i), sig(f), np.tanh(g), sig(o)
    c_new = f * c + i * g
    return o * np.tanh(c_new), c_new, np.stack([i, f, g, o, np.tanh(c_new)])


def lstm_bwd_unfused(act, c, gh, gc):
    i, f, g, o, tc = act
    gh = 0 * c if gh is None else gh
    dc_new = (0 if gc is None else gc) + gh * o * (1 - tc ** 2)
    d = np.concatenate([dc_new * g * i * (1 - i), dc_new * c * f * (1 - f),
                        dc_new * i * (1 - g ** 2), gh * tc * o * (1 - o)], axis=1)
    return d, dc_new * f


def gru_unfused(gi, hh, b, h):
    gh = hh + (0 if b is None else b)
    (i_r, i_z, i_n), (h_r, h_z, h_n) = np.split(gi, 3, axis=1), np.split(gh, 3, axis=1)
    r, z = sig(i_r + h_r), sig(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h, np.stack([r, z, n, h_n])


def gru_bwd_unfused(act, h, gy):
    r, z, n, ghn = act
    dn = gy * (1 - z) * (1 - n ** 2)
    dz = gy * (h - n) * z * (1 - z)
    dr = dn * ghn * r * (1 - r)
    return (np.concatenate([dr, dz, dn], 1), np.concatenate([dr, dz, dn * r], 1), gy * z)


def _args(name, rows, hidden, dtype, variant, rng):
    """The kernel's arguments and the float64 copies the unfused math reads. ``variant``:
    'plain' (C-ordered, every input), 'fortran' (hh as BLAS gives (W h^T)^T), 'none' (no bias;
    for lstm_cell_bwd no gh, for the others no gc)."""
    def u(*shape, lo=-3.0, hi=3.0):
        return rng.uniform(lo, hi, shape).astype(dtype)
    k = 4 if name.startswith("lstm") else 3
    if name in ("lstm_cell", "gru_cell"):
        hh, gi, b, state = u(rows, k * hidden), u(rows, k * hidden), u(k * hidden), u(rows, hidden)
        if variant == "fortran":
            hh = np.asfortranarray(hh)
        if variant == "none":
            b = None
        args = (hh, gi, b, state) if name == "lstm_cell" else (gi, hh, b, state)
    elif name == "lstm_cell_bwd":
        _, _, act = lstm_unfused(u(rows, 4 * hidden), u(rows, 4 * hidden), None,
                                 u(rows, hidden))
        args = (act.astype(dtype), u(rows, hidden), u(rows, hidden), u(rows, hidden))
        if variant == "none":
            args = args[:2] + (None, args[3]) if rows % 2 else args[:3] + (None,)
    else:
        _, act = gru_unfused(u(rows, 3 * hidden), u(rows, 3 * hidden), None, u(rows, hidden))
        args = (act.astype(dtype), u(rows, hidden), u(rows, hidden))
    return args, [None if a is None else a.astype(np.float64) for a in args]


UNFUSED = {"lstm_cell": lstm_unfused, "lstm_cell_bwd": lstm_bwd_unfused, "gru_cell": gru_unfused,
           "gru_cell_bwd": gru_bwd_unfused}
VARIANTS = ("plain", "fortran", "none")


def _check(got, want, dtype):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", CELLS)
def test_reference_matches_unfused_math(name, shape, variant, dtype):
    args, args64 = _args(name, *shape, dtype, variant, np.random.default_rng(0))
    _check(REGISTRY[name].ref(np, *args), UNFUSED[name](*args64), dtype)


@pytest.mark.parametrize("name", CELLS)
def test_binding_sizes_outputs_from_the_state(name):
    args, _ = _args(name, 3, 5, np.float32, "fortran", np.random.default_rng(0))
    k = REGISTRY[name]
    entry, values, n, outputs, writeback = _cuda_kernels.bind(k, args, np)
    want = [o.shape for o in k.ref(np, *args)]
    assert entry == f"{name}_float" and n == 15 and not writeback
    assert [o.shape for o in outputs] == want
    params = _cuda_kernels.entries_of(k.source)[entry]
    assert len(values) == len(params)
    for p, v in zip(params, values):
        if p.pointer and isinstance(v, np.ndarray):
            assert v.flags.c_contiguous and v.dtype == np.float32
    with pytest.raises(TypeError, match="float32 and float64"):
        _cuda_kernels.bind(k, tuple(a if a is None else a.astype(np.float16) for a in args), np)


@pytest.mark.parametrize("grid", [(1, 1), (3, 5)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", CELLS)
def test_kernel_matches_reference_on_the_host(host_libs, name, shape, variant, dtype, grid):
    args, _ = _args(name, *shape, dtype, variant, np.random.default_rng(0))
    k = REGISTRY[name]
    entry, values, n, outputs, _ = _cuda_kernels.bind(k, args, np)
    if n:
        host_cuda.call(host_libs(name), entry, values, grid_x=grid[0], block_x=grid[1])
    _check(outputs, k.ref(np, *args), dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("name", CELLS)
def test_kernel_matches_reference_on_gpu(name, variant, dtype):
    cp = _backend.cupy_module()
    if cp is None or SIMULATED or not gpugrad.cuda.is_available():
        pytest.skip("compares compiled kernels with their references: needs a real GPU")
    args, _ = _args(name, 33, 70, dtype, variant, np.random.default_rng(0))
    got = getattr(kernels, name)(*(None if a is None else cp.asarray(a) for a in args))
    _check([cp.asnumpy(g) for g in got], REGISTRY[name].ref(np, *args), dtype)
