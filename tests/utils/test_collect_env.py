"""`gpugrad env` and the one-line answer to "why can CUDA not run here", on fake CuPy set-ups
(no CuPy, no driver, no device, a library missing, all there)."""
from __future__ import annotations

import io
import re
import types

import pytest

from gpugrad import _backend
from gpugrad.__main__ import main
from gpugrad.utils import collect_env

INSTALL = 'pip install -e ".[cuda]"'


class CUDARuntimeError(RuntimeError):
    pass


class _Cuda(types.SimpleNamespace):
    """``cupy.cuda`` whose absent libraries raise on access, as CuPy's lazy bindings do."""

    def __getattr__(self, name):
        raise ImportError(f'Failure finding "lib{name}.so.12": No such file:\n lib{name}.so.12')


def fake_cupy(driver=12040, devices=1, missing=()):
    def count():
        if isinstance(devices, Exception):
            raise devices
        return devices
    runtime = types.SimpleNamespace(
        driverGetVersion=lambda: driver, runtimeGetVersion=lambda: 12090, getDeviceCount=count,
        getDeviceProperties=lambda i: {"name": b"NVIDIA H100", "totalGlobalMem": 80 * 2 ** 30,
                                       "major": 9, "minor": 0})
    libs = {"cublas": types.SimpleNamespace(getVersion=lambda handle: 120000),
            "curand": types.SimpleNamespace(getVersion=lambda: 10305),
            "cusolver": types.SimpleNamespace(_getVersion=lambda: (11, 6, 1)),
            "cusparse": types.SimpleNamespace(),
            "cufft": types.SimpleNamespace(getVersion=lambda: 11200),
            "nvrtc": types.SimpleNamespace(getVersion=lambda: (12, 9))}
    cuda = _Cuda(runtime=runtime, **{k: v for k, v in libs.items() if k not in missing})
    return types.SimpleNamespace(__version__="14.0.0", cuda=cuda)


@pytest.fixture
def cupy_is(monkeypatch):
    def use(cp, error=None):
        monkeypatch.setattr(_backend, "cupy_module", lambda: cp)
        monkeypatch.setattr(_backend, "cupy_error", lambda: error)
    return use


def test_no_cupy(cupy_is):
    cupy_is(None, ModuleNotFoundError("No module named 'cupy'"))
    assert collect_env.cuda_problem() == (
        "no CuPy (ModuleNotFoundError: No module named 'cupy'); install it from a gpugrad "
        f"checkout with: {INSTALL}")


def test_no_driver(cupy_is):
    cupy_is(fake_cupy(driver=0))
    assert collect_env.cuda_problem() == ("no NVIDIA driver (CUDA reports driver version 0); "
                                          "install the driver (check with nvidia-smi)")


def test_no_device(cupy_is):
    cupy_is(fake_cupy(devices=CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device")))
    assert collect_env.cuda_problem() == (
        "no CUDA device (CUDARuntimeError: cudaErrorNoDevice: no CUDA-capable device); check "
        "nvidia-smi and CUDA_VISIBLE_DEVICES")
    cupy_is(fake_cupy(devices=0))
    assert collect_env.cuda_problem().startswith("no CUDA device (the driver sees none)")


def test_a_missing_library(cupy_is):
    cupy_is(fake_cupy(missing=("cublas",)))
    assert collect_env.cuda_problem() == (
        'the CUDA library cublas cannot be loaded (ImportError: Failure finding "libcublas.so.12":'
        ' No such file: libcublas.so.12); install CuPy with its CUDA libraries from a gpugrad '
        f"checkout with: {INSTALL}")
    cupy_is(fake_cupy(missing=("cufft",)))      # training does not need cuFFT
    assert collect_env.cuda_problem() is None
    assert "cufft" in collect_env.cuda_problem(collect_env.LIBRARIES)


def test_report_of_a_working_set_up(cupy_is):
    cupy_is(fake_cupy())
    out = io.StringIO()
    assert collect_env.main(file=out) == 0
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.getvalue().splitlines()
                if not line.startswith(" "))
    assert rows["cupy"] == "14.0.0" and rows["CUDA driver"] == "12.4"
    assert rows["CUDA runtime"] == "12.9" and rows["CUDA devices"] == "1"
    assert re.search(r"cuda:0 +NVIDIA H100, 80.0 GiB, capability 9.0", out.getvalue())
    assert rows["cublas"] == "found, loaded" and rows["cusolver"] == "found, version 11.6.1"
    assert rows["nvrtc"] == "found, version 12.9" and rows["CUDA usable"] == "yes"
    for name in ("Python", "OS", "gpugrad", "numpy", "torch", "scipy", "numpy BLAS"):
        assert rows[name]


def test_env_command_without_a_driver(cupy_is, capsys):
    cupy_is(fake_cupy(driver=0, devices=CUDARuntimeError("cudaErrorInsufficientDriver")))
    assert main(["env"]) == 1
    out = capsys.readouterr().out
    assert "Traceback" not in out
    assert re.split(r"\s{2,}", out.splitlines()[-1])[1] == (
        "no: no NVIDIA driver (CUDA reports driver version 0); install the driver (check with "
        "nvidia-smi)")
    assert "CUDA devices  none (CUDARuntimeError: cudaErrorInsufficientDriver)" in out


def test_env_command_without_cupy(cupy_is, capsys):
    cupy_is(None, ImportError("libcuda.so.1: cannot open shared object file"))
    assert main(["env"]) == 1
    out = capsys.readouterr().out
    assert "cupy" in out and "not available (ImportError" in out
    assert out.splitlines()[-1].endswith(f"install it from a gpugrad checkout with: {INSTALL}")
