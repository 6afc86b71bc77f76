"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``, written as
PyTorch's reference (math) implementation is."""
from __future__ import annotations

import math
import warnings

from ... import _creation
from ...ops.indexing import masked
from ...ops.linalg.products import linear, matmul
from ...ops.nn.padding import pad
from ...ops.reduction import softmax
from ...ops.shape import joining
from ...tensor import scalar_name
from .dropout import dropout

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _dropout(x, p, training=True):
    return dropout(x, p, training)


def _repeat_heads(t, n):
    """Each head of ``t`` (..., H, S, E) repeated ``n`` times in place (repeat_interleave)."""
    if n == 1:
        return t
    lead, (h, s, e) = tuple(t.shape[:-3]), tuple(t.shape[-3:])
    return t.unsqueeze(-3).expand(*lead, h, n, s, e).reshape(*lead, h * n, s, e)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + bias) v over the last two dimensions; a bool ``attn_mask`` keeps
    the positions where it is True, a float one is added; ``is_causal`` (without a mask) keeps
    the lower triangle, top-left aligned. Rows with every key masked give zeros, as PyTorch."""
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.dim()} key.dim: {key.dim()} and "
                           f"value.dim: {value.dim()} instead.")
    if not query.dtype == key.dtype == value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {scalar_name(query.dtype)} key.dtype: "
                           f"{scalar_name(key.dtype)} and value.dtype: "
                           f"{scalar_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype.kind not in "bf":
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {scalar_name(attn_mask.dtype)} and "
                           f" query.dtype: {scalar_name(query.dtype)} instead.")
    L, S = query.shape[-2], key.shape[-2]
    if enable_gqa and query.dim() >= 3 and key.dim() >= 3:
        n = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, n), _repeat_heads(value, n)
    if scale is None:
        scale = 1 / math.sqrt(query.shape[-1])
    scores = matmul(query, key.mT) * scale
    keep = None
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        keep = _creation.ones(L, S, dtype=_creation.bool, device=query.device).tril()
    elif attn_mask is not None:
        if attn_mask.dtype.kind == "b":
            keep = attn_mask
        else:
            scores = scores + attn_mask
    if keep is not None:
        scores = masked.masked_fill(scores, ~keep, float("-inf"))
    if attn_mask is not None:
        # NOTE: a row masked everywhere softmaxes over zeros instead of -inf (no NaN in the
        # gradient), then is zeroed
        dead = (scores == float("-inf")).all(-1, keepdim=True)
        weights = masked.masked_fill(softmax.softmax(masked.masked_fill(scores, dead, 0.0), -1),
                                     dead, 0.0)
    else:
        weights = softmax.softmax(scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return matmul(weights, value)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A float mask (-inf where a bool mask is True), as PyTorch's ``_canonical_mask``."""
    if mask is None:
        return None
    if mask.dtype.kind not in "bf":
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if mask.dtype.kind == "b":
        zeros = _creation.zeros(mask.shape, dtype=target_type, device=mask.device)
        mask = masked.masked_fill(zeros, mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """True for batched (3-D) query, False for unbatched (2-D); PyTorch's assertions else."""
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")
    batched = query.dim() == 3
    what, n = ("batched (3-D)", 3) if batched else ("unbatched (2-D)", 2)
    if key.dim() != n or value.dim() != n:
        raise AssertionError(f"For {what} `query`, expected `key` and `value` to be {n}-D but "
                             f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != n - 1:
        raise AssertionError(f"For {what} `query`, expected `key_padding_mask` to be `None` or "
                             f"{n - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {what} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.dim()}-D tensor instead")
        want = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.dim() == 3 and tuple(attn_mask.shape) != want:
            raise AssertionError(f"Expected `attn_mask` shape to be {want} but got "
                                 f"{attn_mask.shape}")
    return batched


def _in_projection(query, key, value, w_q, w_k, w_v, b):
    b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """Sequence-first (L, N, E) multi-head attention, PyTorch's functional form. Bool masks
    mark the positions *not* to attend (True = masked), unlike ``scaled_dot_product_attention``.
    Returns ``(output, weights)``; weights are None unless ``need_weights``."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None   # the hint goes to scaled_dot_product_attention as is_causal
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight,
                                 v_proj_weight, in_proj_bias)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:   # self-attention: one matmul
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
        else:
            q, k, v = _in_projection(query, key, value, *in_proj_weight.chunk(3), in_proj_bias)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = joining.cat([k, bias_k.expand(1, bsz, embed_dim)])
        v = joining.cat([v, bias_v.expand(1, bsz, embed_dim)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")
    rows = bsz * num_heads   # heads go into the batch: (N * heads, seq, head_dim)
    q = _heads(q, rows, head_dim)
    k = _heads(k, rows, head_dim) if static_k is None else _static(static_k, "k", rows, head_dim)
    v = _heads(v, rows, head_dim) if static_v is None else _static(static_v, "v", rows, head_dim)
    if add_zero_attn:
        zeros = _creation.zeros((rows, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = joining.cat([k, zeros], 1), joining.cat([v, zeros], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len)
                            .expand(bsz, num_heads, 1, src_len)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = matmul(q * math.sqrt(1.0 / head_dim), k.transpose(-2, -1))
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax.softmax(scores, -1)
        if dropout_p > 0.0:
            weights = _dropout(weights, dropout_p)
        out = matmul(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                     else attn_mask.reshape(bsz, num_heads, -1, src_len))
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    return (out if batched else out.squeeze(1)), None


def _heads(t, rows, head_dim):
    """(seq, N, E) -> (N * heads, seq, head_dim)"""
    return t.reshape(t.shape[0], rows, head_dim).transpose(0, 1)


def _static(t, name, rows, head_dim):
    if t.shape[0] != rows:
        raise AssertionError(f"expecting static_{name}.size(0) of {rows}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{t.shape[2]}")
    return t
