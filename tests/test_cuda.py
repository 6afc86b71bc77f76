"""The torch.cuda surface scripts use: device properties, memory figures, the GPU random
stream's seed and state, streams, events and the device/stream context managers. Without a GPU
each answers as PyTorch does without CUDA or raises gpugrad's clear error; what needs a GPU is
marked ``gpu`` and skips without one."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad import cuda

gpu = pytest.mark.skipif(not cuda.is_available(), reason="no CUDA device")
no_gpu = pytest.mark.skipif(cuda.is_available(), reason="checks the no-GPU behaviour")
MISSING = r"gpugrad\[cuda\]|nvidia-smi"


# -- without a GPU --------------------------------------------------------------------------------
@no_gpu
def test_without_a_gpu_queries_answer_as_pytorch_without_cuda():
    assert cuda.is_initialized() is False
    assert cuda.is_bf16_supported() is False
    assert cuda.memory_stats() == {}
    assert cuda.memory_reserved() == 0 and cuda.max_memory_reserved() == 0
    assert cuda.get_rng_state_all() == []
    assert "Allocated memory" in cuda.memory_summary()
    # lazy in PyTorch: nothing to do until CUDA exists
    assert cuda.seed() is None and cuda.seed_all() is None
    cuda.set_rng_state(gpugrad.zeros(8, dtype=gpugrad.uint8))
    cuda.set_rng_state_all([])
    cuda.reset_accumulated_memory_stats()
    with pytest.warns(FutureWarning, match="reset_max_memory_allocated now calls"):
        cuda.reset_max_memory_allocated()
    with cuda.stream(None):
        pass
    cuda.set_stream(None)
    with cuda.device(-1), cuda.device(None), cuda.device_of(gpugrad.zeros(1)):
        assert gpugrad.zeros(1).device == "cpu"


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: cuda.get_device_properties(0), cuda.get_device_capability, cuda.mem_get_info,
    cuda.initial_seed, cuda.get_rng_state, cuda.init, cuda.current_stream, cuda.default_stream,
    cuda.Stream, cuda.Event, lambda: cuda.device(0).__enter__()],
    ids=["get_device_properties", "get_device_capability", "mem_get_info", "initial_seed",
         "get_rng_state", "init", "current_stream", "default_stream", "Stream", "Event",
         "device"])
def test_without_a_gpu_device_calls_say_what_is_missing(call):
    with pytest.raises(RuntimeError, match=MISSING):
        call()


def test_a_cpu_device_is_rejected_as_pytorch_does():
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.device("cpu")
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.get_device_properties("cpu")


def test_names_match_torch_cuda():
    torch = pytest.importorskip("torch")
    names = ["get_device_properties", "get_device_capability", "mem_get_info", "memory_stats",
             "memory_summary", "memory_reserved", "max_memory_reserved", "seed", "seed_all",
             "reset_max_memory_allocated", "reset_accumulated_memory_stats", "initial_seed",
             "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
             "is_bf16_supported", "is_initialized", "init", "current_stream",
             "default_stream", "Stream", "Event", "stream", "set_stream", "device",
             "device_of", "StreamContext"]
    for name in names:
        assert hasattr(torch.cuda, name) and callable(getattr(cuda, name)), name


# -- with a GPU -----------------------------------------------------------------------------------
@pytest.mark.gpu
@gpu
def test_device_properties_agree_with_the_runtime():
    p = cuda.get_device_properties(0)
    assert p.name == cuda.get_device_name(0)
    assert cuda.get_device_capability() == (p.major, p.minor) and p.major >= 3
    assert p.multi_processor_count > 0
    free, total = cuda.mem_get_info()
    assert total == p.total_memory and 0 < free <= total
    assert p.name in repr(p)
    assert cuda.get_device_properties("cuda:0").name == p.name


@pytest.mark.gpu
@gpu
def test_memory_figures_follow_allocations():
    cuda.reset_peak_memory_stats()
    cuda.reset_accumulated_memory_stats()
    before = cuda.memory_allocated()
    x = gpugrad.zeros(1 << 20, dtype=gpugrad.float32, device="cuda")
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == cuda.memory_allocated() >= before + (4 << 20)
    assert stats["allocation.all.allocated"] >= 1
    assert stats["allocated_bytes.all.peak"] >= stats["allocated_bytes.all.current"]
    assert cuda.max_memory_reserved() >= cuda.memory_reserved() >= cuda.memory_allocated()
    del x
    assert cuda.memory_stats()["allocation.all.freed"] >= 1
    assert cuda.max_memory_allocated() >= before + (4 << 20)
    assert "Allocated memory" in cuda.memory_summary()
    cuda.init()
    assert cuda.is_initialized()


@pytest.mark.gpu
@gpu
def test_rng_state_round_trips_and_seeds():
    cuda.manual_seed(3)
    assert cuda.initial_seed() == 3
    state = cuda.get_rng_state()
    assert state.dtype == gpugrad.uint8 and state.shape == (8,)
    a = to_numpy(gpugrad.randn(6, device="cuda"))
    cuda.set_rng_state(state)
    np.testing.assert_array_equal(to_numpy(gpugrad.randn(6, device="cuda")), a)
    mid = cuda.get_rng_state()        # a stream already in use
    b = to_numpy(gpugrad.rand(5, device="cuda"))
    cuda.set_rng_state(mid)
    np.testing.assert_array_equal(to_numpy(gpugrad.rand(5, device="cuda")), b)
    assert cuda.initial_seed() == 3
    cuda.seed()
    assert cuda.initial_seed() != 3
    assert len(cuda.get_rng_state_all()) == cuda.device_count()
    with pytest.raises(RuntimeError, match="RNG state must be a torch.ByteTensor"):
        cuda.set_rng_state(gpugrad.zeros(8))


@pytest.mark.gpu
@gpu
def test_streams_events_and_contexts():
    assert cuda.default_stream().cuda_stream == 0
    s1, s2 = cuda.Stream(), cuda.Stream()
    assert s1 != s2 and s1.device == "cuda:0"
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with cuda.stream(s1):
        assert cuda.current_stream() == s1
        start.record()
        x = gpugrad.ones(1000, device="cuda") * 2
        end.record()
    assert cuda.current_stream() != s1
    s2.wait_stream(s1)
    with cuda.stream(s2):
        y = (x + 1).sum()
    s2.synchronize()
    assert s1.query() and s2.query() and end.query()
    assert float(y.item()) == 3000.0
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    ev = s1.record_event()
    ev.wait(s2)
    cuda.synchronize()
    with pytest.raises(RuntimeError, match=re.escape(
            "Both events must be created with argument 'enable_timing=True'.")):
        cuda.Event().elapsed_time(end)
    with pytest.raises(RuntimeError, match="Both events must be recorded"):
        cuda.Event(enable_timing=True).elapsed_time(end)
    with cuda.device(0), cuda.device_of(x):
        assert cuda.current_device() == 0
    cuda.set_stream(s1)
    assert cuda.current_stream() == s1
    cuda.set_stream(cuda.default_stream())
    assert cuda.current_stream().cuda_stream == 0
