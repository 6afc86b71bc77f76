"""The top-level functions of the newer modules, collected: ``gpugrad/__init__.py`` exports every
name in ``__all__``. Importing this module also attaches their Tensor methods."""
from __future__ import annotations

from . import _creation, _memory_format, _methods_more, _windows
from .ops.indexing import gather, getitem, masked, scatter
from .ops.linalg import legacy, norms, products
from .ops.pointwise import arithmetic, binary, comparison, unary
from .ops.reduction import calculus, histogram, sorting
from .ops.shape import diagonal, joining, stacking, triangular
from .ops.special import incomplete_gamma
from .tensor import Tensor

_FROM = {
    _memory_format: ("memory_format", "contiguous_format", "channels_last", "channels_last_3d",
                     "preserve_format"),
    _creation: ("scalar_tensor", "asarray", "range", "empty_strided", "frombuffer"),
    _windows: ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
               "kaiser_window"),
    unary: ("acosh", "arccosh", "asinh", "arcsinh", "atanh", "arctanh", "exp2", "deg2rad",
            "rad2deg", "frexp"),
    binary: ("logaddexp2", "copysign", "heaviside", "gcd", "lcm", "ldexp", "nextafter"),
    comparison: ("signbit", "isneginf", "isposinf", "isreal", "isin", "is_nonzero",
                 "is_same_size", "is_signed", "eq", "ne", "gt", "ge", "lt", "le", "greater",
                 "greater_equal", "less", "less_equal", "not_equal"),
    arithmetic: ("positive",),
    triangular: ("tril_indices", "triu_indices"),
    gather: ("unravel_index", "argwhere"),
    joining: ("hsplit", "vsplit", "dsplit", "split_with_sizes"),
    diagonal: ("diagflat",),
    products: ("inner", "ger", "addbmm", "addr"),
    norms: ("dist",),
    sorting: ("msort",),
    scatter: ("select_scatter", "slice_scatter", "diagonal_scatter", "index_reduce"),
    getitem: ("as_strided",),
    masked: ("masked_scatter",),
    stacking: ("vander",),
    calculus: ("trapezoid", "trapz", "cumulative_trapezoid", "gradient"),
    histogram: ("histogram",),
    legacy: ("qr", "svd", "pinverse", "lu", "lu_solve", "lu_unpack", "triangular_solve",
             "cholesky_solve", "cholesky_inverse", "lstsq", "matrix_rank"),
    incomplete_gamma: ("igamma", "igammac"),
}
# ... and the Tensor methods PyTorch has for them (x.qr(), x.igamma(a) ...)
for _name in ("qr", "svd", "pinverse", "lu", "lu_solve", "triangular_solve", "cholesky_solve",
              "cholesky_inverse", "igamma", "igammac"):
    _fn = getattr(legacy, _name, None) or getattr(incomplete_gamma, _name)
    setattr(Tensor, _name, _fn)


def is_inference(input) -> bool:
    return input.is_inference()


def conj(input):
    return input.conj()


def resolve_conj(input):
    return input.resolve_conj()


def resolve_neg(input):
    return input.resolve_neg()


def real(input):
    return input.real


def imag(input):
    return input.imag


def is_conj(input) -> bool:
    return input.is_conj()


def is_neg(input) -> bool:
    return input.is_neg()


def conj_physical(input):
    return input.conj_physical()


def detach(input):
    return input.detach()


def fill(input, value):
    """A new tensor of ``input``'s shape, dtype and device holding ``value`` (out of place)."""
    return input.detach().clone().fill_(value)


def put(input, index, source, accumulate=False):
    return input.put(index, source, accumulate)


def index_put(input, indices, values, accumulate=False):
    return input.index_put(indices, values, accumulate)


def narrow_copy(input, dim, start, length):
    return input.narrow_copy(dim, start, length)


def adjoint(input):
    return input.adjoint()


def renorm(input, p, dim, maxnorm):
    return input.renorm(p, dim, maxnorm)


_LOCAL = ("adjoint", "detach", "fill", "put", "index_put", "narrow_copy", "renorm", "is_inference",
          "conj", "resolve_conj", "resolve_neg", "real", "imag", "is_conj",
          "is_neg", "conj_physical")
globals().update({name: getattr(mod, name) for mod, names in _FROM.items() for name in names})
# torch.abs_(x), torch.relu_(x) ...: the in-place methods as functions
globals().update(_methods_more.TOP_LEVEL_INPLACE)
__all__ = ([name for names in _FROM.values() for name in names] + list(_LOCAL)
           + list(_methods_more.TOP_LEVEL_INPLACE))
