"""Max and average pooling over 1 or 2 spatial dimensions, adaptive max pooling, max unpooling,
power-average (Lp) pooling and fractional max pooling. Each 2-D pool is one op over the input's
sliding windows (conv.py's strided view); 1-D pools run as 2-D ones of height 1.
"""
from __future__ import annotations

import math

import numpy as np

from ... import _backend, _creation
from ...tensor import Tensor
from .._op import Op
from ..linalg.products import matmul
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


_TORCH_DTYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool"}


class MaxUnpool2DBackward0(Op):
    """y[n, c].flat[indices[n, c, i]] = x[n, c, i] over zeros of the output size; its gradient
    gathers gy at the same positions (linear: differentiable to any order)"""
    __slots__ = ("rows", "cols", "shape")
    temps = ("rows", "cols")

    def forward(self, xp, x, indices, output_size=(1, 1)):
        lead = x.shape[:x.ndim - len(output_size)]
        m = int(np.prod(lead))
        self.shape = x.shape
        self.rows = xp.arange(m).reshape(-1, 1)
        self.cols = indices.reshape(m, -1)
        y = xp.zeros((m, int(np.prod(output_size))), dtype=x.dtype)
        y[self.rows, self.cols] = x.reshape(m, -1)
        return y.reshape(lead + tuple(output_size))

    def backward(self, F, gy):
        rows, cols = (self.rows, self.cols) if F.fast else (Tensor._make(self.rows),
                                                            Tensor._make(self.cols))
        g = F.reshape(gy, (self.rows.shape[0], -1))[rows, cols]
        return F.reshape(g, self.shape), None


class MaxUnpool3DBackward0(MaxUnpool2DBackward0):
    """y[n, c].flat[indices[n, c, i]] = x[n, c, i] over zeros of the (D, H, W) output size"""
    __slots__ = ()


def _unpool_output_size(input, kernel, stride, padding, output_size):
    """PyTorch's default output size, or ``output_size`` checked against it."""
    k = len(kernel)
    default = [(input.shape[-k + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(k)]
    if output_size is None:
        return default
    output_size = list(output_size)
    if len(output_size) == k + 2:
        output_size = output_size[2:]
    if len(output_size) != k:
        raise ValueError(f"output_size should be a sequence containing {k} or {k + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d in range(k):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {d} must be '
                             f"between {lo} and {hi})")
    return output_size


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


def _max_unpool(input, indices, size, dims):
    """PyTorch's checks of max_unpool{dims}d (over the spatial ``size``), then the op."""
    if indices.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64" + (
            f" but got: {_TORCH_DTYPE.get(indices.dtype.name, indices.dtype.name)}"
            if dims == 2 else ""))
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Input to max_unpooling{dims}d should be a {dims + 1}d or "
                           f"{dims + 2}d Tensor, but got a tensor with {input.ndim} dimensions.")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    size = tuple(int(s) for s in size)
    if indices.numel():
        index = indices._data
        bad = (index < 0) | (index >= int(np.prod(size)))
        if bool(bad.any()):   # a host sync, but only to validate before writing
            value = int(index.reshape(-1)[int(bad.reshape(-1).argmax())])
            raise RuntimeError(f"Found an invalid max index: {value} (output volumes are of "
                               f"size {'x'.join(map(str, size))})")
    cls = MaxUnpool2DBackward0 if dims == 2 else MaxUnpool3DBackward0
    return cls.apply(input, indices._data, output_size=size)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_unpool2d over (N, C, L, 1), as PyTorch records it."""
    kernel = _ntuple(kernel_size, 1)
    stride = kernel if stride is None else _ntuple(stride, 1)
    size = _unpool_output_size(input, kernel, stride, _ntuple(padding, 1), output_size)
    y = _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), tuple(size) + (1,), 2)
    return y.squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Each value of ``input`` at the position ``indices`` names in its (H, W) plane of the
    output (max_pool2d's indices), zeros elsewhere."""
    kernel = _ntuple(kernel_size, 2)
    stride = kernel if stride is None else _ntuple(stride, 2)
    size = _unpool_output_size(input, kernel, stride, _ntuple(padding, 2), output_size)
    return _max_unpool(input, indices, size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Each value of ``input`` at the position ``indices`` names in its (D, H, W) volume of
    the output (max_pool3d's indices), zeros elsewhere."""
    kernel = _ntuple(kernel_size, 3)
    stride = kernel if stride is None else _ntuple(stride, 3)
    size = _unpool_output_size(input, kernel, stride, _ntuple(padding, 3), output_size)
    return _max_unpool(input, indices, size, 3)


def _lp(out, norm_type, count):
    """(sign(s) relu(|s|) count)^(1 / p) of the windows' means s of x^p"""
    from .activation import relu
    return (out.sign() * relu(out.abs())).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1 / p)"""
    out = avg_pool1d(input.pow(norm_type), kernel_size, kernel_size if stride is None
                     else stride, 0, ceil_mode)
    return _lp(out, norm_type, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each (kh, kw) window of x^p)^(1 / p)"""
    kh, kw = _ntuple(kernel_size, 2)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kh * kw)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each (kd, kh, kw) window of x^p)^(1 / p)"""
    from .pooling3d import avg_pool3d
    kd, kh, kw = _ntuple(kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, math.prod((kd, kh, kw)))


def _starts(xp, u, n_in, n_out, pool):
    """PyTorch's window starts: int((i + u) a) - int(u a), a = (n_in - pool) / (n_out - 1),
    and the last window ends at the input's end. u: (N, C) -> (N, C, n_out) int64"""
    last = xp.full(u.shape + (1,), n_in - pool, dtype=xp.int64)
    if n_out == 1:
        return last
    alpha = u.dtype.type(n_in - pool) / u.dtype.type(n_out - 1)
    i = xp.arange(n_out - 1, dtype=u.dtype)
    seq = ((i + u[..., None]) * alpha).astype(xp.int64) - (u[..., None] * alpha).astype(xp.int64)
    return xp.concatenate([seq, last], axis=-1)


