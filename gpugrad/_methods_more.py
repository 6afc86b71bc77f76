"""Tensor methods of the newer pointwise, shape and indexing functions (acosh, copysign, hsplit
...), their in-place forms, the comparison and logical aliases (greater, logical_and_ ...), in-place
products (addmm_, addr_ ...), resize_, new(), new_empty_strided, adjoint, the storages, the two
methods that are nn.functional's (hardshrink, prelu), and what real tensors answer trivially
(conj, real, is_sparse ...); plus ``TOP_LEVEL_INPLACE``, PyTorch's top-level in-place functions
(``torch.abs_(x)`` ...)."""
from __future__ import annotations

import numpy as np

from . import _backend, _methods, _methods_extra  # noqa: F401  (install what is aliased here)
from . import storage as _storage
from ._methods import _logic
from .ops.indexing import gather, getitem, masked, scatter
from .ops.linalg import norms
from .ops.linalg import products as linalg
from .ops.pointwise import arithmetic as pw
from .ops.pointwise import binary, comparison, unary
from .ops.reduction import histogram, sorting
from .ops.shape import diagonal, joining, triangular, views
from .tensor import Size, Tensor
from .tensor_inplace import check, inplace


def _logical_(name):
    """``t.logical_and_(v)``: t = logical_and(t, v) in t's dtype (a constant: gradient 0)."""
    fn = _logic(name)

    def op(self, *other):
        def compute(t, *v):
            return t * 0 + fn(t, *v).to(t.dtype)
        xp = _backend.xp_of(self._data)
        return inplace(self, compute, *other, raw=lambda a, *v: a.__setitem__(
            Ellipsis, getattr(xp, name)(a, *v)))
    return op


def _swap_(self, dim0, dim1):
    """In place: the tensor takes the transposed view's shape and node."""
    check(self)
    y = views.transpose(self, dim0, dim1)
    self._data = y._data
    if y.grad_fn is not None:
        self.grad_fn, self._out_nr = y.grad_fn, y._out_nr
    return self


def _resize_(self, *sizes, memory_format=None):
    """The tensor reshaped to sizes: the same entries when the count is unchanged; its first
    entries (row-major) when it shrinks; new entries (zeros here, uninitialised in PyTorch)
    after them when it grows."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    check(self)
    shape = tuple(int(s) for s in (sizes[0] if len(sizes) == 1 and not isinstance(
        sizes[0], int) else sizes))
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: "
                           f"{list(shape)}")
    a = self._data
    xp = _backend.xp_of(a)
    n = int(np.prod(shape))
    if n == a.size:
        self._data = xp.ascontiguousarray(a).reshape(shape)
    else:
        new = xp.zeros(n, dtype=a.dtype)
        k = min(n, a.size)
        new[:k] = a.reshape(-1)[:k]
        self._data = new.reshape(shape)
    self._version_box().v += 1
    return self


def _new(self, *args, dtype=None, device=None, requires_grad=False):
    """PyTorch's legacy constructor: ``t.new()`` (empty), ``t.new(2, 3)`` / ``t.new(size)``
    (uninitialised), ``t.new(data)`` (a copy of data), ``t.new(tensor)`` (that tensor); self's
    dtype and device."""
    from ._creation import empty, tensor
    dtype, device = dtype or self.dtype, device or self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if not args or all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)):
        size = args[0] if len(args) == 1 and isinstance(args[0], Size) else (args or (0,))
        return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)
    return tensor(args[0], dtype=dtype, device=device, requires_grad=requires_grad)


def _conj(self):
    if self._data.dtype.kind != "c":
        return self
    return Tensor._make(self._data.conj())


def _real(self):
    return self if self._data.dtype.kind != "c" else Tensor._make(self._data.real)


def _imag(self):
    if self._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Tensor._make(self._data.imag)


def _mH(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.mH is only supported on matrices or batches of matrices. "
                           f"Got {self.ndim}-D tensor.")
    return _conj(views.transpose(self, -2, -1))


def _H(self):
    if self.ndim != 2:
        hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 else ""
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self.ndim}-D tensor.{hint}")
    return _conj(views.transpose(self, 0, 1))


def _adjoint(self):
    if self.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {self.ndim}-D tensor.")
    return _conj(views.transpose(self, -2, -1))


def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       requires_grad=False, pin_memory=False):
    from ._creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)


def _functional(name):
    """``t.<name>(...)``: nn.functional's <name> (loaded on first use)."""
    def method(self, *args, **kw):
        from .nn import functional as F  # layering: Tensor.hardshrink / prelu are F's functions
        return getattr(F, name)(self, *args, **kw)
    method.__name__ = name
    return method


