"""torch.accelerator answered from gpugrad.cuda: without a GPU there is no accelerator and what
needs one raises PyTorch's error; with one it is CUDA's current device."""
from __future__ import annotations

import warnings

import pytest

import gpugrad
import gpugrad.accelerator as acc

NONE = "^Cannot access accelerator device when none is available.$"


def test_the_accelerator_is_cuda_when_there_is_one():
    assert gpugrad.accelerator is acc
    assert acc.is_available() == gpugrad.cuda.is_available()
    assert acc.device_count() == gpugrad.cuda.device_count()
    if acc.is_available():
        assert acc.current_accelerator() == gpugrad.device("cuda")
        assert acc.current_accelerator(check_available=True).type == "cuda"
    else:
        assert acc.current_accelerator() is None and acc.device_count() == 0


@pytest.mark.skipif(gpugrad.cuda.is_available(), reason="a GPU is present")
def test_without_an_accelerator_device_queries_raise():
    for call in (acc.current_device_index, lambda: acc.set_device_index(0), acc.synchronize,
                 acc.memory_allocated, acc.empty_cache, lambda: acc.device_index(0).__enter__()):
        with pytest.raises(RuntimeError, match=NONE):
            call()
    with acc.device_index(None):    # None switches nothing, so needs no device
        pass


@pytest.mark.gpu
def test_with_a_gpu_the_index_is_cudas(device):
    if device != "cuda":
        pytest.skip("needs a GPU")
    assert acc.current_device_index() == gpugrad.cuda.current_device()
    acc.set_device_index(acc.current_device_index())
    acc.synchronize()
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    assert acc.memory_allocated() == gpugrad.cuda.memory_allocated()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert acc.current_device_idx() == acc.current_device_index()
    assert w[0].category is FutureWarning
