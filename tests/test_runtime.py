"""Runtime settings: dtype facts (finfo / iinfo), threads and determinism flags, compile, vmap's
alias, matmul precision, anomaly / warn_always switches, typename / is_storage and the default
tensor type."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gpugrad


# -- dtype facts ----------------------------------------------------------------------------------
def test_finfo_iinfo():
    f = gpugrad.finfo(gpugrad.float32)
    assert (f.bits, f.eps, f.max, f.tiny, f.resolution, f.dtype) == (
        32, 2.0 ** -23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-6, "float32")
    assert f.min == -f.max and f.smallest_normal == f.tiny
    h = gpugrad.finfo(gpugrad.float16)
    assert (h.eps, h.max, h.tiny, h.resolution) == (2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3)
    assert gpugrad.finfo().dtype == "float32"
    assert gpugrad.finfo(gpugrad.float64).eps == 2.0 ** -52
    i = gpugrad.iinfo(gpugrad.int16)
    assert (i.bits, i.min, i.max, i.dtype) == (16, -32768, 32767, "int16")
    assert gpugrad.iinfo(gpugrad.uint8).max == 255
    with pytest.raises(TypeError, match="torch.finfo\\(\\) requires a floating point input type"):
        gpugrad.finfo(gpugrad.int32)
    with pytest.raises(TypeError, match="torch.iinfo\\(\\) requires an integer input type"):
        gpugrad.iinfo(gpugrad.float32)


def test_threads_and_determinism_flags():
    saved = gpugrad.get_num_threads(), gpugrad.are_deterministic_algorithms_enabled()
    try:
        gpugrad.set_num_threads(3)
        assert gpugrad.get_num_threads() == 3
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            gpugrad.set_num_threads(0)
        gpugrad.use_deterministic_algorithms(True, warn_only=True)
        assert gpugrad.are_deterministic_algorithms_enabled()
        assert gpugrad.is_deterministic_algorithms_warn_only_enabled()
    finally:
        gpugrad.set_num_threads(saved[0])
        gpugrad.use_deterministic_algorithms(saved[1])
    assert gpugrad.are_deterministic_algorithms_enabled() is saved[1]


# -- runtime switches -----------------------------------------------------------------------------
def test_compile_returns_what_it_is_given():
    def f(x):
        return x * 2
    assert gpugrad.compile(f) is f
    assert gpugrad.compile(f, mode="max-autotune", fullgraph=True) is f

    @gpugrad.compile
    def g(x):
        return x + 1

    @gpugrad.compile(dynamic=True, backend="eager")
    def h(x):
        return x - 1
    assert g(1) == 2 and h(1) == 0
    m = gpugrad.nn.Linear(2, 2)
    assert gpugrad.compile(m) is m


def test_vmap_alias():
    out = gpugrad.vmap(lambda r: r.sum())(gpugrad.ones(3, 2))
    assert out.tolist() == [2.0, 2.0, 2.0]


def test_matmul_precision_anomaly_warn_always():
    assert gpugrad.get_float32_matmul_precision() == "highest"
    try:
        gpugrad.set_float32_matmul_precision("high")
        assert gpugrad.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="x is not one of 'highest', 'high', or 'medium'"):
            gpugrad.set_float32_matmul_precision("x")
        assert gpugrad.get_float32_matmul_precision() == "high"
    finally:
        gpugrad.set_float32_matmul_precision("highest")
    assert not gpugrad.is_anomaly_enabled()
    gpugrad.set_anomaly_enabled(True, check_nan=False)
    assert gpugrad.is_anomaly_enabled() and not gpugrad.is_anomaly_check_nan_enabled()
    gpugrad.set_anomaly_enabled(False)
    assert not gpugrad.is_anomaly_enabled()
    try:
        gpugrad.set_warn_always(True)
        assert gpugrad.is_warn_always_enabled()
    finally:
        gpugrad.set_warn_always(False)
    assert not gpugrad.is_warn_always_enabled()


def test_typename_is_storage_is_inference():
    assert gpugrad.typename(gpugrad.zeros(1)) == "gpugrad.FloatTensor"
    assert gpugrad.typename(gpugrad.zeros(1, dtype=gpugrad.int64)) == "gpugrad.LongTensor"
    assert gpugrad.typename(1) == "int"
    assert gpugrad.typename(gpugrad.nn.Linear(1, 1)).endswith(".Linear")
    assert gpugrad.typename(np.ndarray) == "numpy.ndarray"
    assert not gpugrad.is_storage(gpugrad.zeros(1))
    with gpugrad.inference_mode():
        t = gpugrad.zeros(1)
    assert gpugrad.is_inference(t) and not gpugrad.is_inference(gpugrad.zeros(1))


def test_set_default_tensor_type():
    with pytest.warns(UserWarning, match=r"set_default_tensor_type\(\) is deprecated"):
        gpugrad.set_default_tensor_type("torch.DoubleTensor")
    assert gpugrad.get_default_dtype() == gpugrad.float64
    assert gpugrad.tensor([1.0]).dtype == gpugrad.float64
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gpugrad.set_default_tensor_type("torch.FloatTensor")
        assert gpugrad.get_default_dtype() == gpugrad.float32
        with pytest.raises(TypeError, match="only floating-point types are supported as the "
                                            "default type"):
            gpugrad.set_default_tensor_type("torch.IntTensor")
