"""Connectionist temporal classification: ``ctc_loss``.

The loss of a sample is -log p(target | log_probs): the sum over every alignment of the target
(blanks between and around its labels, repeats merged) of the alignment's probability. It is
computed in log space by the forward (alpha) recursion over the extended target l' (a blank,
then each label followed by a blank: 2 S + 1 states), vectorised over the batch, one step per
time frame; the backward runs the beta recursion the same way. As PyTorch, the gradient w.r.t.
``log_probs`` is exp(lp) - posterior (the gradient through a log_softmax that produced them).
"""
from __future__ import annotations

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor
from ._op import Op
from .loss import _check_reduction

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
    from .pointwise import where
    from .reduce import mean
    from .reduce import sum as _sum
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


OPS = [CtcLossBackward0]
