"""Runtime switches PyTorch code calls that gpugrad honours, records or has no use for:
compile, vmap, the float32 matmul precision, anomaly mode, warn-always, typename, is_storage, the
memory formats and the deprecated set_default_tensor_type."""
from __future__ import annotations

import warnings

from .tensor import Tensor


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
    from .func import vmap as _vmap
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


class memory_format:   # noqa: N801  (PyTorch's name)
    """A layout request (``x.contiguous(memory_format=gpugrad.channels_last)``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"gpugrad.{self.name}"

    def __reduce__(self):
        return self.name   # pickles as the module-level constant


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


def channels_last_axes(fmt, ndim):
    """The axis order, slowest to fastest, that ``fmt`` lays a tensor of ``ndim`` dims out in
    (None: row-major)."""
    if fmt is channels_last and ndim == 4 or fmt is channels_last_3d and ndim == 5:
        return (0,) + tuple(range(2, ndim)) + (1,)
    if fmt in (channels_last, channels_last_3d):
        raise RuntimeError(f"required rank {4 if fmt is channels_last else 5} tensor to use "
                           f"{fmt.name} format")
    return None


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
