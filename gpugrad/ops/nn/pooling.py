"""Max and average pooling over 1 or 2 spatial dimensions, and adaptive max pooling. Each 2-D
pool is one op over the input's sliding windows (conv.py's strided view); 1-D pools run as 2-D
ones of height 1 between an unsqueeze and a squeeze, as PyTorch records them.
"""
from __future__ import annotations

import numpy as np

from .. import _backend
from ..tensor import Tensor
from ._op import Op
from .conv import _scatter_windows, _windows


def _out_size(n, k, s, p, d, ceil_mode):
    """PyTorch's pooling output length (a window may start in the right padding only in
    ceil_mode, and never past it)."""
    out = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _geometry(shape, kernel, stride, padding, dilation, ceil_mode):
    """Output (oh, ow) and the padded input's shape covering every window."""
    out = tuple(_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                zip(shape[2:], kernel, stride, padding, dilation))
    full = tuple(max(n + 2 * p, (o - 1) * s + d * (k - 1) + 1) for n, k, s, p, d, o in
                 zip(shape[2:], kernel, stride, padding, dilation, out))
    return out, shape[:2] + full


def _pad_to(xp, x, padding, full, value):
    """x padded by ``padding`` before and up to ``full`` after each spatial dimension."""
    after = tuple(f - n - p for f, n, p in zip(full[2:], x.shape[2:], padding))
    if not (any(padding) or any(after)):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple(zip(padding, after)), constant_values=value)


class MaxPool2DWithIndicesBackward0(Op):
    """y = the max of each kernel window (padding counts as -inf), indices = its position in
    the flattened (H, W) input; the gradient goes to the first maximum of each window"""
    __slots__ = ("shape", "full", "stride", "padding", "dilation", "arg", "kernel", "unbatched",
                 "index")
    temps = ("arg", "index")

    def forward(self, xp, x, kernel=(2, 2), stride=(2, 2), padding=(0, 0), dilation=(1, 1),
                ceil_mode=False):
        if x.ndim == 3:   # (C, H, W) pools as one sample, recorded as it is
            out = self.forward(xp, x[None], kernel, stride, padding, dilation, ceil_mode)
            self.unbatched = True
            return tuple(a[0] for a in out)
        self.unbatched = False
        (oh, ow), full = _geometry(x.shape, kernel, stride, padding, dilation, ceil_mode)
        low = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        win = _windows(xp, _pad_to(xp, x, padding, full, low), kernel, stride,
                       dilation)[:, :, :oh, :ow]
        flat = win.reshape(win.shape[:4] + (-1,))
        arg = flat.argmax(axis=-1)
        self.shape, self.full, self.kernel = x.shape, full, kernel
        self.stride, self.padding, self.dilation, self.arg = stride, padding, dilation, arg
        (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
        ai, aj = arg // kernel[1], arg % kernel[1]
        rows = xp.arange(oh).reshape(-1, 1) * sh - ph + ai * dh
        cols = xp.arange(ow) * sw - pw + aj * dw
        index = self.index = (rows * x.shape[3] + cols).astype(xp.int64)
        return xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0], index

    def backward(self, F, grads):
        if not F.fast:   # a scatter by the indices: linear in gy, differentiable in it
            n, c, h, w = self.shape
            xp = _backend.xp_of(self.index)
            flat = (xp.arange(n * c).reshape(-1, 1) * (h * w)
                    + self.index.reshape(n * c, -1)).reshape(-1)
            g = F.index_add((n * c * h * w,), (flat,), F.reshape(grads[0], (-1,)))
            return F.reshape(g, self.shape[1:] if self.unbatched else self.shape)
        xp, gy = F.xp, grads[0]
        if self.unbatched:
            gy = gy[None]
        k = self.kernel
        hit = xp.arange(k[0] * k[1]) == self.arg[..., None]
        shares = xp.where(hit, gy[..., None], 0).reshape(gy.shape + k)
        g = _scatter_windows(xp, shares, self.full, self.stride, self.dilation)
        return _cut(g, self.padding, self.shape, self.unbatched)


