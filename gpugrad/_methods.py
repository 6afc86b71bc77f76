"""Tensor methods and operators that call ops (attached here, after the ops exist)."""
from __future__ import annotations

import numpy as np

from . import _backend
from ._creation import as_dtype
from .ops import random
from .ops._op import direct
from .ops.indexing import gather, masked
from .ops.indexing import getitem as index
from .ops.indexing import scatter as sc
from .ops.linalg import products as linalg
from .ops.linalg import solvers
from .ops.nn import activation as act
from .ops.pointwise import arithmetic as pw
from .ops.pointwise import binary, comparison, minmax
from .ops.pointwise import unary as un
from .ops.reduction import calculus, extrema, histogram, scan, softmax, sorting
from .ops.reduction import reduce as reductions
from .ops.shape import diagonal, flip, joining, repeat, triangular, views
from .ops.special import bessel, error, gamma, logarithmic
from .tensor import Tensor
from .tensor_inplace import inplace


def _cmp(ufunc):
    def compare(self, other):
        if other is None:  # x == None is False (and x < None a TypeError), as in PyTorch
            return NotImplemented
        o = other._data if isinstance(other, Tensor) else other
        if isinstance(other, Tensor) and type(o) is not type(self._data):
            if _backend.cpu_scalar(o):    # a 0-d CPU tensor joins any device, as in PyTorch
                o = o[()]
            elif _backend.cpu_scalar(self._data):
                return compare(self.to(other.device), other)
            else:
                from .ops._op import _device_error
                raise _device_error(ufunc.__name__, self, other)
        try:
            y = ufunc(self._data, o)
        except ValueError as e:
            from .ops._op import broadcast_error
            raise broadcast_error(e, [self._data, o]) from None
        return Tensor._make(np.asarray(y) if type(self._data) is np.ndarray else y)
    return compare


def _logic(name):
    def op(self, other=None):
        xp = _backend.xp_of(self._data)
        f = getattr(xp, name)
        if other is None:
            return Tensor._make(xp.asarray(f(self._data)))  # 0-d: numpy gives a scalar
        return Tensor._make(xp.asarray(f(self._data, other._data if isinstance(other, Tensor)
                                         else other)))
    return op


def to_args(args, kwargs):
    """(device or None, dtype or None) from PyTorch's ``to`` forms: ``to(dtype)``,
    ``to(device)``, ``to(device, dtype)``, ``to(other_tensor)``, ``to(cuda_index)``."""
    dtype, dev = kwargs.get("dtype"), kwargs.get("device")
    for a in args:
        if isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _backend.device)) and not _is_dtype_name(a):
            dev = a
        elif isinstance(a, int) and not isinstance(a, bool):
            dev = _backend.device("cuda", a)
        elif a is not None:
            dtype = a
    return (None if dev is None else _backend.device(dev)), as_dtype(dtype)


def _to(self, *args, **kwargs):
    dev, dtype = to_args(args, kwargs)
    if not kwargs.get("copy") and (dtype is None or dtype == self._data.dtype) and (
            dev is None or dev == self.device):
        return self
    if dtype is not None and np.dtype(dtype).kind not in "fc" and self._rg:
        from .autograd.grad_mode import no_grad
        with no_grad():   # integer and bool results are not differentiable (PyTorch)
            return views.ToCopyBackward0.apply(self, dtype=dtype, device=dev)
    return views.ToCopyBackward0.apply(self, dtype=dtype, device=dev)


def _is_dtype_name(a):
    return isinstance(a, str) and a.replace("torch.", "").replace("gpugrad.", "") in (
        "float16", "float32", "float64", "int32", "int64", "bool", "half", "float", "double",
        "long", "int", "int8", "uint8", "int16")


def _cuda(self, device=None):
    return _to(self, "cuda" if device is None else _backend.device(device if not isinstance(
        device, int) else f"cuda:{device}"))


def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    from ._creation import randn
    z = randn(self._data.shape, dtype=self._data.dtype, device=self.device, generator=generator)
    return inplace(self, lambda t: t * 0 + (z * std + mean), raw=lambda a: a.__setitem__(
        Ellipsis, z._data * a.dtype.type(std) + a.dtype.type(mean)))


def _uniform_(self, a=0.0, b=1.0, *, generator=None):
    from ._creation import rand
    u = rand(self._data.shape, dtype=self._data.dtype, device=self.device, generator=generator)
    return inplace(self, lambda t: t * 0 + (u * (b - a) + a), raw=lambda x: x.__setitem__(
        Ellipsis, u._data * x.dtype.type(b - a) + x.dtype.type(a)))


