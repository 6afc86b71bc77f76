"""Process-wide settings PyTorch code calls: the default generator's state, thread counts and
the deterministic-algorithms flag."""
from __future__ import annotations

import builtins
import os

import numpy as np

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
    threads = os.cpu_count() or 1
    interop_threads = os.cpu_count() or 1
    deterministic = False
    warn_only = False


def set_num_threads(int):
    """Record the intra-op thread count ``get_num_threads`` reports. gpugrad does not pass it
    on: numpy's BLAS keeps its own setting (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS at start-up)."""
    if not isinstance(int, builtins.int) or int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _Settings.threads = int


def get_num_threads():
    return _Settings.threads


def set_num_interop_threads(int):
    if not isinstance(int, builtins.int) or int <= 0:
        raise RuntimeError("Expected a positive number of threads")
    _Settings.interop_threads = int


def get_num_interop_threads():
    return _Settings.interop_threads


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the flag (gpugrad's ops give the same result for the same input on one device,
    except atomics-based scatter-adds on CUDA, which the flag does not change)."""
    _Settings.deterministic, _Settings.warn_only = bool(mode), bool(warn_only)


def are_deterministic_algorithms_enabled():
    return _Settings.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _Settings.warn_only
