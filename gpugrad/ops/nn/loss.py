"""Losses: mse, l1, smooth_l1, huber, nll, cross-entropy, binary cross-entropy (with logits), and
the connectionist temporal classification loss ``ctc_loss``.

Cross-entropy is not an op of its own: it is ``log_softmax`` followed by ``nll_loss``. The CTC
loss of a sample is -log p(target | log_probs): the sum over every alignment of the target.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import _backend, kernels
from ..._arguments import expect_int, expect_tensors, not_tensor
from ..._backend import xp_of
from ..._bfloat16 import is_float, is_inexact
from ...amp._state import state as _amp
from ...amp._state import upper as _upper
from ...tensor import Tensor, scalar_name
from .._op import Op, _device_error
from ..reduction.softmax import log_softmax

_REDUCTIONS = ("none", "mean", "sum")


def _reduce(xp, loss, reduction):
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


class MseLossBackward0(Op):
    """y = mean((x - t)^2)   ('sum': the sum, 'none': elementwise)"""
    __slots__ = ("reduction", "scale")
    saves = (0, 1)
    saved_names = ("self", "target")
    broadcasts = True

    def forward(self, xp, x, t, reduction="mean"):
        d = x - t
        d *= d
        self.reduction = reduction
        self.scale = 1.0 / max(d.size, 1) if reduction == "mean" else 1.0
        return _reduce(xp, d, reduction)

    def backward(self, F, gy, x, t):
        if F.fast and x.shape == t.shape:
            gx = kernels.mse_bwd(x, t, gy, self.scale)
        else:
            gx = (x - t) * (gy * (2 * self.scale))
        need = self.needs_input_grad
        return (gx if need[0] else None), (-gx if need[1] else None)


class NllLossBackward0(Op):
    """y = -sum_i w[t_i] x[i, t_i]  (divided by sum_i w[t_i] for 'mean'; rows whose target is
    ``ignore_index`` count for nothing). Class dimension 1; inputs (C), (N, C), (N, C, d1, ...)."""
    __slots__ = ("cols", "coef", "shape", "reduction")
    temps = ("cols", "coef")

    def forward(self, xp, x, target=None, weight=None, ignore_index=-100, reduction="mean"):
        C = x.shape[0] if x.ndim == 1 else x.shape[1]
        x2 = x.reshape(1, C) if x.ndim == 1 else x
        if x.ndim > 2:  # classes last, one row per element
            x2 = xp.moveaxis(x, 1, -1).reshape(-1, C)
        t = target.reshape(-1)
        if xp is not np:   # the GPU: one kernel for the per-row terms, no bounds check (a sync)
            loss, w = kernels.nll_fwd(x2, t, weight, ignore_index)
            if reduction == "mean":
                total = w.sum()   # 0 when every target is ignored: the loss is NaN, the
                loss, coef = loss.sum() / total, w / -(total + (total == 0))  # gradient 0
            else:
                loss = loss.sum() if reduction == "sum" else loss.reshape(target.shape)
                coef = -w
            self.cols, self.coef = t, coef   # coef is 0 on ignored rows: t is never used there
            self.shape, self.reduction = x.shape, reduction
            return loss
        if weight is None and not (t == ignore_index).any():
            cols, w = t, None   # the common case, cheaper: every row counts once
        else:
            valid = t != ignore_index
            cols = xp.where(valid, t, 0)
            w = valid.astype(x.dtype) if weight is None else weight[cols] * valid
        if cols.size and (cols.min() < 0 or cols.max() >= C):
            raise IndexError(f"Target {t[(t != ignore_index) & ((t < 0) | (t >= C))][0]} is "
                             "out of bounds.")
        picked = x2[xp.arange(x2.shape[0]), cols]
        if w is None:
            loss, total, coef = -picked, x.dtype.type(picked.shape[0]), x.dtype.type(-1)
        else:
            # 0 - w keeps ignored rows' gradient at +0 (PyTorch prints 0., not -0.)
            loss, total, coef = -(w * picked), w.sum(), 0 - w
        if reduction == "mean":   # every target ignored: NaN loss, zero gradient (PyTorch's)
            loss, coef = loss.sum() / total, coef / (total + (total == 0))
        elif reduction == "sum":
            loss = loss.sum()
        else:
            loss = loss.reshape(target.shape)
        self.cols, self.coef = cols, coef   # d loss / d x[i, t_i], before gy
        self.shape, self.reduction = x.shape, reduction
        return loss

    def bad_input(self, e, arrays, kw):
        return e if isinstance(e, IndexError) else Op.bad_input(self, e, arrays, kw)

    def backward(self, F, gy):
        g = (F.reshape(gy, (-1,)) if self.reduction == "none" else gy) * self.coef
        shape, cols = self.shape, self.cols
        C = shape[0] if len(shape) == 1 else shape[1]
        if F.fast and F.xp is not np:   # a one-hot product: no zero fill, no scatter
            xp = F.xp   # where, not a product: the other entries are +0, as in PyTorch
            gx = xp.where(xp.arange(C) == cols[:, None], g[:, None], 0)
        elif F.fast:
            rows = np.arange(cols.shape[0])
            gx = F.xp.zeros((cols.shape[0], C), dtype=g.dtype)
            gx[rows, cols] = g   # one write per row: nothing to accumulate
        else:
            rows = xp_of(cols).arange(cols.shape[0])
            g = F.broadcast_to(g, cols.shape)
            gx = F.index_add((cols.shape[0], C), (rows, cols), g)
        if len(shape) == 1:
            gx = F.reshape(gx, shape)
        elif len(shape) > 2:
            n = len(shape)
            gx = F.reshape(gx, (shape[0],) + tuple(shape[2:]) + (C,))
            gx = F.transpose(gx, (0, n - 1) + tuple(range(1, n - 1)))
        return gx


class BinaryCrossEntropyWithLogitsBackward0(Op):
    """y = w ((1 - t) x + (1 + (p - 1) t) log(1 + exp(-x)))   (p = pos_weight, 1 if absent)"""
    __slots__ = ("weight", "pos_weight", "reduction", "scale")
    saves = (0, 1)
    saved_names = ("self", "target")
    temps = ("weight", "pos_weight")
    broadcasts = True

    def forward(self, xp, x, t, weight=None, pos_weight=None, reduction="mean"):
        sp = xp.logaddexp(x.dtype.type(0), -x)   # softplus(-x) = log(1 + exp(-x)), no overflow
        if pos_weight is None:
            loss = (1 - t) * x + sp
        else:
            loss = (1 - t) * x + (1 + (pos_weight - 1) * t) * sp
        if weight is not None:
            loss = loss * weight
        self.weight, self.pos_weight, self.reduction = weight, pos_weight, reduction
        self.scale = 1.0 / max(loss.size, 1) if reduction == "mean" else 1.0
        return _reduce(xp, loss, reduction)

    def backward(self, F, gy, x, t):
        weight, pw = self.weight, self.pos_weight
        g = gy * self.scale if self.scale != 1.0 else gy
        if weight is not None:
            g = g * weight
        s = 0.5 * F.tanh(0.5 * x) + 0.5   # sigmoid(x); the tanh form works on arrays and tensors
        need = self.needs_input_grad
        gx = gt = None
        if pw is None:
            if need[0]:
                gx = (s - t) * g
            if need[1]:
                gt = -x * g
        else:
            if need[0]:
                gx = ((1 + (pw - 1) * t) * s - pw * t) * g
            if need[1]:
                softplus_neg = F.log(1 + F.exp(-F.abs(x))) + F.maximum(-x, 0)
                gt = (-x + (pw - 1) * softplus_neg) * g
        return gx, gt


class _QuadraticThenLinear(Op):
    """y = k (0.5 d^2 / b where |d| < b, else |d| - 0.5 b), d = x - t: the smooth L1 loss is
    k = 1, b = beta; the Huber loss is k = b = delta. The gradient is k clip(d / b, -1, 1)."""
    __slots__ = ("b", "k", "scale")
    saves = (0, 1)
    saved_names = ("self", "target")
    broadcasts = True

    def _forward(self, xp, x, t, reduction, b, k):
        d = x - t
        ad = xp.abs(d)
        loss = xp.where(ad < b, 0.5 * d * d / b, ad - 0.5 * b)
        if k != 1:
            loss = loss * k
        self.b, self.k = b, k
        self.scale = 1.0 / max(loss.size, 1) if reduction == "mean" else 1.0
        return _reduce(xp, loss.astype(d.dtype, copy=False), reduction)

    def backward(self, F, gy, x, t):
        g = F.minimum(F.maximum((x - t) / self.b, -1.0), 1.0) * (gy * (self.k * self.scale))
        need = self.needs_input_grad
        return (g if need[0] else None), (-g if need[1] else None)


class SmoothL1LossBackward0(_QuadraticThenLinear):
    """y = 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta   (d = x - t)"""
    __slots__ = ()

    def forward(self, xp, x, t, reduction="mean", beta=1.0):
        return self._forward(xp, x, t, reduction, beta, 1.0)


class HuberLossBackward0(_QuadraticThenLinear):
    """y = 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)   (d = x - t)"""
    __slots__ = ()

    def forward(self, xp, x, t, reduction="mean", delta=1.0):
        return self._forward(xp, x, t, reduction, delta, delta)


class BinaryCrossEntropyBackward0(Op):
    """y = -w (t log x + (1 - t) log(1 - x)), each log clamped at -100 (as PyTorch)"""
    __slots__ = ("weight", "scale")
    saves = (0, 1)
    saved_names = ("self", "target")
    temps = ("weight",)

    def forward(self, xp, x, t, weight=None, reduction="mean"):
        loss = -(t * xp.maximum(xp.log(x), -100) + (1 - t) * xp.maximum(xp.log1p(-x), -100))
        if weight is not None:
            loss = loss * weight
        self.weight = weight
        self.scale = 1.0 / max(loss.size, 1) if reduction == "mean" else 1.0
        return _reduce(xp, loss.astype(x.dtype, copy=False), reduction)

    def backward(self, F, gy, x, t):
        g = gy * self.scale if self.scale != 1.0 else gy
        if self.weight is not None:
            g = g * self.weight
        need = self.needs_input_grad
        gx = gt = None
        if need[0]:   # PyTorch's form: (x - t) / max(x (1 - x), 1e-12)
            gx = (x - t) / F.maximum(x * (1 - x), 1e-12) * g
        if need[1]:
            gt = (F.maximum(F.log(1 - x), -100) - F.maximum(F.log(x), -100)) * g
        return gx, gt


# -- public functions ---------------------------------------------------------------------------
def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction):
    """The deprecated ``size_average``/``reduce`` pair, as PyTorch maps it."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return ("mean" if size_average else "sum") if reduce else "none"


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    expect_tensors("mse_loss", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    for t in (input, target):
        if t.dtype.kind == "c":
            kind = "ComplexDouble" if t.dtype == np.complex128 else "ComplexFloat"
            raise NotImplementedError(f"\"mse_cpu\" not implemented for '{kind}'")
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=2)
    return MseLossBackward0.apply(input, target, reduction=reduction)


