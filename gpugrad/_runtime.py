"""Process-wide settings and switches PyTorch code calls: the default generator's state, thread
counts, the deterministic-algorithms flag; and the switches gpugrad honours, records or has no
use for: compile, vmap, the float32 matmul precision, anomaly mode, warn-always, typename,
is_storage and the deprecated set_default_tensor_type."""
from __future__ import annotations

import builtins
import warnings

import numpy as np

from . import _parallel
from ._creation import default_generator
from .tensor import Tensor

_STATE_BYTES = 40   # PCG64: state and increment (128 bits each), has_uint32, uinteger


def get_rng_state():
    """The default CPU generator's state as a uint8 tensor (for ``set_rng_state``)."""
    s = default_generator._np.bit_generator.state
    raw = (s["state"]["state"].to_bytes(16, "little") + s["state"]["inc"].to_bytes(16, "little")
           + int(s["has_uint32"]).to_bytes(4, "little") + int(s["uinteger"]).to_bytes(4, "little"))
    return Tensor._make(np.frombuffer(raw, dtype=np.uint8).copy())


def set_rng_state(new_state):
    """Restore the default CPU generator to a state from ``get_rng_state``: the draws that
    followed it repeat. (CUDA streams are not part of this state.)"""
    if not isinstance(new_state, Tensor) or new_state.dtype != np.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    raw = bytes(new_state._host().reshape(-1))
    if len(raw) != _STATE_BYTES:
        raise RuntimeError(f"Expected RNG state of {_STATE_BYTES} bytes, but got {len(raw)}")
    default_generator._np.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": int.from_bytes(raw[:16], "little"),
                  "inc": int.from_bytes(raw[16:32], "little")},
        "has_uint32": int.from_bytes(raw[32:36], "little"),
        "uinteger": int.from_bytes(raw[36:40], "little")}


class _Settings:
    deterministic = False
    warn_only = False


def set_num_threads(int):
    """The CPU's intra-op threads: gpugrad's elementwise work on large arrays and, through
    ``threadpoolctl`` when it is installed, the BLAS behind matmul. Results do not depend on
    it (see ``docs/cpu.md``)."""
    if not isinstance(int, builtins.int) or int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _parallel.set_num_threads(int)


def get_num_threads():
    """The intra-op thread count: ``OMP_NUM_THREADS`` when set, else the cores this process
    may run on, until ``set_num_threads`` changes it."""
    return _parallel.get_num_threads()


def set_num_interop_threads(int):
    """Recorded for ``get_num_interop_threads``: gpugrad runs one op at a time."""
    if not isinstance(int, builtins.int) or int <= 0:
        raise RuntimeError("Expected a positive number of threads")
    _parallel.set_num_interop_threads(int)


def get_num_interop_threads():
    return _parallel.get_num_interop_threads()


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the flag (gpugrad's ops give the same result for the same input on one device,
    except atomics-based scatter-adds on CUDA, which the flag does not change)."""
    _Settings.deterministic, _Settings.warn_only = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _Settings.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _Settings.warn_only


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """``model`` unchanged. gpugrad has no graph compiler: every op already runs eagerly (on
    the GPU through CuPy's kernels and gpugrad's fused ones), so there is nothing to compile.
    PyTorch's keyword arguments are accepted and ignored; used as a decorator, with or without
    arguments, it returns the function it decorates."""
    if model is None:
        return lambda fn: fn
    return model


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``gpugrad.func.vmap`` (``torch.vmap`` is the same function)."""
    from .func import vmap as _vmap  # layering: torch.vmap is func's vmap, loaded on use
    return _vmap(func, in_dims, out_dims, randomness, chunk_size=chunk_size)


_MATMUL_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = ["highest"]


def set_float32_matmul_precision(precision: str) -> None:
    """Records the precision asked of float32 matrix products. It changes nothing: gpugrad's
    float32 products run as numpy's / cuBLAS's default (full float32) products."""
    if precision not in _MATMUL_PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision[0] = precision


def get_float32_matmul_precision() -> str:
    return _matmul_precision[0]


def is_anomaly_enabled() -> bool:
    from .autograd import anomaly
    return anomaly.is_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    from .autograd import anomaly
    return anomaly.is_anomaly_check_nan_enabled()


def set_anomaly_enabled(mode: bool, check_nan: bool = True) -> None:
    """Turns anomaly detection on or off for good (``autograd.detect_anomaly`` does so for a
    block)."""
    from .autograd import anomaly
    anomaly._state.enabled, anomaly._state.check_nan = bool(mode), bool(check_nan)


_warn_always = [False]


def set_warn_always(b: bool) -> None:
    """Records whether once-only warnings should repeat (gpugrad's warn through Python's
    ``warnings``, whose filters decide that)."""
    _warn_always[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _warn_always[0]


def typename(obj) -> str:
    """'gpugrad.FloatTensor' for a tensor; otherwise the dotted name of obj (a class or a
    function) or of its type, without 'builtins.'."""
    if isinstance(obj, Tensor):
        return obj.type()
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    module = getattr(obj, "__module__", None) if name else None
    if not name or not isinstance(name, str):
        name, module = type(obj).__qualname__, type(obj).__module__
    return name if module in (None, "", "builtins") else f"{module}.{name}"


def is_storage(obj) -> bool:
    from .storage import UntypedStorage
    return isinstance(obj, UntypedStorage)


_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16"}
TENSOR_TYPE_DEPRECATED = (
    "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
    "torch.set_default_dtype() and torch.set_default_device() as alternatives.")


def set_default_tensor_type(t) -> None:
    """Deprecated (as in PyTorch): sets the default float dtype, and the default device for a
    'torch.cuda.*' type, from a tensor type name such as 'torch.DoubleTensor'."""
    from ._backend import set_default_device
    from ._creation import set_default_dtype
    warnings.warn(TENSOR_TYPE_DEPRECATED, UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", None)
    if name is None:
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    kind = name.rsplit(".", 1)[-1]
    if kind not in _TENSOR_TYPES:
        raise TypeError("only floating-point types are supported as the default type")
    set_default_dtype(_TENSOR_TYPES[kind])
    set_default_device("cuda" if ".cuda." in name else "cpu")
