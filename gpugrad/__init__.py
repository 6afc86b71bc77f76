"""gpugrad: PyTorch-style define-by-run autograd on numpy (CPU) and CuPy (NVIDIA GPUs).

``import gpugrad as torch`` runs code written for the parts of PyTorch gpugrad implements.
"""
from __future__ import annotations

import builtins
import warnings

from . import (
    _api_more,  # more functions (the names in its __all__) and their Tensor methods
    _methods,  # noqa: F401  (attaches op methods and operators to Tensor)
    _methods_extra,  # noqa: F401  (more methods: in-place forms, put_, storage queries ...)
    autograd,
    linalg,
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
    bernoulli,
    bool,
    default_generator,
    double,
    empty,
    empty_like,
    eye,
    float,
    float16,
    float32,
    float64,
    from_numpy,
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
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .ops.creation import logspace
from .ops.indexing.gather import gather, index_select, nonzero, take
from .ops.indexing.getitem import select
from .ops.indexing.masked import masked_fill, masked_select
from .ops.indexing.scatter import (
    index_add,
    index_copy,
    index_fill,
    scatter,
    scatter_add,
    scatter_reduce,
    take_along_dim,
)
from .ops.linalg.einsum import einsum
from .ops.linalg.legacy import chain_matmul, cholesky, matrix_exp
from .ops.linalg.norms import cdist
from .ops.linalg.products import (
    addmm,
    addmv,
    baddbmm,
    bmm,
    cross,
    dot,
    kron,
    matmul,
    matrix_power,
    mm,
    mv,
    outer,
    tensordot,
    vdot,
)
from .ops.linalg.solvers import det, inverse, logdet, slogdet
from .ops.nn.activation import relu, sigmoid
from .ops.pointwise.arithmetic import (
    add,
    addcdiv,
    addcmul,
    div,
    divide,
    float_power,
    floor_divide,
    fmod,
    lerp,
    mul,
    multiply,
    neg,
    negative,
    pow,
    reciprocal,
    remainder,
    rsub,
    square,
    sub,
    subtract,
    true_divide,
)
from .ops.pointwise.binary import arctan2, atan2, hypot, logaddexp, xlogy
from .ops.pointwise.bitwise import (
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
)
from .ops.pointwise.comparison import isclose
from .ops.pointwise.minmax import (
    clamp,
    clamp_max,
    clamp_min,
    clip,
    fmax,
    fmin,
    maximum,
    minimum,
    where,
)
from .ops.pointwise.unary import (
    abs,
    absolute,
    acos,
    arccos,
    arcsin,
    arctan,
    asin,
    atan,
    ceil,
    cos,
    cosh,
    erf,
    exp,
    expm1,
    fix,
    floor,
    frac,
    log,
    log1p,
    log2,
    log10,
    nan_to_num,
    round,
    rsqrt,
    sgn,
    sign,
    sin,
    sinh,
    sqrt,
    tan,
    tanh,
    trunc,
)
from .ops.random import poisson
from .ops.reduction.calculus import diff
from .ops.reduction.extrema import (
    amax,
    amin,
    aminmax,
    argmax,
    argmin,
    kthvalue,
    max,
    median,
    min,
    mode,
    nanmedian,
    nanquantile,
    quantile,
)
from .ops.reduction.histogram import bincount, histc
from .ops.reduction.reduce import (
    corrcoef,
    count_nonzero,
    cov,
    logsumexp,
    mean,
    nanmean,
    nansum,
    norm,
    prod,
    std,
    std_mean,
    sum,
    var,
    var_mean,
)
from .ops.reduction.scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .ops.reduction.softmax import log_softmax as _log_softmax
from .ops.reduction.softmax import softmax as _softmax
from .ops.reduction.sorting import (
    argsort,
    bucketize,
    searchsorted,
    sort,
    topk,
    unique,
    unique_consecutive,
)
from .ops.shape.diagonal import diag, diag_embed, trace
from .ops.shape.flip import flip, fliplr, flipud, roll, rot90
from .ops.shape.joining import cat, chunk, concat, concatenate, split, stack, tensor_split, unbind
from .ops.shape.repeat import repeat_interleave, tile
from .ops.shape.stacking import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_tensors,
    cartesian_prod,
    column_stack,
    combinations,
    dstack,
    hstack,
    meshgrid,
    row_stack,
    vstack,
)
from .ops.shape.triangular import tril, triu
from .ops.shape.views import (
    broadcast_shapes,
    broadcast_to,
    clone,
    diagonal,
    flatten,
    moveaxis,
    movedim,
    narrow,
    permute,
    ravel,
    reshape,
    squeeze,
    swapaxes,
    swapdims,
    t,
    transpose,
    unflatten,
    unsqueeze,
)
from .ops.special.bessel import i0
from .ops.special.error import erfc, erfinv
from .ops.special.gamma import digamma, lgamma, mvlgamma, polygamma
from .ops.special.logarithmic import logit, sinc, xlog1py
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor

# numpy warns about the IEEE special values it returns (log(0), 1/0, overflow in exp); PyTorch
# returns the same inf and nan silently. Only warnings raised from gpugrad's own modules are
# filtered: numpy keeps its behaviour in user code. gpugrad.autograd.detect_anomaly finds NaNs.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"gpugrad(\.|$)")

__version__ = "0.1.0"

softmax = _softmax
log_softmax = _log_softmax
globals().update({name: getattr(_api_more, name) for name in _api_more.__all__})
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
                "distributions", "amp", "profiler", "backends"):
        return importlib.import_module(f"gpugrad.{name}")
    if name in _NN_FUNCTIONS:   # torch.selu, torch.cosine_similarity ... are nn.functional's
        return getattr(importlib.import_module("gpugrad.nn.functional"), name)
    if name in ("save", "load"):
        return getattr(importlib.import_module("gpugrad.serialization"), name)
    raise AttributeError(f"module 'gpugrad' has no attribute '{name}'")