MaxPool2DWithIndicesBackward0.n_outputs = 2


class AvgPool2DBackward0(Op):
    """y = the sum of each kernel window / its divisor: the window's size clipped to the padded
    input (count_include_pad) or to the input, or divisor_override"""
    __slots__ = ("shape", "full", "kernel", "stride", "padding", "divisor", "unbatched", "args")

    def forward(self, xp, x, kernel=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False,
                count_include_pad=True, divisor_override=None):
        self.args = dict(kernel=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)
        if x.ndim == 3:
            y = self.forward(xp, x[None], kernel, stride, padding, ceil_mode, count_include_pad,
                             divisor_override)
            self.unbatched = True
            return y[0]
        self.unbatched = False
        (oh, ow), full = _geometry(x.shape, kernel, stride, padding, (1, 1), ceil_mode)
        win = _windows(xp, _pad_to(xp, x, padding, full, 0), kernel, stride)[:, :, :oh, :ow]
        if divisor_override is not None:
            divisor = x.dtype.type(divisor_override)
        else:
            counts = []
            for n, k, s, p, o in zip(x.shape[2:], kernel, stride, padding, (oh, ow)):
                start = np.arange(o) * s - p
                end = np.minimum(start + k, n + p)
                counts.append(end - start if count_include_pad else
                              np.minimum(end, n) - np.maximum(start, 0))
            divisor = xp.asarray(np.outer(*counts), dtype=x.dtype)
        self.shape, self.full, self.kernel, self.stride = x.shape, full, kernel, stride
        self.padding, self.divisor = padding, divisor
        return win.sum(axis=(-2, -1)) / divisor

    def backward(self, F, gy):
        if not F.fast:
            return AvgPool2DBackwardBackward0.apply(gy, pool=self)
        return self.scatter(F.xp, gy)

    def scatter(self, xp, gy):
        """The adjoint of the pooling applied to ``gy``: each window's share back in place."""
        gy = gy[None] if self.unbatched else gy
        shares = xp.broadcast_to((gy / self.divisor)[..., None, None], gy.shape + self.kernel)
        g = _scatter_windows(xp, shares, self.full, self.stride)
        return _cut(g, self.padding, self.shape, self.unbatched)


class _AvgPoolAdjoint(Op):
    """gx = an average pooling's adjoint applied to gy (its backward under create_graph=True);
    being linear, its own gradient is that pooling again (``pool`` is the pooling's node)"""
    __slots__ = ("pool",)

    def forward(self, xp, gy, pool=None):
        self.pool = pool
        return pool.scatter(xp, gy)

    def backward(self, F, u):
        cls = type(self.pool)
        if F.fast:
            return cls.__new__(cls).forward(F.xp, u, **self.pool.args)
        return cls.apply(u, **self.pool.args)


class AvgPool2DBackwardBackward0(_AvgPoolAdjoint):
    """gx = avg_pool2d's adjoint applied to gy"""


