"""Shared fixtures: the ``device`` every core test runs on, and helpers to read tensors back."""
from __future__ import annotations

import importlib
import os
import sys

import numpy as np
import pytest

import gpugrad
from gpugrad import nn

if os.environ.get("GPUGRAD_CUPY_SIM") == "1":   # the CUDA halves against simulated CuPy
    import cupy_sim
    cupy_sim.install()


def cuda_available() -> bool:
    """True when gpugrad can run on a CUDA device (False while ``gpugrad.cuda`` is missing)."""
    try:
        cuda = importlib.import_module("gpugrad.cuda")
        return bool(getattr(cuda, "is_available", lambda: False)())
    except Exception:
        return False


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def device(request):
    """Each test taking ``device`` runs once on the CPU and once on CUDA (skipped without one)."""
    if request.param == "cuda" and not cuda_available():
        pytest.skip("no CUDA device (gpugrad.cuda.is_available() is false)")
    return request.param


@pytest.fixture(scope="session")
def nvrtc():
    """CuPy's NVRTC binding (compiles CUDA to PTX with no GPU), or a skip saying what is missing."""
    from gpugrad import _cuda_kernels
    try:
        return _cuda_kernels.nvrtc_module()
    except ImportError as e:
        pytest.skip(f"CuPy/NVRTC cannot be imported: {e}")


@pytest.fixture(scope="session")
def host_cxx(tmp_path_factory):
    """A host C++ compiler and a folder for what it builds (see host_cuda.py), or a skip."""
    import host_cuda
    cxx = host_cuda.compiler()
    if cxx is None:
        pytest.skip("no host C++ compiler (g++ or clang++)")
    return cxx, tmp_path_factory.mktemp("host_cuda")


@pytest.fixture(scope="session")
def host_libs(host_cxx):
    """``lib(name)``: kernel ``name`` of gpugrad.kernels.REGISTRY built for the host, once."""
    import host_cuda

    from gpugrad import _cuda_kernels
    from gpugrad.kernels import REGISTRY
    cxx, workdir = host_cxx
    libs = {}

    def lib(name):
        if name not in libs:
            source = _cuda_kernels.read_source(REGISTRY[name].source)
            libs[name] = host_cuda.build(source, workdir, cxx)
        return libs[name]
    return lib


@pytest.fixture(autouse=True)
def _captures_end():
    """Under the simulated CuPy, a test that begins a stream capture must end it: on a GPU an
    open capture makes later work fail, here it would change every later test."""
    yield
    sim = sys.modules.get("cupy_sim")
    if sim is not None and sim.open_captures():
        left = sim.abandon_captures()
        pytest.fail(f"stream captures left open (ended now): {left}", pytrace=False)


@pytest.fixture
def rng():
    """A fresh, fixed-seed numpy generator per test."""
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _restore_global_modes():
    """Grad mode, anomaly mode and the default dtype are global: a failing test must not leak
    them into the next one."""
    from gpugrad.autograd import anomaly, grad_mode
    saved = (grad_mode.state.enabled, grad_mode.state.inference, anomaly._state.enabled,
             anomaly._state.check_nan, gpugrad.get_default_dtype())
    yield
    (grad_mode.state.enabled, grad_mode.state.inference, anomaly._state.enabled,
     anomaly._state.check_nan) = saved[:4]
    gpugrad.set_default_dtype(saved[4])


def to_numpy(t) -> np.ndarray:
    """A tensor's values as a host numpy array (works for CUDA tensors and tensors needing grad)."""
    if isinstance(t, gpugrad.Tensor):
        return np.asarray(t.detach().cpu().numpy())
    return np.asarray(t)


def tensor(data, device="cpu", dtype=gpugrad.float64, requires_grad=False):
    """A leaf tensor on ``device`` from nested lists or a numpy array."""
    return gpugrad.tensor(np.asarray(data), dtype=dtype, device=device,
                          requires_grad=requires_grad)


class SimpleNet(nn.Module):
    """Seed 000's network."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 5)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(5, 1)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def my_relu(mod):
    """The tutorials' MyReLU custom Function, for gpugrad or (as an oracle) PyTorch."""
    class MyReLU(mod.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input
    return MyReLU
