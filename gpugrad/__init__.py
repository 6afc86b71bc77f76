"""gpugrad: PyTorch-style define-by-run autograd on numpy (CPU) and CuPy (NVIDIA GPUs).

``import gpugrad as torch`` runs code written for the parts of PyTorch gpugrad implements.
"""
from __future__ import annotations

import builtins
import warnings

from . import (
    _exports,
    autograd,
    linalg,
    ops,  # noqa: F401  (every op family: declares torch.* names and installs Tensor's methods)
    special,
)
from ._backend import device, set_default_device
from ._creation import (
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    Generator,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    arange,
    as_dtype,
    as_tensor,
    asarray,
    bernoulli,
    bfloat16,
    bool,
    default_generator,
    double,
    empty,
    empty_like,
    empty_strided,
    eye,
    float,
    float16,
    float32,
    float64,
    from_numpy,
    frombuffer,
    full,
    full_like,
    get_default_dtype,
    half,
    initial_seed,
    int,
    int8,
    int16,
    int32,
    int64,
    linspace,
    long,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    range,
    scalar_tensor,
    seed,
    set_default_dtype,
    short,
    tensor,
    uint8,
    zeros,
    zeros_like,
)
from ._dlpack import from_dlpack
from ._dtype_info import can_cast, finfo, iinfo, is_complex, promote_types, result_type
from ._format import set_printoptions
from ._memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ._runtime import (
    are_deterministic_algorithms_enabled,
    compile,
    get_float32_matmul_precision,
    get_num_interop_threads,
    get_num_threads,
    get_rng_state,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_deterministic_algorithms_warn_only_enabled,
    is_storage,
    is_warn_always_enabled,
    set_anomaly_enabled,
    set_default_tensor_type,
    set_float32_matmul_precision,
    set_num_interop_threads,
    set_num_threads,
    set_rng_state,
    set_warn_always,
    typename,
    use_deterministic_algorithms,
    vmap,
)
from ._windows import (
    bartlett_window,
    blackman_window,
    hamming_window,
    hann_window,
    kaiser_window,
)
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor

# numpy warns about the IEEE special values it returns (log(0), 1/0, overflow in exp); PyTorch
# returns the same inf and nan silently. Only warnings raised from gpugrad's own modules are
# filtered: numpy keeps its behaviour in user code. gpugrad.autograd.detect_anomaly finds NaNs.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gpugrad(\.|$)")

__version__ = "0.1.0"

# torch.<name> of every op, declared next to it (gpugrad/_exports.py)
globals().update(_exports.TORCH)
dtype = type(float32)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input) -> int:
    return input.numel()


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    return input.allclose(other, rtol, atol, equal_nan)


def equal(input, other) -> bool:
    return input.equal(other)


def isnan(input):
    return input.isnan()


def isinf(input):
    return input.isinf()


def isfinite(input):
    return input.isfinite()


def logical_not(input):
    return input.logical_not()


def logical_and(input, other):
    return input.logical_and(other)


def logical_or(input, other):
    return input.logical_or(other)


def logical_xor(input, other):
    return input.logical_xor(other)



def any(input, dim=None, keepdim=False):
    return input.any(dim, keepdim)


def all(input, dim=None, keepdim=False):
    return input.all(dim, keepdim)


def is_floating_point(input) -> bool:
    return input.is_floating_point()


def get_default_device():
    from ._backend import default_device
    return default_device()


# torch.<name> that are nn.functional's with the same positional arguments (torch.dropout's
# third is ``train``, F.dropout's ``training``)
_NN_FUNCTIONS = frozenset({"selu", "celu", "prelu", "group_norm", "cosine_similarity",
                           "pairwise_distance", "adaptive_avg_pool1d", "adaptive_max_pool1d",
                           "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                           "conv_transpose3d", "max_pool1d", "max_pool2d", "max_pool3d",
                           "max_pool1d_with_indices", "avg_pool1d", "pixel_shuffle",
                           "pixel_unshuffle", "dropout", "alpha_dropout", "feature_alpha_dropout",
                           "bilinear", "channel_shuffle", "hardshrink", "rrelu", "threshold",
                           "pdist", "layer_norm", "rms_norm"})


def __getattr__(name):
    # subpackages loaded on first use keep ``import gpugrad`` fast
    import importlib
    if name in ("nn", "optim", "cuda", "utils", "viz", "kernels", "datasets", "func",
                "distributions", "amp", "profiler", "backends", "accelerator", "onnx",
                "distributed", "version", "serialization"):
        return importlib.import_module(f"gpugrad.{name}")
    if name in _NN_FUNCTIONS:   # torch.selu, torch.cosine_similarity ... are nn.functional's
        return getattr(importlib.import_module("gpugrad.nn.functional"), name)
    if name in ("save", "load"):
        return getattr(importlib.import_module("gpugrad.serialization"), name)
    raise AttributeError(f"module 'gpugrad' has no attribute '{name}'")
