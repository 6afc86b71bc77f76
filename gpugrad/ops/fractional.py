"""Fractional max pooling (Graham, 2014): max pooling over windows whose start positions follow
a pseudo-random sequence of steps of 1 or 2 (or more), drawn from one sample u in [0, 1) per
sample, channel and spatial dimension."""
from __future__ import annotations

from ..tensor import Tensor
from ._op import Op


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
        from .._creation import rand
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
        from .._creation import rand
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


OPS = [FractionalMaxPool2DBackward0, FractionalMaxPool3DBackward0]
