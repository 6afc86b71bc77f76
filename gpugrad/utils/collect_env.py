"""``gpugrad env``: what this machine gives gpugrad (PyTorch's ``python -m
torch.utils.collect_env``), and ``cuda_problem``, the one-line answer to "why can CUDA not run
here" that ``gpugrad train`` and ``gpugrad env`` print.

Every probe catches what it raises: a missing library, driver or device is a line of the
report, never a traceback.
"""
from __future__ import annotations

import importlib
import platform
import sys

from .. import _backend

INSTALL = 'pip install -e ".[cuda]"'   # from a checkout: gpugrad is not on the public index
# CuPy's bindings of the CUDA libraries, by the name ``cupy.cuda`` gives them
LIBRARIES = ("cublas", "curand", "cusolver", "cusparse", "cufft", "nvrtc")
# what a training run calls: matrix products (cuBLAS) and gpugrad's own kernels (NVRTC)
TRAINING_LIBRARIES = ("cublas", "nvrtc")


def _reason(e: BaseException) -> str:
    """An exception as one short line: its type and its first 160 characters."""
    text = " ".join(str(e).split())
    text = text if len(text) <= 160 else text[:157] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def library(name: str):
    """(found, detail) for one CUDA library: loaded through CuPy, with its version when the
    library answers one without a device."""
    cp = _backend.cupy_module()
    if cp is None:
        return False, "no CuPy"
    try:
        mod = getattr(cp.cuda, name)
    except Exception as e:   # CuPy binds a library on first use and raises when it is absent
        return False, _reason(e)
    version = getattr(mod, "getVersion", None) or getattr(mod, "_getVersion", None)
    try:
        v = version() if version is not None else None
    except TypeError:        # the cuBLAS and cuSPARSE versions need a handle, so a device
        v = None
    except Exception as e:
        return False, _reason(e)
    if isinstance(v, tuple):
        v = ".".join(map(str, v))
    return True, f"version {v}" if v is not None else "loaded"


def driver_version():
    """(CUDA driver version or None, reason when None) as CUDA numbers them (12040 = 12.4)."""
    cp = _backend.cupy_module()
    if cp is None:
        return None, "no CuPy"
    try:
        v = int(cp.cuda.runtime.driverGetVersion())
    except Exception as e:
        return None, _reason(e)
    return (v, None) if v > 0 else (None, "CUDA reports driver version 0")


def cuda_problem(libraries=TRAINING_LIBRARIES) -> str | None:
    """What is missing for CUDA to run here, in one line that says how to fix it, or None
    when CuPy, the driver, a device and ``libraries`` are all there."""
    cp = _backend.cupy_module()
    if cp is None:
        return (f"no CuPy ({_reason(_backend.cupy_error())}); install it from a gpugrad "
                f"checkout with: {INSTALL}")
    v, why = driver_version()
    if v is None:
        return f"no NVIDIA driver ({why}); install the driver (check with nvidia-smi)"
    try:
        n = int(cp.cuda.runtime.getDeviceCount())
    except Exception as e:
        return f"no CUDA device ({_reason(e)}); check nvidia-smi and CUDA_VISIBLE_DEVICES"
    if n == 0:
        return "no CUDA device (the driver sees none); check nvidia-smi and CUDA_VISIBLE_DEVICES"
    for name in libraries:
        found, detail = library(name)
        if not found:
            return (f"the CUDA library {name} cannot be loaded ({detail}); install CuPy with "
                    f"its CUDA libraries from a gpugrad checkout with: {INSTALL}")
    return None


def _version(module: str) -> str:
    if module == "cupy":
        cp = _backend.cupy_module()
        if cp is None:
            return f"not available ({_reason(_backend.cupy_error())})"
        return cp.__version__
    try:
        return importlib.import_module(module).__version__
    except Exception as e:
        return f"not available ({_reason(e)})"


def blas() -> str:
    """numpy's BLAS: threadpoolctl's view when installed (library, version, threads), else
    numpy's build configuration."""
    try:
        from threadpoolctl import threadpool_info
        found = [f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
                 for i in threadpool_info() if i.get("user_api") == "blas"]
        if found:
            return ", ".join(found)
    except Exception:
        pass
    try:
        import numpy
        cfg = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{cfg.get('name')} {cfg.get('version')}"
    except Exception as e:
        return f"unknown ({_reason(e)})"


def _cuda_version(v) -> str:
    return f"{v // 1000}.{v % 1000 // 10}" if v else "none"


def collect() -> list:
    """The report as (label, value) rows."""
    from .. import __version__
    rows = [("Python", sys.version.split()[0]), ("OS", platform.platform()),
            ("gpugrad", __version__)]
    rows += [(m, _version(m)) for m in ("numpy", "cupy", "torch", "scipy")]
    rows.append(("numpy BLAS", blas()))
    cp = _backend.cupy_module()
    v, why = driver_version()
    rows.append(("CUDA driver", _cuda_version(v) if v else f"none ({why})"))
    if cp is not None:
        try:
            rows.append(("CUDA runtime", _cuda_version(int(cp.cuda.runtime.runtimeGetVersion()))))
        except Exception as e:
            rows.append(("CUDA runtime", f"none ({_reason(e)})"))
        rows += _devices(cp)
        for name in LIBRARIES:
            found, detail = library(name)
            rows.append((name, f"found, {detail}" if found else f"missing ({detail})"))
    problem = cuda_problem(LIBRARIES)
    rows.append(("CUDA usable", "yes" if problem is None else f"no: {problem}"))
    return rows


def _devices(cp) -> list:
    try:
        n = int(cp.cuda.runtime.getDeviceCount())
    except Exception as e:
        return [("CUDA devices", f"none ({_reason(e)})")]
    rows = [("CUDA devices", str(n))]
    for i in range(n):
        try:
            p = cp.cuda.runtime.getDeviceProperties(i)
            name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
            rows.append((f"  cuda:{i}", f"{name}, {p['totalGlobalMem'] / 2 ** 30:.1f} GiB, "
                                        f"capability {p['major']}.{p['minor']}"))
        except Exception as e:
            rows.append((f"  cuda:{i}", f"unreadable ({_reason(e)})"))
    return rows


def main(argv=None, file=None) -> int:
    """Print the report; exit status 0 when CUDA is usable, 1 when it is not (the last line
    says why)."""
    file = file or sys.stdout
    rows = collect()
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print(f"{k:<{width}}  {v}", file=file)
    return 0 if rows[-1][1] == "yes" else 1


if __name__ == "__main__":
    sys.exit(main())
