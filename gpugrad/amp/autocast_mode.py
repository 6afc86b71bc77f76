"""``autocast``: inside it, the ops where lower precision pays (matrix products, convolutions)
run in float16 (or bfloat16, the CPU's default), and the ops where it hurts (softmax,
log_softmax, losses, normalisation) run in float32, whatever the dtype they are given; every
other op runs in its inputs' dtype.

Casts are recorded ops (``ToCopyBackward0``), so gradients flow back to float32 parameters in
float32. The lists are gpugrad's: docs/design.md names them and how they differ from PyTorch's.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from .._bfloat16 import BF16, bfloat16
from .._creation import as_dtype
from ._state import LOWER_DTYPES, state

_DEFAULT = {"cuda": np.dtype(np.float16), "cpu": bfloat16}   # PyTorch's defaults


def _available(device_type):
    if device_type == "cpu":
        return True
    from .. import cuda
    return cuda.is_available()


class autocast:
    """``with gpugrad.autocast("cuda"):`` (or as a decorator). ``dtype`` defaults to float16 on
    CUDA and to bfloat16 on the CPU, as in PyTorch; the CPU also takes float16. CUDA takes only
    float16 (CuPy has no bfloat16 dtype): as PyTorch does for a dtype a device does not
    support, another dtype warns and leaves autocast off."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEFAULT:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device_type = device_type
        self.fast_dtype = _DEFAULT[device_type] if dtype is None else dtype
        if BF16 is not None:
            self.fast_dtype = as_dtype(self.fast_dtype)
        self._enabled = bool(enabled)
        self.cache_enabled = cache_enabled   # accepted; gpugrad casts on every use
        if not self._enabled:
            return
        if not _available(device_type):
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling", stacklevel=2)
            self._enabled = False
        elif self.fast_dtype not in LOWER_DTYPES or (device_type == "cuda"
                                                     and self.fast_dtype != np.float16):
            name, kinds = (("CUDA", "gpugrad.float16 in gpugrad (CuPy has no bfloat16)")
                           if device_type == "cuda" else
                           ("CPU", "gpugrad.bfloat16 and gpugrad.float16" if BF16 is not None
                            else "gpugrad.float16 (bfloat16 needs ml_dtypes: pip install "
                                 "ml_dtypes)"))
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtype of "
                          f"{kinds} (got {self.fast_dtype}).", stacklevel=2)
            self._enabled = False

    def __enter__(self):
        self._prev = state.dtypes[self.device_type]
        state.set(self.device_type, self.fast_dtype if self._enabled else None)
        return self

    def __exit__(self, *exc):
        state.set(self.device_type, self._prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self._enabled):
                return func(*args, **kwargs)
        return run


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (CUDA when omitted, as in PyTorch)."""
    return state.dtypes["cuda" if device_type is None else device_type] is not None


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (when off, its default: float16 on CUDA,
    bfloat16 on the CPU, as in PyTorch)."""
    d = state.dtypes[device_type]
    if d is not None:
        return d
    d = _DEFAULT.get(device_type, np.dtype(np.float16))
    return d if isinstance(d, np.dtype) else np.dtype(np.float16)


def custom_fwd(fwd=None, *, device_type="cuda", cast_inputs=None):
    """For a custom ``autograd.Function.forward``: with ``cast_inputs``, run it with autocast
    off and its floating tensor inputs cast to that dtype; without, remember autocast's state
    so ``custom_bwd`` runs the backward under the same."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward(*args, **kwargs):
        ctx = args[0]
        ctx._autocast_dtype = state.dtypes[device_type]
        ctx._autocast_device = device_type
        if cast_inputs is None or not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type, enabled=False):
            return fwd(*_cast(args, cast_inputs), **_cast(kwargs, cast_inputs))
    return forward


def custom_bwd(bwd=None, *, device_type="cuda"):
    """For a custom ``autograd.Function.backward``: run it under the autocast state its
    forward ran under."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward(*args, **kwargs):
        ctx = args[0]
        dev = getattr(ctx, "_autocast_device", device_type)
        prev = state.dtypes[dev]
        state.set(dev, getattr(ctx, "_autocast_dtype", None))
        try:
            return bwd(*args, **kwargs)
        finally:
            state.set(dev, prev)
    return backward


def _cast(value, dtype):
    from ..tensor import Tensor
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, dict):
        return {k: _cast(v, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value