def _in_place(fn):
    """The in-place form of ``fn(self, *args, **kw)``."""
    return lambda s, *a, **k: inplace(s, lambda t, *v: fn(t, *v, **k), *a)


def _install():
    T = Tensor
    for name, fn in {"acosh": unary.acosh, "arccosh": unary.arccosh, "asinh": unary.asinh,
                     "arcsinh": unary.arcsinh, "atanh": unary.atanh, "arctanh": unary.arctanh,
                     "exp2": unary.exp2, "deg2rad": unary.deg2rad, "rad2deg": unary.rad2deg,
                     "copysign": binary.copysign, "gcd": binary.gcd, "lcm": binary.lcm,
                     "ldexp": binary.ldexp, "nextafter": binary.nextafter}.items():
        setattr(T, name, fn)
        setattr(T, name + "_", _in_place(fn))
    T.heaviside = binary.heaviside
    T.heaviside_ = lambda s, values: inplace(s, lambda t: binary.heaviside(t, values))
    for name, fn in {"logaddexp2": binary.logaddexp2, "signbit": comparison.signbit,
                     "isneginf": comparison.isneginf, "isposinf": comparison.isposinf,
                     "isreal": comparison.isreal, "frexp": unary.frexp,
                     "positive": pw.positive, "is_nonzero": comparison.is_nonzero,
                     "is_same_size": comparison.is_same_size,
                     "is_signed": comparison.is_signed}.items():
        setattr(T, name, fn)
    T.negative_ = lambda s: inplace(s, pw.neg)
    # comparisons and logic
    T.greater, T.greater_equal, T.less, T.less_equal, T.not_equal = (
        T.gt, T.ge, T.lt, T.le, T.ne)
    T.greater_, T.greater_equal_, T.less_, T.less_equal_, T.not_equal_ = (
        T.gt_, T.ge_, T.lt_, T.le_, T.ne_)
    for name in ("logical_and", "logical_or", "logical_xor"):
        setattr(T, name, _logic(name))
        setattr(T, name + "_", _logical_(name))
    T.logical_not_ = _logical_("logical_not")
    # shapes and indexing
    for name, fn in {"argwhere": gather.argwhere, "hsplit": joining.hsplit,
                     "vsplit": joining.vsplit, "dsplit": joining.dsplit,
                     "split_with_sizes": joining.split_with_sizes,
                     "diagflat": diagonal.diagflat, "inner": linalg.inner, "ger": linalg.ger,
                     "dist": norms.dist, "msort": sorting.msort,
                     "select_scatter": scatter.select_scatter,
                     "slice_scatter": scatter.slice_scatter,
                     "diagonal_scatter": scatter.diagonal_scatter,
                     "as_strided": getitem.as_strided, "masked_scatter": masked.masked_scatter,
                     "index_reduce": scatter.index_reduce, "addbmm": linalg.addbmm,
                     "addr": linalg.addr, "histogram": histogram.histogram}.items():
        setattr(T, name, fn)
    T.masked_scatter_ = lambda s, mask, source: inplace(
        s, lambda t, v: masked.masked_scatter(t, mask, v), source)
    T.index_reduce_ = lambda s, dim, index, source, reduce, *, include_self=True: inplace(
        s, lambda t, v: scatter.index_reduce(t, dim, index, v, reduce, include_self=include_self),
        source)
    T.broadcast_to = views.broadcast_to
    T.swapaxes_ = T.swapdims_ = _swap_
    T.tril_ = lambda s, diagonal=0: inplace(s, lambda t: triangular.tril(t, diagonal))
    T.triu_ = lambda s, diagonal=0: inplace(s, lambda t: triangular.triu(t, diagonal))
    T.addmm = lambda s, mat1, mat2, *, beta=1, alpha=1: linalg.addmm(
        s, mat1, mat2, beta=beta, alpha=alpha)
    for name, fn in (("addmm_", linalg.addmm), ("addbmm_", linalg.addbmm), ("addr_", linalg.addr),
                     ("baddbmm_", linalg.baddbmm), ("addmv_", linalg.addmv)):
        setattr(T, name, lambda s, a, b, *, beta=1, alpha=1, _fn=fn: inplace(
            s, lambda t, u, v: _fn(t, u, v, beta=beta, alpha=alpha), a, b))
    # runtime and complex-number queries (real tensors)
    T.new, T.ndimension = _new, lambda s: s.ndim
    T.resize_ = _resize_
    T.resize_as_ = lambda s, other, memory_format=None: _resize_(s, tuple(other.shape))
    T.to_dense = lambda s, dtype=None, *, masked_grad=None: s if dtype is None else s.to(dtype)
    for name in ("is_sparse", "is_quantized", "is_meta", "is_nested", "is_mkldnn"):
        setattr(T, name, property(lambda s: False))
    T.conj, T.resolve_conj, T.resolve_neg = _conj, lambda s: s, lambda s: s
    T.conj_physical = _conj
    T.conj_physical_ = lambda s: s if s._data.dtype.kind != "c" else inplace(s, _conj)
    T.is_conj = T.is_neg = lambda s: False
    T.real, T.imag = property(_real), property(_imag)
    T.mH, T.H = property(_mH), property(_H)
    T.adjoint, T.new_empty_strided = _adjoint, _new_empty_strided
    T.untyped_storage, T.storage = _storage.untyped_storage, _storage.storage
    T._is_view = lambda s: s._base is not None
    T.multiply_, T.subtract_ = T.mul_, T.sub_
    T.hardshrink, T.prelu = _functional("hardshrink"), _functional("prelu")


