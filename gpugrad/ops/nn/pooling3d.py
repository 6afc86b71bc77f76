"""Max, average and adaptive pooling over 3 spatial dimensions (N, C, D, H, W), each 3-D pool
one op over the input's sliding windows (conv.py's strided view, in 3-D;
helpers from pooling.py), unbatched (C, D, H, W)
inputs pooled as one sample. Max pools scatter their gradient by the indices they return, so
their backward is differentiable again (an index_add); the average pool's backward is its
adjoint, whose own gradient is the pooling again.
"""
from __future__ import annotations

import numpy as np

from .._op import Op
from .conv import _lead, _scatter_windows, _windows
from .pooling import _AvgPoolAdjoint, _bins, _cut, _geometry, _out_size, _pad_to, _values


def _flat_index(xp, shape, index):
    """Positions in the flattened input of per-(n, c) indices into the flattened (D, H, W)."""
    n, c = shape[:2]
    size = int(np.prod(shape[2:]))
    return (xp.arange(n * c).reshape(-1, 1) * size + index.reshape(n * c, -1)).reshape(-1)


def _unravel(xp, arg, kernel):
    """Per-dimension kernel offsets of flat window positions ``arg``."""
    out = []
    for k in reversed(kernel):
        out.append(arg % k)
        arg = arg // k
    return out[::-1]


def _scatter_back(F, shape, flat, gy, batched):
    g = F.index_add((int(np.prod(shape)),), (flat,), F.reshape(gy, (-1,)))
    return F.reshape(g, shape if batched else shape[1:])


class MaxPool3DWithIndicesBackward0(Op):
    """y = the max of each kernel window (padding counts as -inf), indices = its position in
    the flattened (D, H, W) input; the gradient goes to the first maximum of each window"""
    __slots__ = ("shape", "flat", "batched")
    temps = ("flat",)

    def forward(self, xp, x, kernel=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0),
                dilation=(1, 1, 1), ceil_mode=False):
        self.batched = x.ndim == 5
        if not self.batched:
            x = x[None]
        out, full = _geometry(x.shape, kernel, stride, padding, dilation, ceil_mode)
        low = -xp.inf if x.dtype.kind == "f" else xp.iinfo(x.dtype).min
        win = _windows(xp, _pad_to(xp, x, padding, full, low), kernel, stride,
                       dilation)[_lead(out)]
        flat = win.reshape(win.shape[:5] + (-1,))
        arg = flat.argmax(axis=-1)
        index = xp.zeros(arg.shape, dtype=xp.int64)
        for d, (o, s, p, dd, a) in enumerate(zip(out, stride, padding, dilation,
                                                  _unravel(xp, arg, kernel))):
            at = xp.arange(o).reshape((-1,) + (1,) * (2 - d)) * s - p + a * dd
            index = index * x.shape[2 + d] + at
        self.shape, self.flat = x.shape, _flat_index(xp, x.shape, index)
        y = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        return (y, index) if self.batched else (y[0], index[0])

    def backward(self, F, grads):
        return _scatter_back(F, self.shape, self.flat, grads[0], self.batched)


MaxPool3DWithIndicesBackward0.n_outputs = 2


class AvgPool3DBackward0(Op):
    """y = the sum of each kernel window / its divisor: the window's size clipped to the padded
    input (count_include_pad) or to the input, or divisor_override"""
    __slots__ = ("shape", "full", "kernel", "stride", "padding", "divisor", "batched", "args")

    def forward(self, xp, x, kernel=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0),
                ceil_mode=False, count_include_pad=True, divisor_override=None):
        self.args = dict(kernel=kernel, stride=stride, padding=padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)
        self.batched = x.ndim == 5
        if not self.batched:
            x = x[None]
        out, full = _geometry(x.shape, kernel, stride, padding, (1, 1, 1), ceil_mode)
        win = _windows(xp, _pad_to(xp, x, padding, full, 0), kernel, stride)[_lead(out)]
        if divisor_override is not None:
            divisor = x.dtype.type(divisor_override)
        else:
            divisor = np.ones(())
            for n, k, s, p, o in zip(x.shape[2:], kernel, stride, padding, out):
                start = np.arange(o) * s - p
                end = np.minimum(start + k, n + p)
                count = (end - start if count_include_pad else
                         np.minimum(end, n) - np.maximum(start, 0))
                divisor = np.multiply.outer(divisor, count)
            divisor = xp.asarray(divisor, dtype=x.dtype)
        self.shape, self.full, self.kernel, self.stride = x.shape, full, kernel, stride
        self.padding, self.divisor = padding, divisor
        y = win.sum(axis=(-3, -2, -1)) / divisor
        return y if self.batched else y[0]

    def backward(self, F, gy):
        if not F.fast:
            return AvgPool3DBackwardBackward0.apply(gy, pool=self)
        return self.scatter(F.xp, gy)

    def scatter(self, xp, gy):
        """The adjoint of the pooling applied to ``gy``: each window's share back in place."""
        gy = gy if self.batched else gy[None]
        shares = xp.broadcast_to((gy / self.divisor)[..., None, None, None],
                                 gy.shape + self.kernel)
        g = _scatter_windows(xp, shares, self.full, self.stride)
        return _cut(g, self.padding, self.shape, not self.batched)