def _check_target(input, target):
    if target.dtype.kind not in "iu":
        raise RuntimeError("expected scalar type Long but found "
                           f"{scalar_name(target.dtype).capitalize()}")
    if target.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{scalar_name(target.dtype).capitalize()}")
    expect = () if input.ndim == 1 else (input.shape[0],) + tuple(input.shape[2:])
    if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    if tuple(target.shape) != expect:
        if input.ndim >= 2 and (target.ndim == 0 or target.shape[0] != input.shape[0]):
            n = target.shape[0] if target.ndim else 1
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({n}).")
        raise RuntimeError(f"expected target of shape {list(expect)} for input of shape "
                           f"{list(input.shape)}, got {list(target.shape)}")


def _array(t, input, op, dtype=None):
    """The array of a non-differentiable argument (class targets, weights), on input's device.
    It goes to the op as a keyword: PyTorch's node has an edge for ``input`` only."""
    if t is None:
        return None
    if type(t._data) is not type(input._data) or t.device != input.device:
        raise _device_error(op.__name__, input, t)
    return t._data if dtype is None or t.dtype == dtype else t._data.astype(dtype)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    expect_tensors("nll_loss", ("input", "target"), input, target)
    if _amp.active:
        input, = _upper(input)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if not is_inexact(input.dtype):
        raise NotImplementedError(f'"nll_loss_out_frame" not implemented for '
                                  f"'{scalar_name(input.dtype).capitalize()}'")
    _check_target(input, target)
    ignore_index = expect_int(ignore_index, "nll_loss", "ignore_index")
    if weight is not None and not isinstance(weight, Tensor):
        raise not_tensor("nll_loss", "weight", weight)
    op = NllLossBackward0
    return op.apply(input, target=_array(target, input, op),
                    weight=_array(weight, input, op, input.dtype), ignore_index=ignore_index,
                    reduction=reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """log_softmax over the class dimension (1, or 0 for an unbatched input), then nll_loss.
    ``target`` holds class indices, or class probabilities shaped like ``input``."""
    expect_tensors("cross_entropy", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    ignore_index = expect_int(ignore_index, "cross_entropy", "ignore_index")
    if weight is not None and not isinstance(weight, Tensor):
        raise not_tensor("cross_entropy", "weight", weight)
    if label_smoothing > 0.0 and not label_smoothing <= 1.0:   # (PyTorch reads <= 0 as none)
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    dim = 0 if input.ndim == 1 else 1
    logp = log_softmax(input, dim)
    C = input.shape[dim]
    wview = None
    if weight is not None:
        wview = weight.reshape((C,) + (1,) * (input.ndim - dim - 1))
    if is_float(target.dtype):   # class probabilities
        if target.shape != input.shape:
            raise RuntimeError(f"Expected target size {list(input.shape)}, got "
                               f"{list(target.shape)}")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / C
        prod = logp * target if wview is None else logp * target * wview
        loss = -prod.sum(dim)
        if reduction == "none":
            return loss
        if reduction == "sum":
            return loss.sum()
        return loss.sum() / max(input.numel() // C, 1) if input.ndim > 1 else loss.sum()
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing <= 0:
        return nll
    smooth = -(logp if wview is None else logp * wview).sum(dim)
    valid = (target != ignore_index).to(logp.dtype)
    smooth = smooth * valid
    if reduction == "mean":
        if weight is None:
            total = valid.sum()
        else:
            cols = target * (target != ignore_index).to(target.dtype)
            total = (weight[cols] * valid).sum()
        # all ignored: nll is already NaN; a zero total must not make the gradient NaN
        smooth = smooth.sum() / (total + (total == 0).to(total.dtype)).detach()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / C)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    expect_tensors("binary_cross_entropy_with_logits", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    op = BinaryCrossEntropyWithLogitsBackward0
    return op.apply(input, target, weight=_array(weight, input, op, input.dtype),
                    pos_weight=_array(pos_weight, input, op, input.dtype), reduction=reduction)


def _same_size(input, target):
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """mean |input - target| (PyTorch's graph: MeanBackward0 <- AbsBackward0 <- SubBackward0)"""
    expect_tensors("l1_loss", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    from ..pointwise.unary import abs as _abs
    from ..reduction.reduce import mean, sum
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _same_size(input, target)
    d = _abs(input - target)
    return d if reduction == "none" else mean(d) if reduction == "mean" else sum(d)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    expect_tensors("smooth_l1_loss", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:   # PyTorch computes the L1 loss then, graph included
        return l1_loss(input, target, reduction=reduction)
    _same_size(input, target)
    return SmoothL1LossBackward0.apply(input, target, reduction=reduction, beta=float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    expect_tensors("huber_loss", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _same_size(input, target)
    return HuberLossBackward0.apply(input, target, reduction=reduction, delta=float(delta))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-mean(t log x + (1 - t) log(1 - x)) of probabilities ``input`` in [0, 1]."""
    expect_tensors("binary_cross_entropy", ("input", "target"), input, target)
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the "
                         "same size.")
    if isinstance(input._data, np.ndarray) and input.numel() and not (
            (input._data >= 0) & (input._data <= 1)).all():   # on a GPU: a sync every step
        raise RuntimeError("all elements of input should be between 0 and 1")
    op = BinaryCrossEntropyBackward0
    w = _array(weight, input, op, input.dtype)
    if w is not None:
        w = _backend.xp_of(w).broadcast_to(w, input.shape)
    return op.apply(input, target, weight=w, reduction=reduction)


_WHERE = "(while checking arguments for ctc_loss_allocate_outputs)"


def _lse(xp, *terms):
    """log(sum(exp(terms))), -inf when every term is -inf (PyTorch's order: max first)."""
    m = terms[0]
    for a in terms[1:]:
        m = xp.maximum(m, a)
    safe = xp.where(m == -xp.inf, 0, m)
    total = 0
    for a in terms:
        total = total + xp.exp(a - safe)
    return xp.log(total) + safe


def _shift(xp, a, k, fill):
    """a moved k places to the right (k > 0) or left (k < 0) along its last axis."""
    pad = xp.full(a.shape[:-1] + (abs(k),), fill, dtype=a.dtype)
    if k > 0:
        return xp.concatenate([pad, a[..., :-k]], axis=-1)
    return xp.concatenate([a[..., -k:], pad], axis=-1)


class CtcLossBackward0(Op):
    """nll[n] = -log sum over alignments pi of target n of prod_t exp(lp[t, n, pi_t]), by
    alpha[t, s] = lp[t, l'_s] + lse(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2] if l'_s is
    a label other than l'_{s-2}); nll = -lse(alpha[T-1, 2 S], alpha[T-1, 2 S - 1])"""
    __slots__ = ("alpha", "nll", "ext", "skip", "il", "tl", "blank", "zero_infinity")
    saves = (0,)
    saved_names = ("log_probs",)
    temps = ("alpha", "nll", "ext", "skip", "il", "tl")

    def forward(self, xp, lp, targets=None, input_lengths=None, target_lengths=None, blank=0,
                zero_infinity=False):
        T, N, _ = lp.shape
        il, tl = input_lengths, target_lengths
        S = 2 * targets.shape[1] + 1
        s = xp.arange(S)
        ext = xp.where(s % 2 == 1, targets[:, xp.minimum(s // 2, max(targets.shape[1] - 1, 0))]
                       if targets.shape[1] else blank, blank)            # (N, S): l'
        ext = xp.where(s <= 2 * tl[:, None], ext, blank)
        prev2 = _shift(xp, ext, 2, blank)
        skip = (s >= 2) & (ext != blank) & (ext != prev2)               # may come from s - 2
        lpe = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (T, N, S)), axis=2)
        ninf = lp.dtype.type(-np.inf)
        alpha = xp.empty((T, N, S), dtype=lp.dtype)
        a = xp.full((N, S), ninf, dtype=lp.dtype)
        a[:, 0] = lpe[0, :, 0]
        if S > 1:
            a[:, 1] = xp.where(tl > 0, lpe[0, :, 1], ninf)
        with np.errstate(divide="ignore", invalid="ignore"):
            for t in range(T):
                if t:
                    a = lpe[t] + _lse(xp, a, _shift(xp, a, 1, ninf),
                                      xp.where(skip, _shift(xp, a, 2, ninf), ninf))
                alpha[t] = xp.where((t < il)[:, None], a, ninf)
            last = alpha[xp.maximum(il - 1, 0), xp.arange(N)]            # (N, S)
            end = 2 * tl
            a_end = xp.take_along_axis(last, end[:, None], axis=1)[:, 0]
            a_pre = xp.take_along_axis(last, xp.maximum(end - 1, 0)[:, None], axis=1)[:, 0]
            nll = -_lse(xp, a_end, xp.where(tl > 0, a_pre, ninf))
        self.alpha, self.nll, self.ext, self.skip = alpha, nll, ext, skip
        self.il, self.tl, self.blank, self.zero_infinity = il, tl, blank, zero_infinity
        return nll

    def backward(self, F, gy, lp):
        if not F.fast:
            raise NotImplementedError("double backward through ctc_loss is not implemented "
                                      "(the derivative for '_ctc_loss_backward' is not "
                                      "implemented)")
        xp = F.xp
        T, N, C = lp.shape
        ext, skip, il, tl, alpha, nll = self.ext, self.skip, self.il, self.tl, self.alpha, self.nll
        S = ext.shape[1]
        ninf = lp.dtype.type(-np.inf)
        lpe = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (T, N, S)), axis=2)
        s = xp.arange(S)
        end = 2 * tl[:, None]
        first = (s == end) | ((s == end - 1) & (tl[:, None] > 0))       # where beta starts
        skip_next = _shift(xp, skip, -2, False)                        # s + 2 may come from s
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ab = xp.empty((T, N, S), dtype=lp.dtype)
            b = xp.full((N, S), ninf, dtype=lp.dtype)
            for t in range(T - 1, -1, -1):
                rec = lpe[t] + _lse(xp, b, _shift(xp, b, -1, ninf),
                                    xp.where(skip_next, _shift(xp, b, -2, ninf), ninf))
                start = xp.where(first, lpe[t], ninf)
                b = xp.where((t == il - 1)[:, None], start,
                             xp.where((t < il - 1)[:, None], rec, ninf))
                ab[t] = alpha[t] + b
            m = ab.max(axis=2, keepdims=True)
            m = xp.where(m == -xp.inf, 0, m)
            onehot = (ext[:, :, None] == xp.arange(C)).astype(lp.dtype)   # (N, S, C)
            post = xp.matmul(xp.exp(ab - m).transpose(1, 0, 2), onehot).transpose(1, 0, 2)
            lcab = xp.log(post) + m                                     # (T, N, C)
            g = (xp.exp(lp) - xp.exp(lcab + nll[None, :, None] - lp)) * gy[None, :, None]
        keep = xp.arange(T)[:, None] < il[None, :]
        if self.zero_infinity:
            keep = keep & ~xp.isinf(nll)[None, :]
        return xp.where(keep[..., None], g, 0)


def _lengths(v, name):
    """Host int64 lengths from a tensor or a sequence of ints."""
    if isinstance(v, Tensor):
        if v.dtype.kind not in "iu":
            raise RuntimeError(f"{name} must be integral")
        return np.asarray(v.detach().cpu().numpy(), dtype=np.int64).reshape(-1)
    if isinstance(v, int) or not hasattr(v, "__len__"):
        raise TypeError(f"ctc_loss(): argument '{name}' must be a tuple of ints or a Tensor, "
                        f"not {type(v).__name__}")
    return np.asarray(list(v), dtype=np.int64).reshape(-1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The CTC loss of (T, N, C) (or unbatched (T, C)) log-probabilities against targets padded
    (N, S) or concatenated (sum(target_lengths),); 'mean' divides each loss by its target
    length (at least 1), then averages over the batch."""
    from ..pointwise.minmax import where
    from ..reduction.reduce import mean
    from ..reduction.reduce import sum as _sum
    _check_reduction(reduction)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    if il.shape[0] != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.shape[0] != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{v} {_WHERE}")
    longest = int(tl.max()) if N else 0
    xp = xp_of(lp._data)
    tgt = tg._data.astype(np.int64, copy=False)
    if tg.ndim == 1:   # concatenated: padded here
        total = int(tl.sum())
        if tg.shape[0] != total:
            raise RuntimeError(f"Expected tensor to have size {total} at dimension 0, but got "
                               f"size {tg.shape[0]} for argument #2 'targets' {_WHERE}")
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]]) if N else np.zeros(0, np.int64)
        pos = np.minimum(starts[:, None] + np.arange(longest), max(total - 1, 0))
        tgt = tgt[xp.asarray(pos)] if total else xp.zeros((N, longest), dtype=np.int64)
    elif tg.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but "
                           f"got size {tg.shape[1]} for argument #2 'targets' {_WHERE}")
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{v} {_WHERE}")
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                               f"{v} {_WHERE}")
    tgt = xp.clip(tgt[:, :max(longest, 0)], 0, C - 1)   # padding is never read
    res = CtcLossBackward0.apply(lp, targets=tgt, input_lengths=xp.asarray(il),
                                 target_lengths=xp.asarray(tl), blank=int(blank),
                                 zero_infinity=bool(zero_infinity))
    if zero_infinity:
        res = where(res == float("inf"), Tensor._make(xp.zeros((), dtype=res.dtype)), res)
    if reduction == "mean":
        div = Tensor._make(xp.asarray(np.maximum(tl, 1), dtype=res.dtype))
        return mean(res / div)
    if reduction == "sum":
        return _sum(res)
    return res if batched else res.squeeze(0)


OPS = [MseLossBackward0, NllLossBackward0, BinaryCrossEntropyWithLogitsBackward0,
       SmoothL1LossBackward0, HuberLossBackward0, BinaryCrossEntropyBackward0, CtcLossBackward0]