def _mT(self):  # noqa: N802  (PyTorch's name)
    if self.ndim == 1:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got "
                           "1-D tensor.")
    return self if self.ndim == 0 else views.transpose(self, -2, -1)


def _install():
    T = Tensor
    # arithmetic operators
    # the hottest operators call their op's specialised apply directly
    T.__add__ = T.__radd__ = direct(pw.AddBackward0, 2, "__add__")
    T.__sub__ = direct(pw.SubBackward0, 2, "__sub__")
    T.__rsub__ = lambda s, o: pw.RsubBackward1.apply(s, other=o)
    T.__mul__ = T.__rmul__ = direct(pw.MulBackward0, 2, "__mul__")
    T.__truediv__ = direct(pw.DivBackward0, 2, "__truediv__")
    T.__rtruediv__ = lambda s, o: pw.MulBackward0.apply(pw.ReciprocalBackward0.apply(s), o)
    T.__floordiv__ = lambda s, o: pw.div(s, o, rounding_mode="floor")
    T.__rfloordiv__ = lambda s, o: pw.div(Tensor._make(_backend.xp_of(s._data).asarray(o)), s,
                                          rounding_mode="floor")
    T.__mod__ = lambda s, o: s - (s // o) * o
    T.__pow__ = lambda s, o: pw.pow(s, o)
    T.__rpow__ = lambda s, o: pw.PowBackward2.apply(s, base=o)
    T.__neg__ = lambda s: pw.NegBackward0.apply(s)
    T.__pos__ = lambda s: s
    T.__abs__ = lambda s: un.AbsBackward0.apply(s)
    T.__matmul__ = lambda s, o: linalg.matmul(s, o)
    T.__rmatmul__ = lambda s, o: linalg.matmul(Tensor._make(o) if not isinstance(o, Tensor)
                                               else o, s)
    T.__getitem__ = index.getitem
    T.__setitem__ = index.setitem
    # comparisons and logic (not differentiable)
    T.__eq__, T.__ne__ = _cmp(np.equal), _cmp(np.not_equal)
    T.__lt__, T.__le__ = _cmp(np.less), _cmp(np.less_equal)
    T.__gt__, T.__ge__ = _cmp(np.greater), _cmp(np.greater_equal)
    T.eq, T.ne, T.lt, T.le, T.gt, T.ge = T.__eq__, T.__ne__, T.__lt__, T.__le__, T.__gt__, T.__ge__
    T.__and__, T.__or__, T.__xor__ = (_logic("logical_and"), _logic("logical_or"),
                                      _logic("logical_xor"))
    T.__invert__ = T.logical_not = _logic("logical_not")
    T.isnan, T.isinf, T.isfinite = _logic("isnan"), _logic("isinf"), _logic("isfinite")
    T.equal = lambda s, o: bool(s.shape == o.shape and (s._data == o._data).all())
    T.allclose = lambda s, o, rtol=1e-05, atol=1e-08, equal_nan=False: bool(
        _backend.xp_of(s._data).allclose(s._data, o._data, rtol, atol, equal_nan))
    T.all = lambda s, dim=None, keepdim=False: Tensor._make(
        _backend.xp_of(s._data).asarray(s._data.all(axis=dim, keepdims=keepdim)))
    T.any = lambda s, dim=None, keepdim=False: Tensor._make(
        _backend.xp_of(s._data).asarray(s._data.any(axis=dim, keepdims=keepdim)))
    # in place
    def iadd(s, o, alpha=1):
        _warn_if_accumulating_history(s, o)
        return inplace(s, lambda t, v: pw.add(t, v, alpha=alpha), o,
                       raw=lambda a, v: a.__iadd__(v if alpha == 1 else v * alpha))
    T.__iadd__ = T.add_ = iadd
    T.__isub__ = T.sub_ = lambda s, o, alpha=1: inplace(
        s, lambda t, v: pw.sub(t, v, alpha=alpha), o,
        raw=lambda a, v: a.__isub__(v if alpha == 1 else v * alpha))
    T.__imul__ = T.mul_ = lambda s, o: inplace(s, pw.mul, o, raw=lambda a, v: a.__imul__(v))
    T.__itruediv__ = T.div_ = lambda s, o: inplace(s, pw.div, o,
                                                   raw=lambda a, v: a.__itruediv__(v))
    T.pow_ = lambda s, o: inplace(s, pw.pow, o)
    T.neg_ = lambda s: inplace(s, pw.neg)
    T.exp_ = lambda s: inplace(s, un.exp)
    T.relu_ = lambda s: inplace(s, act.relu)
    T.sigmoid_ = lambda s: inplace(s, act.sigmoid)
    T.tanh_ = lambda s: inplace(s, un.tanh)
    T.sqrt_ = lambda s: inplace(s, un.sqrt)
    T.clamp_ = T.clip_ = lambda s, min=None, max=None: inplace(
        s, lambda t: minmax.clamp(t, min, max))
    T.zero_ = lambda s: inplace(s, lambda t: t * 0, raw=lambda a: a.fill(0))
    T.fill_ = lambda s, v: inplace(s, lambda t, x: t * 0 + x, v,
                                   raw=lambda a, x: a.fill(x) if not hasattr(x, "shape")
                                   else a.__setitem__(Ellipsis, x))
    T.copy_ = lambda s, src, non_blocking=False: inplace(
        s, lambda t, v: t * 0 + pw.add(v.to(t.dtype) if isinstance(v, Tensor) else v, 0), src,
        raw=lambda a, v: a.__setitem__(Ellipsis, v))
    T.normal_, T.uniform_ = _normal_, _uniform_
    # functions as methods
    for name, fn in {
        "add": pw.add, "sub": pw.sub, "subtract": pw.sub, "mul": pw.mul, "multiply": pw.mul,
        "div": pw.div, "divide": pw.div, "true_divide": pw.div, "neg": pw.neg,
        "negative": pw.neg, "reciprocal": pw.reciprocal, "pow": pw.pow, "square": pw.square,
        "exp": un.exp, "log": un.log, "sqrt": un.sqrt, "rsqrt": un.rsqrt, "abs": un.abs,
        "absolute": un.abs, "sign": un.sign, "sin": un.sin, "cos": un.cos, "tanh": un.tanh,
        "sigmoid": act.sigmoid, "relu": act.relu, "erf": un.erf, "clamp": minmax.clamp,
        "clip": minmax.clamp, "maximum": minmax.maximum, "minimum": minmax.minimum,
        "where": lambda s, cond, other: minmax.where(cond, s, other),
        "matmul": linalg.matmul, "mm": linalg.mm, "mv": linalg.mv, "dot": linalg.dot,
        "bmm": linalg.bmm,
        "sum": reductions.sum, "prod": reductions.prod, "mean": reductions.mean,
        "var": reductions.var,
        "std": reductions.std,
        "max": extrema.max, "min": extrema.min, "amax": extrema.amax, "amin": extrema.amin,
        "argmax": extrema.argmax, "argmin": extrema.argmin, "norm": reductions.norm,
        "logsumexp": reductions.logsumexp, "softmax": softmax.softmax,
        "log_softmax": softmax.log_softmax,
        "reshape": views.reshape, "view": views.view, "flatten": views.flatten,
        "squeeze": views.squeeze, "unsqueeze": views.unsqueeze, "expand": views.expand,
        "expand_as": views.expand_as, "permute": views.permute, "transpose": views.transpose,
        "swapaxes": views.transpose, "swapdims": views.transpose, "t": views.t,
        "clone": views.clone, "contiguous": views.contiguous, "split": joining.split,
        "chunk": joining.chunk, "unbind": joining.unbind,
        "log1p": un.log1p, "expm1": un.expm1, "tan": un.tan, "sinh": un.sinh, "cosh": un.cosh,
        "asin": un.asin, "arcsin": un.asin, "acos": un.acos, "arccos": un.acos,
        "atan": un.atan, "arctan": un.atan, "log2": un.log2, "log10": un.log10,
        "floor": un.floor, "ceil": un.ceil, "round": un.round, "trunc": un.trunc,
        "fix": un.trunc, "frac": un.frac,
        "gather": gather.gather, "index_select": gather.index_select,
        "masked_fill": masked.masked_fill,
        "roll": flip.roll, "cumsum": scan.cumsum, "tril": triangular.tril,
        "triu": triangular.triu, "sort": sorting.sort, "argsort": sorting.argsort,
        "topk": sorting.topk,
        "repeat": repeat.repeat, "narrow": views.narrow, "outer": linalg.outer,
        "masked_fill_": lambda s, mask, value: inplace(
        s, lambda t: masked.masked_fill(t, mask, value)),
        "atan2": binary.atan2, "arctan2": binary.atan2, "lerp": pw.lerp, "addcmul": pw.addcmul,
        "addcdiv": pw.addcdiv, "masked_select": masked.masked_select, "ravel": views.ravel,
        "movedim": views.movedim, "moveaxis": views.movedim, "nonzero": gather.nonzero,
        "isclose": comparison.isclose, "count_nonzero": reductions.count_nonzero,
        "trace": diagonal.trace,
        "diag": diagonal.diag, "median": extrema.median,
        "bernoulli": lambda s, p=None, *, generator=None: _creation_fn("bernoulli")(
        s, p, generator=generator),
        "multinomial": lambda s, n, replacement=False, *, generator=None: _creation_fn(
        "multinomial")(s, n, replacement, generator=generator),
        "type_as": lambda s, o: _to(s, o.dtype),
        "stride": _stride,
        "new_full": lambda s, size, fill_value, dtype=None, device=None, requires_grad=False:
        _new("full", s, (size, fill_value), dtype, device, requires_grad),
        "new_empty": lambda s, *size, dtype=None, device=None, requires_grad=False: _new(
        "empty", s, size, dtype, device, requires_grad),
        "to": _to, "cuda": _cuda,
        "cpu": lambda s: _to(s, "cpu"),
        "float": lambda s: _to(s, np.float32), "double": lambda s: _to(s, np.float64),
        "half": lambda s: _to(s, np.float16), "long": lambda s: _to(s, np.int64),
        "int": lambda s: _to(s, np.int32), "bool": lambda s: _to(s, np.bool_),
        "view_as": lambda s, o: views.view(s, o._data.shape),
        "reshape_as": lambda s, o: views.reshape(s, o._data.shape),
        "new_zeros": lambda s, *size, dtype=None, device=None, requires_grad=False: _new(
        "zeros", s, size, dtype, device, requires_grad),
        "new_ones": lambda s, *size, dtype=None, device=None, requires_grad=False: _new(
        "ones", s, size, dtype, device, requires_grad),
        "new_tensor": lambda s, data, dtype=None, device=None, requires_grad=False: _new_tensor(
        s, data, dtype, device, requires_grad),
    }.items():
        setattr(T, name, fn)
    T.T = property(lambda s: views.permute(s, *range(s.ndim)[::-1]))
    T.mT = property(_mT)


LEAK_HINT = (
    "accumulating a tensor whose graph backward() has already used: `total += loss` chains every "
    "step's graph into `total`, so memory grows with every step. Accumulate `loss.item()` (a "
    "number) or `loss.detach()` instead.")


def _used_by_backward(t):
    """True when ``t``'s history reaches (one step down) a node backward() already released."""
    from .autograd.graph import AccumulateGrad  # a leaf's sink lives on across steps
    fn = t.grad_fn if isinstance(t, Tensor) else None
    if fn is None:
        return False
    return fn._saved is None or any(
        c is not None and c.__class__ is not AccumulateGrad and getattr(c, "_saved", ()) is None
        for c, _ in fn.next_functions)


def _warn_if_accumulating_history(s, o):
    """``s += o`` where ``s`` or ``o`` carries a graph that backward already ran through: the
    classic ``total_loss += loss`` leak, which no engine reports."""
    from .autograd.grad_mode import state
    if state.enabled and (_used_by_backward(o) or _used_by_backward(s)):
        import warnings
        warnings.warn(LEAK_HINT, UserWarning, stacklevel=3)


def _creation_fn(name):
    from . import _creation
    return getattr(_creation, name)


def _stride(s, dim=None):
    """Strides in elements, as PyTorch reports them."""
    st = tuple(b // s._data.itemsize for b in s._data.strides)
    return st if dim is None else st[s._dim(dim)]


def _new(kind, s, size, dtype, device, requires_grad):
    from . import _creation
    return getattr(_creation, kind)(*size, dtype=dtype or s.dtype, device=device or s.device,
                                    requires_grad=requires_grad)


def _new_tensor(s, data, dtype, device, requires_grad):
    from ._creation import tensor
    return tensor(data, dtype=dtype or s.dtype, device=device or s.device,
                  requires_grad=requires_grad)


def _install_indexed_writes():
    """scatter / index_* methods and their in-place forms (the op out of place, then written)."""
    T = Tensor

    def scatter_(s, dim, index, src=None, value=None, *, reduce=None):
        return inplace(s, lambda t, v: sc.scatter(t, dim, index, v, reduce=reduce),
                       value if src is None else src)

    def index_fill_(s, dim, index, value):
        return inplace(s, lambda t, v: sc.index_fill(t, dim, index, v), value)

    T.scatter, T.scatter_ = sc.scatter, scatter_
    T.scatter_add = sc.scatter_add
    T.scatter_add_ = lambda s, dim, index, src: inplace(
        s, lambda t, v: sc.scatter_add(t, dim, index, v), src)
    T.scatter_reduce = sc.scatter_reduce
    T.scatter_reduce_ = lambda s, dim, index, src, reduce, *, include_self=True: inplace(
        s, lambda t, v: sc.scatter_reduce(t, dim, index, v, reduce, include_self=include_self),
        src)
    T.index_add = sc.index_add
    T.index_add_ = lambda s, dim, index, source, *, alpha=1: inplace(
        s, lambda t, v: sc.index_add(t, dim, index, v, alpha=alpha), source)
    T.index_fill, T.index_fill_ = sc.index_fill, index_fill_
    T.index_copy = sc.index_copy
    T.index_copy_ = lambda s, dim, index, source: inplace(
        s, lambda t, v: sc.index_copy(t, dim, index, v), source)
    T.take_along_dim = sc.take_along_dim


def _install_more():
    """Methods of the scans, flips, remainders and nan-reductions and of the matrix functions,
    with a few in-place forms."""
    T = Tensor
    for name, fn in {"cumprod": scan.cumprod, "logcumsumexp": scan.logcumsumexp,
                     "diff": calculus.diff, "tile": repeat.tile, "clamp_min": minmax.clamp_min,
                     "clamp_max": minmax.clamp_max, "tensor_split": joining.tensor_split,
                     "fliplr": flip.fliplr, "flipud": flip.flipud, "rot90": flip.rot90,
                     "hypot": binary.hypot, "logaddexp": binary.logaddexp,
                     "xlogy": binary.xlogy, "fmod": pw.fmod, "remainder": pw.remainder,
                     "nan_to_num": un.nan_to_num, "nansum": reductions.nansum,
                     "nanmean": reductions.nanmean, "unflatten": views.unflatten,
                     "diagonal": views.diagonal, "select": index.select,
                     "take": gather.take}.items():
        setattr(T, name, fn)
    for name, fn in {"inverse": solvers.inverse, "det": solvers.det, "slogdet": solvers.slogdet,
                     "logdet": solvers.logdet, "kron": linalg.kron,
                     "matrix_power": linalg.matrix_power, "addmv": linalg.addmv,
                     "baddbmm": linalg.baddbmm, "vdot": linalg.vdot}.items():
        setattr(T, name, fn)
    T.cross = lambda s, other, dim=None: linalg.cross(s, other, dim)
    T.__mod__ = pw.remainder
    for name, fn in {"clamp_min": minmax.clamp_min, "clamp_max": minmax.clamp_max,
                     "fmod": pw.fmod, "remainder": pw.remainder, "hypot": binary.hypot,
                     "logaddexp": binary.logaddexp, "xlogy": binary.xlogy,
                     "cumprod": scan.cumprod}.items():
        setattr(T, name + "_", lambda s, *a, _fn=fn, **k: inplace(
            s, lambda t, *v: _fn(t, *v, **k), *a))
    T.nan_to_num_ = lambda s, nan=0.0, posinf=None, neginf=None: inplace(
        s, lambda t: un.nan_to_num(t, nan, posinf, neginf))


def _install_special():
    """Methods of the special functions (``ops.special``) and their in-place forms."""
    T = Tensor
    for name, fn in {"lgamma": gamma.lgamma, "digamma": gamma.digamma, "erfinv": error.erfinv,
                     "erfc": error.erfc, "logit": logarithmic.logit, "sinc": logarithmic.sinc,
                     "xlog1py": logarithmic.xlog1py, "i0": bessel.i0,
                     "mvlgamma": gamma.mvlgamma}.items():
        setattr(T, name, fn)
        setattr(T, name + "_", lambda s, *a, _fn=fn, **k: inplace(
            s, lambda t, *v: _fn(t, *v, **k), *a))
    T.polygamma = lambda s, n: gamma.polygamma(n, s)
    T.polygamma_ = lambda s, n: inplace(s, lambda t: gamma.polygamma(n, t))
    for name, fn in {"unfold": views.unfold, "kthvalue": extrema.kthvalue, "mode": extrema.mode,
                     "aminmax": extrema.aminmax, "repeat_interleave": repeat.repeat_interleave,
                     "bincount": histogram.bincount, "unique": sorting.unique,
                     "floor_divide": pw.floor_divide, "sgn": un.sgn,
                     "fill_diagonal_": diagonal.fill_diagonal_,
                     "bernoulli_": random.bernoulli_, "exponential_": random.exponential_,
                     "random_": random.random_}.items():
        setattr(T, name, fn)
    T.abs_ = T.absolute_ = lambda s: inplace(s, un.abs)
    T.sgn_ = lambda s: inplace(s, un.sgn)
    T.floor_divide_ = lambda s, o: inplace(s, lambda t, v: pw.floor_divide(t, v), o)


_install()
_install_indexed_writes()
_install_more()
_install_special()
