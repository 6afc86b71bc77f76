"""Max unpooling (the partial inverse of a max pool: each value back at the position its index
names, zeros elsewhere) and power-average (Lp) pooling. 1-D unpooling runs as 2-D over
(N, C, L, 1), as PyTorch records it; Lp pooling is composed of an average pool and pointwise
ops, as PyTorch composes it.
"""
from __future__ import annotations

import math

import numpy as np

from ..tensor import Tensor
from ._op import Op

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
    from ..nn.functional import relu
    return (out.sign() * relu(out.abs())).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1 / p)"""
    from .pool import avg_pool1d
    out = avg_pool1d(input.pow(norm_type), kernel_size, kernel_size if stride is None
                     else stride, 0, ceil_mode)
    return _lp(out, norm_type, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each (kh, kw) window of x^p)^(1 / p)"""
    from .pool import avg_pool2d
    kh, kw = _ntuple(kernel_size, 2)
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kh * kw)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each (kd, kh, kw) window of x^p)^(1 / p)"""
    from .pool3d import avg_pool3d
    kd, kh, kw = _ntuple(kernel_size, 3)
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, math.prod((kd, kh, kw)))


OPS = [MaxUnpool2DBackward0, MaxUnpool3DBackward0]