class AvgPool3DBackwardBackward0(_AvgPoolAdjoint):
    """gx = avg_pool3d's adjoint applied to gy"""


class AdaptiveMaxPool3DBackward0(Op):
    """y[i, j, k] = the max of x over PyTorch's adaptive bins [floor(i D / od), ceil((i + 1) D
    / od)) (likewise in H and W), indices = its position in the flattened (D, H, W) input; the
    gradient goes to the first maximum of each bin"""
    __slots__ = ("shape", "flat", "batched")
    temps = ("flat",)

    def forward(self, xp, x, output_size=(1, 1, 1)):
        self.batched = x.ndim == 5
        if not self.batched:
            x = x[None]
        self.shape = x.shape
        n, c = x.shape[:2]
        if 0 in output_size or x.size == 0:
            self.flat = xp.zeros(0, dtype=xp.int64)
            y = xp.zeros((n, c) + tuple(output_size), x.dtype)
            index = xp.zeros(y.shape, xp.int64)
        else:
            bins = [xp.asarray(_bins(s, o)) for s, o in zip(x.shape[2:], output_size)]
            win = x[:, :, bins[0]][:, :, :, :, bins[1]][..., bins[2]]   # (N, C, od, kd, ...)
            flat = win.transpose(0, 1, 2, 4, 6, 3, 5, 7).reshape(
                (n, c) + tuple(output_size) + (-1,))
            arg = flat.argmax(axis=-1)
            index = xp.zeros(arg.shape, dtype=xp.int64)
            spans = tuple(b.shape[1] for b in bins)
            for d, (b, a) in enumerate(zip(bins, _unravel(xp, arg, spans))):
                o = xp.arange(b.shape[0]).reshape((-1,) + (1,) * (2 - d))
                index = index * x.shape[2 + d] + b[o, a]
            self.flat = _flat_index(xp, x.shape, index)
            y = xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
        return (y, index) if self.batched else (y[0], index[0])

    def backward(self, F, grads):
        return _scatter_back(F, self.shape, self.flat, grads[0], self.batched)


AdaptiveMaxPool3DBackward0.n_outputs = 2


# -- public functions -----------------------------------------------------------------------------
def _triple(v, fn, name, rule):
    if isinstance(v, int):
        return (v,) * 3
    v = tuple(v)
    if len(v) == 1:
        return v * 3
    if len(v) != 3:
        raise RuntimeError(f"{fn}: {name} must {rule} a tuple of three ints")
    return v


