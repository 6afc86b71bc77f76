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
    get_num_interop_threads,
    get_num_threads,
    get_rng_state,
    is_deterministic_algorithms_warn_only_enabled,
    set_num_interop_threads,
    set_num_threads,
    set_rng_state,
    use_deterministic_algorithms,
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
from .ops.activation import relu, sigmoid
from .ops.einsum import einsum
from .ops.extra import (
    addcdiv,
    addcmul,
    arctan2,
    atan2,
    broadcast_tensors,
    count_nonzero,
    diag,
    isclose,
    lerp,
    masked_select,
    median,
    meshgrid,
    moveaxis,
    movedim,
    nonzero,
    ravel,
    std_mean,
    trace,
    var_mean,
)
from .ops.linalg import addmm, bmm, dot, matmul, mm, mv
from .ops.linalg_legacy import chain_matmul, cholesky, matrix_exp
from .ops.matrix import (
    addmv,
    baddbmm,
    cross,
    det,
    inverse,
    kron,
    logdet,
    matrix_power,
    slogdet,
    vdot,
)
from .ops.methods_more import (
    aminmax,
    bincount,
    floor_divide,
    kthvalue,
    mode,
    repeat_interleave,
    sgn,
    unique,
)
from .ops.misc import (
    clamp_max,
    clamp_min,
    cumprod,
    diagonal,
    diff,
    fliplr,
    flipud,
    fmod,
    hypot,
    logaddexp,
    logcumsumexp,
    nan_to_num,
    nanmean,
    nansum,
    remainder,
    rot90,
    select,
    take,
    tensor_split,
    tile,
    unflatten,
    xlogy,
)
from .ops.numeric import (
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    bucketize,
    cdist,
    corrcoef,
    cov,
    cummax,
    cummin,
    float_power,
    fmax,
    fmin,
    histc,
    logspace,
    nanmedian,
    nanquantile,
    poisson,
    quantile,
    searchsorted,
)
from .ops.pointwise import (
    abs,
    absolute,
    add,
    clamp,
    clip,
    cos,
    div,
    divide,
    erf,
    exp,
    log,
    maximum,
    minimum,
    mul,
    multiply,
    neg,
    negative,
    pow,
    reciprocal,
    rsqrt,
    rsub,
    sign,
    sin,
    sqrt,
    square,
    sub,
    subtract,
    tanh,
    true_divide,
    where,
)
from .ops.reduce import (
    amax,
    amin,
    argmax,
    argmin,
    logsumexp,
    max,
    mean,
    min,
    norm,
    prod,
    std,
    sum,
    var,
)
from .ops.reduce import log_softmax as _log_softmax
from .ops.reduce import softmax as _softmax
from .ops.scatter import (
    index_add,
    index_copy,
    index_fill,
    scatter,
    scatter_add,
    scatter_reduce,
    take_along_dim,
)
from .ops.select import (
    argsort,
    cumsum,
    flip,
    gather,
    index_select,
    masked_fill,
    narrow,
    outer,
    roll,
    sort,
    topk,
    tril,
    triu,
)
from .ops.shape import (
    broadcast_to,
    cat,
    chunk,
    clone,
    concat,
    concatenate,
    flatten,
    permute,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    swapdims,
    t,
    transpose,
    unbind,
    unsqueeze,
)
from .ops.special import (
    digamma,
    erfc,
    erfinv,
    i0,
    lgamma,
    logit,
    mvlgamma,
    polygamma,
    sinc,
    xlog1py,
)
from .ops.stacking import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    cartesian_prod,
    column_stack,
    combinations,
    diag_embed,
    dstack,
    hstack,
    row_stack,
    tensordot,
    unique_consecutive,
    vstack,
)
from .ops.unary import (
    acos,
    arccos,
    arcsin,
    arctan,
    asin,
    atan,
    ceil,
    cosh,
    expm1,
    fix,
    floor,
    frac,
    log1p,
    log2,
    log10,
    round,
    sinh,
    tan,
    trunc,
)
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