class _FractionalMaxPool(Op):
    """y[n, c, o] = max of x[n, c] over the window whose start along each spatial dimension
    comes from ``_starts``; indices = the flat (C-order) position of the first maximum, which
    gets the gradient. ``samples`` (N, C, rank) holds u per dimension, in ``sample_axes``
    order."""
    __slots__ = ("shape", "flat")
    temps = ("flat",)
    rank = 2
    sample_axes = (1, 0)   # the sample of each spatial dimension (PyTorch: w before h in 2-D)

    def forward(self, xp, x, samples, kernel, output_size):
        r = self.rank
        if x.ndim == r + 1:   # unbatched
            y, idx = self.forward(xp, x[None], samples, kernel, output_size)
            self.shape = x.shape
            return y[0], idx[0]
        n, c, *dims = x.shape
        pos = 0
        for d, (size, k, o, u) in enumerate(zip(dims, kernel, output_size, self.sample_axes)):
            win = _starts(xp, samples[..., u], size, o, k)[..., None] + xp.arange(k)  # N C o k
            shape = [n, c] + [1] * (2 * r)
            shape[2 + d], shape[2 + r + d] = o, k
            stride = 1
            for later in dims[d + 1:]:
                stride *= later
            pos = pos + win.reshape(shape) * stride
        pos = pos.reshape(n, c, *output_size, -1)              # windows in C order
        total = 1
        for size in dims:
            total *= size
        base = (xp.arange(n * c) * total).reshape((n, c) + (1,) * (r + 1))
        vals = x.reshape(-1)[base + pos]
        arg = vals.argmax(axis=-1)[..., None]
        idx = xp.take_along_axis(pos, arg, axis=-1)[..., 0]
        self.shape, self.flat = x.shape, base[..., 0] + idx
        return xp.take_along_axis(vals, arg, axis=-1)[..., 0], idx

    def backward(self, F, gy):
        g = gy[0] if isinstance(gy, (tuple, list)) else gy
        size = 1
        for s in self.shape:
            size *= s
        if g.ndim == self.rank + 1:   # unbatched
            g = F.reshape(g, (1,) + tuple(g.shape))
        gx = F.index_add((size,), (self.flat,), g)
        return F.reshape(gx, self.shape)


class FractionalMaxPool2DBackward0(_FractionalMaxPool):
    """y[n, c, i, j] = max of x[n, c] over rows h_i .. h_i + kh - 1 and columns w_j .. w_j + kw - 1
    (starts from ``_starts``); indices = h W + w of the first maximum, which gets the gradient"""
    __slots__ = ()


class FractionalMaxPool3DBackward0(_FractionalMaxPool):
    """y[n, c, i, j, k] = max of x[n, c] over the kt x kh x kw window at (t_i, h_j, w_k), starts
    from ``_starts`` with samples (u_t, u_h, u_w); indices = (t H + h) W + w of the first
    maximum, which gets the gradient"""
    __slots__ = ()
    rank, sample_axes = 3, (0, 1, 2)


FractionalMaxPool2DBackward0.n_outputs = FractionalMaxPool3DBackward0.n_outputs = 2