class AdaptiveMaxPool2DBackward0(Op):
    """y[i, j] = the max of x over PyTorch's adaptive bin rows [floor(i H / oh), ceil((i + 1) H
    / oh)) x columns (likewise), indices = its position in the flattened (H, W) input; the
    gradient goes to the first maximum of each bin"""
    __slots__ = ("shape", "flat")

    def forward(self, xp, x, output_size=(1, 1)):
        if x.ndim == 3:
            out = self.forward(xp, x[None], output_size)
            self.shape = x.shape   # the backward scatters into the flattened input, any rank
            return tuple(a[0] for a in out)
        self.shape = x.shape
        n, c, h, w = x.shape
        (oh, ow) = output_size
        if oh == 0 or ow == 0 or x.size == 0:
            self.flat = xp.zeros(0, dtype=xp.int64)
            return xp.zeros((n, c, oh, ow), x.dtype), xp.zeros((n, c, oh, ow), xp.int64)
        rows, cols = xp.asarray(_bins(h, oh)), xp.asarray(_bins(w, ow))
        win = x[:, :, rows][..., cols]                     # (N, C, oh, kh, ow, kw)
        flat = win.transpose(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, -1)
        arg = flat.argmax(axis=-1)
        kw = cols.shape[1]
        r = rows[xp.arange(oh).reshape(-1, 1), arg // kw]
        index = r * w + cols[xp.arange(ow), arg % kw]
        self.flat = (xp.arange(n * c).reshape(-1, 1, 1) * (h * w)
                     + index.reshape(n * c, oh, ow)).reshape(-1)
        return xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0], index

    def backward(self, F, grads):
        gy = grads[0]
        g = F.index_add((int(np.prod(self.shape)),), (self.flat,), F.reshape(gy, (-1,)))
        return F.reshape(g, self.shape)


AdaptiveMaxPool2DBackward0.n_outputs = 2


def _cut(g, padding, shape, unbatched):
    """The input's gradient: the padded gradient ``g`` without its padding."""
    size = shape[len(shape) - len(padding):]
    g = g[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in zip(padding, size))]
    return (g[0] if unbatched else g).copy()