_install()


def _nn(name):
    """``torch.<name>_(input, ...)``: nn.functional's <name> with inplace=True."""
    def fn(input, *args, **kw):
        from .nn import functional as F  # layering: torch.relu_ ... are F's, in place
        return getattr(F, name)(input, *args, inplace=True, **kw)
    fn.__name__ = name + "_"
    return fn


def _method(name):
    def fn(input, *args, **kw):
        return getattr(input, name)(*args, **kw)
    fn.__name__ = name
    return fn


TOP_LEVEL_INPLACE = {name: _method(name) for name in (
    "abs_", "absolute_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_",
    "arcsinh_", "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_",
    "clamp_", "clamp_max_", "clamp_min_", "clip_", "conj_physical_", "cos_", "cosh_",
    "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
    "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_",
    "relu_", "resize_as_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
    "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")}
TOP_LEVEL_INPLACE.update(
    dropout_=lambda input, p=0.5, train=True: _nn("dropout")(input, p, train),
    alpha_dropout_=lambda input, p=0.5, train=False: _nn("alpha_dropout")(input, p, train),
    feature_alpha_dropout_=lambda input, p=0.5, train=False: _nn("feature_alpha_dropout")(
        input, p, train),
    celu_=_nn("celu"), selu_=_nn("selu"), rrelu_=_nn("rrelu"), threshold_=_nn("threshold"))