def _pair(v):
    return (v, v) if isinstance(v, (int, float)) else tuple(v)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of fractional max pooling over (N, C, H, W) or (C, H, W) input."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an "
                         "output_ratio")
    kh, kw = (int(k) for k in _pair(kernel_size))
    if input.ndim not in (3, 4):
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: "
                           f"{list(input.shape)}")
    if output_size is None:
        ratio = _pair(output_ratio)
        output_size = (int(input.shape[-2] * ratio[0]), int(input.shape[-1] * ratio[1]))
    oh, ow = (int(o) for o in _pair(output_size))
    h, w = input.shape[-2:]
    if oh + kh - 1 > h:
        raise RuntimeError(f"fractional_max_pool2d(): pool height {kh} too large relative to "
                           f"input height {h}")
    if ow + kw - 1 > w:
        raise RuntimeError(f"fractional_max_pool2d(): pool width {kw} too large relative to "
                           f"input width {w}")
    if _random_samples is None:
        from ..._creation import rand
        batch = 1 if input.ndim == 3 else input.shape[0]
        _random_samples = rand(batch, input.shape[-3], 2, dtype=input.dtype, device=input.device)
    samples = _random_samples._data if isinstance(_random_samples, Tensor) else _random_samples
    y, idx = FractionalMaxPool2DBackward0.apply(input, kernel=(kh, kw), output_size=(oh, ow),
                                                samples=samples.reshape(-1, input.shape[-3], 2))
    idx._rg, idx.grad_fn = False, None   # indices are not differentiable
    return y, idx


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling; with ``return_indices`` also the flat (h W + w) argmax."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


def _triple(v):
    return (v, v, v) if isinstance(v, (int, float)) else tuple(v)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    """(values, indices) of fractional max pooling over (N, C, T, H, W) or (C, T, H, W) input;
    ``_random_samples`` (N, C, 3) holds u for T, H and W."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an "
                         "output_ratio")
    kernel = tuple(int(k) for k in _triple(kernel_size))
    if input.ndim not in (4, 5):
        raise RuntimeError(f"fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: "
                           f"{list(input.shape)}")
    if output_size is None:
        ratio = _triple(output_ratio)
        output_size = tuple(int(n * r) for n, r in zip(input.shape[-3:], ratio))
    out = tuple(int(o) for o in _triple(output_size))
    # NOTE: PyTorch checks time, width, height in this order, and strictly (o + k - 1 < n)
    for i, name in ((0, "time"), (2, "width"), (1, "height")):
        if not out[i] + kernel[i] - 1 < input.shape[i - 3]:
            raise RuntimeError(f"fractional_max_pool3d_out(): pool {name} {kernel[i]} too "
                               f"large relative to input {name} {input.shape[i - 3]}")
    if _random_samples is None:
        from ..._creation import rand
        batch = 1 if input.ndim == 4 else input.shape[0]
        _random_samples = rand(batch, input.shape[-4], 3, dtype=input.dtype, device=input.device)
    samples = _random_samples._data if isinstance(_random_samples, Tensor) else _random_samples
    y, idx = FractionalMaxPool3DBackward0.apply(input, kernel=kernel, output_size=out,
                                                samples=samples.reshape(-1, input.shape[-4], 3))
    idx._rg, idx.grad_fn = False, None   # indices are not differentiable
    return y, idx


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling; with ``return_indices`` also the flat ((t H + h) W + w)
    argmax."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


OPS = [MaxPool2DWithIndicesBackward0, AvgPool2DBackward0, AvgPool2DBackwardBackward0,
       AdaptiveMaxPool2DBackward0, MaxUnpool2DBackward0, MaxUnpool3DBackward0,
       FractionalMaxPool2DBackward0, FractionalMaxPool3DBackward0]


# -- adaptive average pooling (1-D, 2-D; 3-D is in pooling3d.py) ---------------------------------
def _pool_matrix(size, out, like):
    """(out, size): row i averages PyTorch's adaptive bin [floor(i size / out),
    ceil((i + 1) size / out))."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -(-(i + 1) * size // out)
        m[i, start:end] = 1.0 / (end - start)
    return _creation.tensor(m, dtype=like.dtype, device=like.device)


def adaptive_avg_pool1d(input, output_size):
    """Average over ``output_size`` adaptive bins of the last dimension of (N, C, L) or (C, L)."""
    if isinstance(output_size, (tuple, list)):
        if len(output_size) != 1:
            raise RuntimeError(f"adaptive_avg_pool1d() argument 'output_size' should contain "
                               f"one int (got {len(output_size)})")
        output_size = output_size[0]
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    return matmul(input, _pool_matrix(input.shape[-1], output_size, input).mT)


def adaptive_avg_pool2d(input, output_size):
    """Average over adaptive bins of the last two dimensions of (N, C, H, W) or (C, H, W);
    ``None`` in ``output_size`` keeps that dimension's size."""
    if input.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    size = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    h, w = input.shape[-2:]
    oh, ow = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    # the bins are rectangles, so the average is P_h @ x @ P_w^T
    return matmul(matmul(_pool_matrix(h, oh, input), input), _pool_matrix(w, ow, input).mT)
