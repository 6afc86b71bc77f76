"""Convolutions (PyTorch's cross-correlation) over 1 or 2 spatial dimensions: one op,
ConvolutionBackward0, computed as a tensor contraction of the input's sliding windows with the
weight (im2col without the copy: the windows are a strided view)."""
from __future__ import annotations

from ._op import Op


def _windows(xp, x, kernel, stride):
    """(N, C, OH, OW, kh, kw) view of the (already padded) input's windows."""
    win = xp.lib.stride_tricks.sliding_window_view(x, kernel, axis=(2, 3))
    return win[:, :, ::stride[0], ::stride[1]]


class ConvolutionBackward0(Op):
    """y[n, o] = sum_{c, i, j} x[n, c, s h + i, s w + j] w[o, c, i, j] + b[o]
    (x zero-padded; 1-D convolutions run as 2-D ones of height 1)"""
    __slots__ = ("stride", "padding", "one_d", "in_shape")
    saves = (0, 1)
    saved_names = ("input", "weight")

    def forward(self, xp, x, w, b, stride=(1, 1), padding=(0, 0), one_d=False):
        if one_d:
            x, w = x[:, :, None, :], w[:, :, None, :]
        self.stride, self.padding, self.one_d, self.in_shape = stride, padding, one_d, x.shape
        (ph, pw), kernel = padding, w.shape[2:]
        if ph or pw:
            x = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
        y = xp.tensordot(_windows(xp, x, kernel, stride), w, axes=([1, 4, 5], [1, 2, 3]))
        y = y.transpose(0, 3, 1, 2)
        if b is not None:
            y = y + b.reshape(1, -1, 1, 1)
        y = xp.ascontiguousarray(y)
        return y[:, :, 0, :] if one_d else y

    def backward(self, F, gy, x, w):
        if not F.fast:
            raise NotImplementedError("double backward through a convolution is not supported "
                                      "by gpugrad (create_graph=True over conv1d/conv2d)")
        xp = F.xp
        if self.one_d:
            x, w, gy = x[:, :, None, :], w[:, :, None, :], gy[:, :, None, :]
        (sh, sw), (ph, pw) = self.stride, self.padding
        n, c, h, wd = self.in_shape
        kh, kw = w.shape[2:]
        oh, ow = gy.shape[2:]
        need = self.needs_input_grad
        gx = gw = gb = None
        if need[0]:   # each kernel offset adds its share back where it read (col2im)
            cols = xp.tensordot(gy, w, axes=([1], [0]))          # (N, OH, OW, C, kh, kw)
            gxp = xp.zeros((n, c, h + 2 * ph, wd + 2 * pw), dtype=gy.dtype)
            for i in range(kh):
                for j in range(kw):
                    gxp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += \
                        cols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
            gx = gxp[:, :, ph:ph + h, pw:pw + wd].copy()
            gx = gx[:, :, 0, :] if self.one_d else gx
        if need[1]:
            xpad = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
            gw = xp.tensordot(gy, _windows(xp, xpad, (kh, kw), self.stride),
                              axes=([0, 2, 3], [0, 2, 3]))     # (O, C, kh, kw)
            gw = gw[:, :, 0, :] if self.one_d else gw
        if need[2]:
            gb = gy.sum(axis=(0, 2, 3))
        return gx, gw, gb


def _pair(v, n, name):
    v = (v,) * n if isinstance(v, int) else tuple(v)
    if len(v) != n or any(not isinstance(k, int) for k in v):
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got {name}={v}")
    return v


def _conv(input, weight, bias, stride, padding, dilation, groups, dims):
    name = f"conv{dims}d"
    unbatched = input.ndim == dims + 1
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.ndim != dims + 2:
        raise RuntimeError("weight should have at least three dimensions"
                           if weight.ndim < 3 else f"{name}: expected a {dims + 2}-D weight, "
                           f"got {list(weight.shape)}")
    if groups != 1 or _pair(dilation, dims, "dilation") != (1,) * dims:
        raise NotImplementedError(f"{name}: groups and dilation other than 1 are not supported "
                                  "by gpugrad")
    if unbatched:
        from .shape import squeeze, unsqueeze
        return squeeze(_conv(unsqueeze(input, 0), weight, bias, stride, padding, 1, 1, dims), 0)
    c = input.shape[1]
    if weight.shape[1] != c:
        raise RuntimeError(f"Given groups=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {weight.shape[1]} channels, but "
                           f"got {c} channels instead")
    kernel = tuple(weight.shape[2:])
    if padding == "valid":
        padding = 0
    elif padding == "same":
        if any(k % 2 == 0 for k in kernel) or _pair(stride, dims, "stride") != (1,) * dims:
            raise NotImplementedError(f"{name}: padding='same' is supported for odd kernel sizes "
                                      "and stride 1")
        padding = tuple(k // 2 for k in kernel)
    stride, padding = _pair(stride, dims, "stride"), _pair(padding, dims, "padding")
    size = tuple(input.shape[2:])
    if any(s + 2 * p < k for s, p, k in zip(size, padding, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(str(s + 2 * p) for s, p in zip(size, padding))}). "
                           f"Kernel size: ({' x '.join(map(str, kernel))}). Kernel size can't "
                           "be greater than actual input size")
    if dims == 1:
        stride, padding = (1,) + stride, (0,) + padding
    return ConvolutionBackward0.apply(input, weight, bias, stride=stride, padding=padding,
                                      one_d=dims == 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


OPS = [ConvolutionBackward0]