def _pool3d(input, fn, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's checks of a 3-D pooling, in its order."""
    if input.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    for i, n in enumerate(input.shape[-4:]):
        if n == 0 and fn == "max_pool3d":
            raise RuntimeError(f"max_pool3d_with_indices_out_cpu_template(): Expected input's "
                               f"non-batch dimensions to have positive length, but input has a "
                               f"shape of {list(input.shape)} and non-batch dimension {i} has "
                               "length zero!")
        if n == 0:
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if any(k <= 0 for k in kernel):
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"k{a}: {k}" for a, k in zip("THW", kernel)))
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    if any(s < 0 for s in stride):
        raise RuntimeError("stride should be greater than zero, but got " + " ".join(
            f"d{a}: {s}" for a, s in zip("THW", stride)))
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got " + " ".join(
            f"dilation{a}: {d}" for a, d in zip("THW", dilation)))
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > k // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    size = tuple(input.shape[-3:])
    if fn == "avg_pool3d" and any(n < k for n, k in zip(size, kernel)):
        raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller than "
                           f"kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: {kernel[2]})")
    out = [_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
           zip(size, kernel, stride, padding, dilation)]
    if any(o < 1 for o in out):
        c = input.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{'x'.join(map(str, size))}). Calculated "
                           f"output size: ({c}x{'x'.join(map(str, out))}). Output size is too "
                           "small")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    fn = "max_pool3d"
    kernel = _triple(kernel_size, fn, "kernel_size", "either be a single int, or")
    stride = kernel if stride is None or stride == [] else _triple(
        stride, fn, "stride", "either be omitted, a single int, or")
    padding = _triple(padding, fn, "padding", "either be a single int, or")
    dilation = _triple(dilation, fn, "dilation", "be either a single int, or")
    _pool3d(input, fn, kernel, stride, padding, dilation, ceil_mode)
    out = MaxPool3DWithIndicesBackward0.apply(input, kernel=kernel, stride=stride,
                                              padding=padding, dilation=dilation,
                                              ceil_mode=bool(ceil_mode))
    return _values(out, return_indices)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """max_pool3d's values and indices."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    fn = "avg_pool3d"
    kernel = _triple(kernel_size, fn, "kernel_size", "be a single int, or")
    stride = kernel if stride is None or stride == [] else _triple(
        stride, fn, "stride", "be omitted, a single int, or")
    padding = _triple(padding, fn, "padding", "be a single int, or")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _pool3d(input, fn, kernel, stride, padding, (1, 1, 1), ceil_mode)
    return AvgPool3DBackward0.apply(input, kernel=kernel, stride=stride, padding=padding,
                                    ceil_mode=bool(ceil_mode),
                                    count_include_pad=bool(count_include_pad),
                                    divisor_override=divisor_override)


def _adaptive_size(input, output_size, fn, rule):
    if input.ndim not in (4, 5):
        sep = ": " if fn == "adaptive_max_pool3d" else " "
        raise RuntimeError(f"{fn}(): Expected 4D or 5D tensor, but got{sep}{list(input.shape)}")
    size = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 3:
        raise RuntimeError(rule)
    for d in range(1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    return tuple(n if s is None else int(s) for n, s in zip(input.shape[-3:], size))


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The max over adaptive bins of the last three dimensions of (N, C, D, H, W) or
    (C, D, H, W); ``None`` in ``output_size`` keeps that dimension's size."""
    size = _adaptive_size(input, output_size, "adaptive_max_pool3d",
                          "adaptive_max_pool3d(): internal error: output_size.size() must be 3")
    return _values(AdaptiveMaxPool3DBackward0.apply(input, output_size=size), return_indices)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """adaptive_max_pool3d's values and indices."""
    return adaptive_max_pool3d(input, output_size, True)


def _bin_matrix(size, out, like):
    """(out, size): row i averages PyTorch's adaptive bin i of ``size`` positions."""
    m = np.zeros((out, size))
    for i in range(out):
        start, end = i * size // out, -(-(i + 1) * size // out)
        m[i, start:end] = 1.0 / (end - start)
    from ..._creation import tensor
    return tensor(m, dtype=like.dtype, device=like.device)


def adaptive_avg_pool3d(input, output_size):
    """The mean over adaptive bins of the last three dimensions: the bins are boxes, so it is
    three matrix products, one per dimension (P_d, P_h, P_w averaging the bins)."""
    from ..linalg.products import matmul
    size = _adaptive_size(input, output_size, "adaptive_avg_pool3d",
                          "adaptive_avg_pool3d: output_size must be 3")
    d, h, w = input.shape[-3:]
    y = matmul(matmul(_bin_matrix(h, size[1], input), input),
               _bin_matrix(w, size[2], input).mT)                    # (..., D, oh, ow)
    lead = tuple(y.shape[:-3])
    y = matmul(_bin_matrix(d, size[0], input), y.reshape(lead + (d, size[1] * size[2])))
    return y.reshape(lead + size)


OPS = [MaxPool3DWithIndicesBackward0, AvgPool3DBackward0, AvgPool3DBackwardBackward0,
       AdaptiveMaxPool3DBackward0]