def _bins(size, out):
    """(out, longest bin) input positions of each adaptive bin, the last one repeated to pad
    (a repeat comes after its first occurrence, so the first maximum stays the first)."""
    start = np.arange(out) * size // out
    end = -(-(np.arange(out) + 1) * size // out)
    span = int((end - start).max())
    return np.minimum(start[:, None] + np.arange(span), end[:, None] - 1).astype(np.int64)


# -- public functions -----------------------------------------------------------------------------
def _tuple(v, name, fn, omitted=False):
    if isinstance(v, int):
        return (v, v)
    v = tuple(v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        rule = "either be omitted, a single int," if omitted else (
            "be either a single int," if name == "dilation" else "either be a single int,")
        raise RuntimeError(f"{fn}: {name} must {rule} or a tuple of two ints")
    return v


def _pool2d(input, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's checks of a 2-D pooling, in its order."""
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {stride[0]} dW: "
                           f"{stride[1]}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: "
                           f"{dilation[0]} dilationW: {dilation[1]}")
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    size = tuple(input.shape[-2:])
    out = [_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
           zip(size, kernel, stride, padding, dilation)]
    if any(o < 1 for o in out):
        c = input.shape[-3]
        raise RuntimeError(f"Given input size: ({c}x{size[0]}x{size[1]}). Calculated output "
                           f"size: ({c}x{out[0]}x{out[1]}). Output size is too small")


def _values(out, return_indices):
    values, index = out
    index._rg, index.grad_fn = False, None   # indices are not differentiable
    return (values, index) if return_indices else values


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    kernel = _tuple(kernel_size, "kernel_size", "max_pool2d")
    stride = kernel if stride is None or stride == [] else _tuple(
        stride, "stride", "max_pool2d", omitted=True)
    padding = _tuple(padding, "padding", "max_pool2d")
    dilation = _tuple(dilation, "dilation", "max_pool2d")
    _pool2d(input, kernel, stride, padding, dilation, ceil_mode)
    out = MaxPool2DWithIndicesBackward0.apply(input, kernel=kernel, stride=stride, padding=padding,
                                              dilation=dilation, ceil_mode=bool(ceil_mode))
    return _values(out, return_indices)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    kernel = _tuple(kernel_size, "kernel_size", "avg_pool2d")
    stride = kernel if stride is None or stride == [] else _tuple(
        stride, "stride", "avg_pool2d", omitted=True)
    padding = _tuple(padding, "padding", "avg_pool2d")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _pool2d(input, kernel, stride, padding, (1, 1), ceil_mode)
    return AvgPool2DBackward0.apply(input, kernel=kernel, stride=stride, padding=padding,
                                    ceil_mode=bool(ceil_mode),
                                    count_include_pad=bool(count_include_pad),
                                    divisor_override=divisor_override)


def _one(v, name, fn, rule="an int, list of ints or tuple of ints", avg=False):
    if isinstance(v, int):
        return v
    v = tuple(v)
    if len(v) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(v)})"
                           if avg else
                           f"{fn}() {name} must be {rule} of size 1 but got size {len(v)}")
    return v[0]


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """max_pool2d over (N, C, 1, L): PyTorch's max_pool1d, recorded as it records it."""
    fn = "max_pool1d"
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    k = _one(kernel_size, "kernel_size", fn)
    s = k if stride is None or stride == [] else _one(
        stride, "stride", fn, "None, an int, list of ints, or tuple of ints")
    p = _one(padding, "padding", fn, "an int, list of ints, or tuple of ints")
    d = _one(dilation, "dilation", fn)
    for name, v in (("kernel_size", k), ("stride", s), ("dilation", d)):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {name} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    out = _out_size(input.shape[-1], k, s, p, d, ceil_mode)
    if out < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")
    y = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d), ceil_mode,
                   return_indices)
    return (y[0].squeeze(-2), y[1].squeeze(-2)) if return_indices else y.squeeze(-2)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """avg_pool2d over (N, C, 1, L), as PyTorch records it."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for avg_pool1d)")
    k = _one(kernel_size, "kernel_size", "avg_pool1d", avg=True)
    s = k if stride is None or stride == [] else _one(stride, "stride", "avg_pool1d", avg=True)
    p = _one(padding, "padding", "avg_pool1d", avg=True)
    y = avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad)
    return y.squeeze(-2)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over adaptive bins of the last two dimensions of (N, C, H, W) or (C, H, W);
    ``None`` in ``output_size`` keeps that dimension's size."""
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    size = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    for d in range(1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"adaptive_max_pool2d(): Expected input to have non-zero size for "
                               f"non-batch dimensions, but input has sizes {list(input.shape)} "
                               f"with dimension {d} being empty")
    h, w = input.shape[-2:]
    size = (h if size[0] is None else int(size[0]), w if size[1] is None else int(size[1]))
    out = AdaptiveMaxPool2DBackward0.apply(input, output_size=size)
    return _values(out, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """adaptive_max_pool2d over (N, C, 1, L), as PyTorch records it."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(f"adaptive_max_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    y = adaptive_max_pool2d(input.unsqueeze(-2), (1, output_size), return_indices)
    return (y[0].squeeze(-2), y[1].squeeze(-2)) if return_indices else y.squeeze(-2)


# -- embedding bags -------------------------------------------------------------------------------
class EmbeddingBagBackward0(Op):
    """y[b] = the sum / mean / max over bag b's entries j of psw[j] weight[input[j]] (entries
    equal to padding_idx are skipped; an empty bag gives zeros). The bags are gathered padded
    to the longest one: rows (B, L) with a mask of the real entries."""
    __slots__ = ("rows", "pos", "keep", "mode", "num", "n", "hit")
    saves = (0, 1)
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
        from .._creation import arange
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
        from .select import embedding_renorm_
        embedding_renorm_(weight, index, max_norm, norm_type)
    if not include_last_offset:
        xp = _backend.xp_of(offs)
        offs = xp.concatenate([offs, xp.asarray([n], dtype=offs.dtype)])
    return EmbeddingBagBackward0.apply(weight, per_sample_weights, index=index, offsets=offs,
                                       mode=mode, padding_idx=padding_idx)


OPS = [MaxPool2DWithIndicesBackward0, AvgPool2DBackward0, AvgPool2DBackwardBackward0,
       AdaptiveMaxPool2DBackward0,
       EmbeddingBagBackward0]
