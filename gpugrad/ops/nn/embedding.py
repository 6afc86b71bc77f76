"""Embedding lookups: ``embedding`` (with max_norm renormalisation) and ``embedding_bag``."""
from __future__ import annotations

import numpy as np

from ... import _backend
from ..._backend import xp_of
from ...tensor import Tensor
from .._op import Op
from ..indexing.gather import _check_bounds, _data, _Scatter


# -- embedding bags -------------------------------------------------------------------------------
class EmbeddingBagBackward0(Op):
    """y[b] = the sum / mean / max over bag b's entries j of psw[j] weight[input[j]] (entries
    equal to padding_idx are skipped; an empty bag gives zeros). The bags are gathered padded
    to the longest one: rows (B, L) with a mask of the real entries."""
    __slots__ = ("rows", "pos", "keep", "mode", "num", "n", "hit")
    saves = (0, 1)
    optional_inputs = (1,)   # per_sample_weights
    saved_names = ("weight", "per_sample_weights")
    temps = ("rows", "pos", "keep", "hit")

    def forward(self, xp, weight, psw, index=None, offsets=None, mode="mean", padding_idx=None):
        n, b = index.shape[0], offsets.shape[0] - 1
        lengths = offsets[1:] - offsets[:-1]
        span = int(lengths.max()) if b else 0
        steps = xp.arange(span)
        keep = steps < lengths[:, None]
        pos = xp.where(keep, offsets[:-1, None] + steps, 0)
        rows = index[pos] if n else xp.zeros(pos.shape, dtype=index.dtype)
        if padding_idx is not None:
            keep &= rows != padding_idx
        g = weight[rows]                                            # (B, L, D)
        if psw is not None:
            g = g * psw[pos][..., None]
        self.rows, self.pos, self.mode, self.num, self.n = rows, pos, mode, weight.shape[0], n
        if mode == "max":
            g = xp.where(keep[..., None], g, -xp.inf)
            arg = g.argmax(axis=1)                                  # (B, D)
            self.hit = xp.broadcast_to(keep.any(axis=1)[:, None], arg.shape)
            self.rows = rows[xp.arange(b)[:, None], arg]            # the row each max came from
            y = xp.take_along_axis(g, arg[:, None], axis=1)[:, 0]
            return xp.where(self.hit, y, 0)
        scale = keep.astype(weight.dtype)
        if mode == "mean":
            scale = scale / xp.maximum(keep.sum(axis=1, keepdims=True), 1).astype(weight.dtype)
        self.keep = scale
        return (g * scale[..., None]).sum(axis=1)

    def backward(self, F, gy, weight, psw):
        const = (lambda a: a) if F.fast else Tensor._make
        need = self.needs_input_grad
        gw = gp = None
        d = gy.shape[1]
        if self.mode == "max":
            if need[0]:
                cols = _backend.xp_of(self.rows).arange(d)[None, :]
                gw = F.index_add((self.num, d), (self.rows, cols),
                                 gy * const(self.hit.astype(gy.dtype)))
            return gw, None
        each = gy[:, None, :] * const(self.keep[..., None])        # (B, L, D)
        if need[0]:
            share = each if psw is None else each * psw[self.pos][..., None]
            gw = F.index_add((self.num, d), (self.rows,), share)
        if psw is not None and need[1]:
            gp = F.index_add((self.n,), (self.pos,), F.sum(each * weight[self.rows], axis=2))
        return gw, gp


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embeddings, without building the embeddings."""
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.ndim}")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        bags, size = input.shape
        from ..._creation import arange
        offsets = arange(0, bags * size + 1 if include_last_offset else bags * size,
                         max(size, 1), device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding_bag: scale_grad_by_freq and sparse are not "
                                  "supported by gpugrad")
    for name, t in (("indices", input), ("offsets", offsets)):
        if t.dtype.kind not in "iu":
            raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the "
                               f"following scalar types: Long, Int; but got {t.dtype} instead "
                               "(while checking arguments for embedding_bag)")
    if input.device != weight.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input.device} and {weight.device}! (in "
                           "embedding_bag)")
    num = weight.shape[0]
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    index, offs = input._data.astype(np.int64, copy=False), offsets._data.astype(np.int64)
    n = index.shape[0]
    if offs.shape[0] and int(offs[0]) != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {int(offs[0])}")
    if offs.shape[0] and int(offs[-1]) > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {int(offs[-1])}")
    if n and (int(index.min()) < 0 or int(index.max()) >= num):
        bad = int(((index < 0) | (index >= num)).argmax())
        raise RuntimeError(f"Index {bad} of input takes value {int(index[bad])} which is not in "
                           f"the valid range [0, {num})")
    if max_norm is not None:
        embedding_renorm_(weight, index, max_norm, norm_type)
    if not include_last_offset:
        xp = _backend.xp_of(offs)
        offs = xp.concatenate([offs, xp.asarray([n], dtype=offs.dtype)])
    return EmbeddingBagBackward0.apply(weight, per_sample_weights, index=index, offsets=offs,
                                       mode=mode, padding_idx=padding_idx)


class EmbeddingBackward0(_Scatter):
    """y = weight[indices]   (rows at padding_idx get no gradient; with scale_grad_by_freq a
    row's gradient is divided by how often the mini-batch reads it)"""
    __slots__ = ("padding_idx", "freq")

    def forward(self, xp, weight, indices=None, padding_idx=None, scale_grad_by_freq=False):
        self.shape, self.where, self.padding_idx = weight.shape, (indices,), padding_idx
        self.freq = scale_grad_by_freq
        return weight[indices]

    def backward(self, F, gy):
        g = F.index_add(self.shape, self.where, gy)
        if self.padding_idx is not None or self.freq:
            xp = xp_of(self.where[0])
            keep = xp.ones((self.shape[0], 1), dtype=gy.dtype)
            if self.freq:
                counts = xp.bincount(self.where[0].reshape(-1), minlength=self.shape[0])
                keep = keep / xp.maximum(counts, 1).astype(gy.dtype)[:, None]
            if self.padding_idx is not None:
                keep[self.padding_idx] = 0
            g = g * (keep if F.fast else Tensor._make(keep))
        return g


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rescale in place (outside autograd) each row of ``weight`` read by ``indices`` whose
    norm_type-norm exceeds max_norm to norm max_norm (as PyTorch: by max_norm / (norm + 1e-7))."""
    w = weight._data
    xp = xp_of(w)
    rows = xp.unique(_data(indices).reshape(-1))
    picked = w[rows]
    p = float(norm_type)
    a = xp.abs(picked)
    norm = (a.max(axis=1) if p == float("inf") else (a > 0).sum(axis=1).astype(w.dtype)
            if p == 0 else (a ** p).sum(axis=1) ** (1 / p))
    scale = xp.where(norm > max_norm, max_norm / (norm + 1e-7), 1).astype(w.dtype)
    w[rows] = picked * scale[:, None]
    weight._version_box().v += 1
    return weight


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    a = _data(input)
    if a.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{input.type() if isinstance(input, Tensor) else a.dtype} instead "
                           f"(while checking arguments for embedding)")
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported by gpugrad")
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0 and padding_idx >= n:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -n:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx += n
    _check_bounds(a, weight.shape[0], 0, "index out of range in self")
    if max_norm is not None:
        embedding_renorm_(weight, a, max_norm, norm_type)
    return EmbeddingBackward0.apply(weight, indices=a, padding_idx=padding_idx,
                                    scale_grad_by_freq=bool(scale_grad_by_freq))


OPS = [EmbeddingBagBackward0, EmbeddingBackward0]
