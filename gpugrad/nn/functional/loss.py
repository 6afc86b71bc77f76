"""Loss functions: the regression and classification losses of ``gpugrad.ops.loss`` and CTC,
and the margin, embedding, triplet, likelihood and KL-divergence losses composed here.
Each takes PyTorch's ``size_average`` / ``reduce`` / ``reduction`` arguments and raises its
errors."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ... import _creation
from ...amp._state import state as _amp
from ...amp._state import upper as _upper
from ...autograd.grad_mode import no_grad
from ...ops.indexing import masked
from ...ops.nn import activation as nn_activation
from ...ops.nn.loss import (
    _check_reduction,
    _legacy_reduction,
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    ctc_loss,
    huber_loss,
    l1_loss,
    mse_loss,
    nll_loss,
    smooth_l1_loss,
)
from ...ops.pointwise import minmax, unary
from .activation import logsigmoid
from .distance import pairwise_distance

__all__ = ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
           "huber_loss", "l1_loss", "mse_loss", "nll_loss", "smooth_l1_loss", "ctc_loss",
           "margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
           "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
           "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "gaussian_nll_loss", "poisson_nll_loss", "kl_div"]


_EPSILON = 1e-12   # cosine_embedding_loss: keeps the norms of zero vectors away from 0


def _reduction(size_average, reduce, reduction):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    return loss.mean() if reduction == "mean" else loss.sum()


def _hinge(z):
    """max(z, 0) with gradient 1 only where z > 0."""
    return minmax.where(z > 0, z, 0.0)


_SCALAR_TYPES = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char",
                 "int16": "Short", "int32": "Int", "uint8": "Byte", "bool": "Bool"}


def _check_long(target):
    if target.dtype != np.int64:
        name = _SCALAR_TYPES.get(target.dtype.name, target.dtype.name)
        raise RuntimeError(f"expected scalar type Long but found {name}")


def _host(t):
    """The values of an index tensor for a bounds check, or None on a GPU (no sync there)."""
    data = t._data
    return data if isinstance(data, np.ndarray) else None


def _matrix_shape(input):
    """(rows, classes) of a 0-, 1- or 2-D input, with PyTorch's check."""
    d = input.dim()
    if not ((d == 2 and input.shape[1] != 0) or (d == 1 and input.shape[0] != 0) or d == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    return (1 if d <= 1 else input.shape[0]), (1 if d == 0 else input.shape[-1])


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    if _amp.active:
        input1, input2, target = _upper(input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    if not input1.dim() == input2.dim() == target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target == 1, max(0, margin - x) where target == -1 (both terms for any other
    target value, as PyTorch)."""
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    margin_term = minmax.where(target != 1, (margin - input).clamp_min(0), 0.0)
    self_term = minmax.where(target != -1, input, 0.0)
    return _reduce(margin_term + self_term, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    if _amp.active:
        input1, input2, target = _upper(input1, input2, target)
    reduction = _reduction(size_average, reduce, reduction)
    d = target.dim()
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if input1.dim() != d + 1 or input2.dim() != d + 1:
        raise RuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + _EPSILON
    mag2 = (input2 * input2).sum(d) + _EPSILON
    cos = prod / unary.sqrt(mag1 * mag2)
    pos = minmax.where(target == 1, 1 - cos, 0.0)
    neg = minmax.where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(pos + neg, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)), computed as softplus so that it cannot overflow."""
    if _amp.active:
        input, target = _upper(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(nn_activation.softplus(-target * input, 1.0, math.inf), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(t log sigmoid(x) + (1 - t) log sigmoid(-x)), weighted per class, averaged over the
    classes (the last dimension)."""
    if _amp.active:
        input, target = _upper(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over j != y of w[y] max(0, margin - x[y] + x[j])^p, divided by the class count."""
    if _amp.active:
        input, = _upper(input)
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    nframe, dim = _matrix_shape(input)
    if target.dim() > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and (weight.dim() != 1 or weight.numel() != dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{list(weight.shape)}")
    _check_long(target)
    host = _host(target)
    if host is not None and host.size and (host.min() < 0 or host.max() >= dim):
        raise RuntimeError("target out of range")
    x = input.reshape(nframe, dim)
    t = target.reshape(nframe, 1)
    z = _hinge(margin - x.gather(1, t) + x)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.index_select(0, t.reshape(-1)).reshape(nframe, 1)
    others = _creation.arange(dim, device=input.device) != t
    loss = minmax.where(others, z, 0.0).sum(1) / dim
    return _reduce(loss.reshape(target.shape), reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over listed targets j and non-targets i of max(0, 1 - (x[j] - x[i])), divided by
    the class count; each row of ``target`` lists class indices up to the first -1."""
    if _amp.active:
        input, = _upper(input)
    reduction = _reduction(size_average, reduce, reduction)
    nframe, dim = _matrix_shape(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _check_long(target)
    host = _host(target)
    if host is not None and host.size and (host.min() < -1 or host.max() >= dim):
        raise RuntimeError("argument #2 'target' is out of range")
    x = input.reshape(nframe, dim)
    t = target.reshape(nframe, dim)
    listed = (t != -1).long().cumprod(1) > 0          # (N, L): before the first -1
    cols = minmax.where(listed, t, 0)
    classes = _creation.arange(dim, device=input.device)
    is_target = ((cols.unsqueeze(-1) == classes) & listed.unsqueeze(-1)).any(1)   # (N, C)
    z = 1 - x.gather(1, cols).unsqueeze(-1) + x.unsqueeze(1)                      # (N, L, C)
    keep = listed.unsqueeze(-1) & (is_target == 0).unsqueeze(1) & (z > 0)
    loss = minmax.where(keep, z, 0.0).sum((1, 2)) / dim
    return _reduce(loss if input.dim() == 2 else loss.reshape(()), reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, and "
                           f"negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance (``swap``: d(a, n) becomes
    min(d(a, n), d(p, n)))."""
    if _amp.active:
        anchor, positive, negative = _upper(anchor, positive, negative)
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minmax.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """The triplet margin loss with any distance (default: ``pairwise_distance``)."""
    if _amp.active:
        anchor, positive, negative = _upper(anchor, positive, negative)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = minmax.minimum(d_neg, dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) with
    ``full``). ``var`` may have one dimension fewer than the input, or one dimension of size 1
    (one variance shared by that dimension); the clamp at ``eps`` passes gradients through."""
    if _amp.active:
        input, target, var = _upper(input, target, var)
    if isinstance(var, (int, float)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = _creation.full(input.shape, float(var), dtype=input.dtype, device=input.device)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():   # NOTE: as PyTorch, the clamp is invisible to autograd
        var.clamp_(min=eps)
    loss = 0.5 * (unary.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(input) - target input (``log_input``), else input - target log(input + eps); with
    ``full`` the Stirling term t log t - t + log(2 pi t) / 2 is added where target > 1."""
    if _amp.active:
        input, target = _upper(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = unary.exp(input) - target * input
    else:
        loss = input - target * unary.log(input + eps)
    if full:
        big = target > 1
        t = minmax.where(big, target, 1.0)   # no log of 0 (and no NaN gradient) off the mask
        stirling = t * unary.log(t) - t + 0.5 * unary.log(2 * math.pi * t)
        loss = loss + minmax.where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target * (log(target) - input) (input holds log-probabilities; with ``log_target`` so
    does target). 'batchmean' divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=2)
    if reduction != "batchmean":
        _check_reduction(reduction)
    if input.dtype.kind in "iub" or target.dtype.kind in "iub":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = unary.exp(target) * (target - input)
    else:   # xlogy(t, t): 0 where t == 0
        loss = (target * unary.log(masked.masked_fill(target, target == 0, 1.0))
                - target * input)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    total = loss.sum()
    return total / input.shape[0] if reduction == "batchmean" and input.dim() else total
