"""Convolutions (PyTorch's cross-correlation) over 1 or 2 spatial dimensions, and 2-D max and
average pooling. Each is one op over the input's sliding windows (a strided view: im2col without
the copy); the backward adds each window offset's share back with one strided slice per offset.
"""
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
        ph, pw = self.padding
        kh, kw = w.shape[2:]
        need = self.needs_input_grad
        gx = gw = gb = None
        if need[0]:   # col2im: each kernel offset adds its share back where it read
            cols = xp.tensordot(gy, w, axes=([1], [0])).transpose(0, 3, 1, 2, 4, 5)
            gx = _scatter_windows(xp, cols, self.in_shape, (kh, kw), self.stride, self.padding)
            gx = gx[:, :, 0, :] if self.one_d else gx
        if need[1]:
            xpad = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
            gw = xp.tensordot(gy, _windows(xp, xpad, (kh, kw), self.stride),
                              axes=([0, 2, 3], [0, 2, 3]))     # (O, C, kh, kw)
            gw = gw[:, :, 0, :] if self.one_d else gw
        if need[2]:
            gb = gy.sum(axis=(0, 2, 3))
        return gx, gw, gb


def _scatter_windows(xp, shares, shape, kernel, stride, padding):
    """The gradient of a padded input from per-window shares (N, C, OH, OW, kh, kw): each
    kernel offset adds its share back at the positions it read, then the padding is cut."""
    (sh, sw), (ph, pw) = stride, padding
    n, c, h, w = shape
    oh, ow = shares.shape[2:4]
    g = xp.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=shares.dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            g[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw] += shares[..., i, j]
    return g[:, :, ph:ph + h, pw:pw + w].copy()


class MaxPool2DWithIndicesBackward0(Op):
    """y = the max of each kernel window (padding counts as -inf); the gradient goes to the
    first maximum of each window"""
    __slots__ = ("shape", "kernel", "stride", "padding", "onehot")
    temps = ("onehot",)

    def forward(self, xp, x, kernel=(2, 2), stride=(2, 2), padding=(0, 0)):
        (ph, pw) = padding
        xpad = x if not (ph or pw) else xp.pad(
            x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=-xp.inf)
        win = _windows(xp, xpad, kernel, stride)
        flat = win.reshape(win.shape[:4] + (-1,))
        arg = flat.argmax(axis=-1)
        self.shape, self.kernel, self.stride, self.padding = x.shape, kernel, stride, padding
        self.onehot = (xp.arange(flat.shape[-1]) == arg[..., None]).reshape(win.shape)
        return xp.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]

    def backward(self, F, gy):
        if not F.fast:
            raise NotImplementedError("double backward through max_pool2d is not supported by "
                                      "gpugrad")
        shares = self.onehot * gy[..., None, None]
        return _scatter_windows(F.xp, shares, self.shape, self.kernel, self.stride, self.padding)


class AvgPool2DBackward0(Op):
    """y = the mean of each kernel window (zero padding counted, as PyTorch's default)"""
    __slots__ = ("shape", "kernel", "stride", "padding")

    def forward(self, xp, x, kernel=(2, 2), stride=(2, 2), padding=(0, 0)):
        (ph, pw) = padding
        xpad = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
        self.shape, self.kernel, self.stride, self.padding = x.shape, kernel, stride, padding
        return _windows(xp, xpad, kernel, stride).mean(axis=(-2, -1))

    def backward(self, F, gy):
        if not F.fast:
            raise NotImplementedError("double backward through avg_pool2d is not supported by "
                                      "gpugrad")
        xp = F.xp
        k = self.kernel
        shares = xp.broadcast_to((gy / (k[0] * k[1]))[..., None, None], gy.shape + k)
        return _scatter_windows(xp, shares, self.shape, k, self.stride, self.padding)


def _pool(op, input, kernel_size, stride, padding, name):
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{name}: Expected 3D or 4D (batch mode) tensor for input, but got: "
                           f"{list(input.shape)}")
    if input.ndim == 3:
        from .shape import squeeze, unsqueeze
        return squeeze(_pool(op, unsqueeze(input, 0), kernel_size, stride, padding, name), 0)
    kernel = _pair(kernel_size, 2, "kernel_size")
    stride = kernel if stride is None or stride == [] else _pair(stride, 2, "stride")
    padding = _pair(padding, 2, "padding")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={padding[0]}, kernel_size={kernel[0]} and dilation=1")
    if any(s + 2 * p < k for s, p, k in zip(input.shape[2:], padding, kernel)):
        raise RuntimeError(f"{name}: the padded input ({input.shape[2] + 2 * padding[0]} x "
                           f"{input.shape[3] + 2 * padding[1]}) is smaller than the kernel "
                           f"({kernel[0]} x {kernel[1]})")
    return op.apply(input, kernel=kernel, stride=stride, padding=padding)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if dilation not in (1, (1, 1)) or ceil_mode or return_indices:
        raise NotImplementedError("max_pool2d: dilation, ceil_mode and return_indices are not "
                                  "supported by gpugrad")
    return _pool(MaxPool2DWithIndicesBackward0, input, kernel_size, stride, padding,
                 "max_pool2d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override is not None:
        raise NotImplementedError("avg_pool2d: ceil_mode, count_include_pad=False and "
                                  "divisor_override are not supported by gpugrad")
    return _pool(AvgPool2DBackward0, input, kernel_size, stride, padding, "avg_pool2d")


class ConstantPadNdBackward0(Op):
    """y = x with ``value`` added around it (pad pairs from the last dimension backwards; a
    negative pad crops)"""
    __slots__ = ("inner",)

    def forward(self, xp, x, pad=(), value=0.0):
        lead = x.ndim - len(pad) // 2
        pairs = [(0, 0)] * lead + [(pad[2 * i], pad[2 * i + 1])
                                   for i in reversed(range(len(pad) // 2))]
        grow = [(max(a, 0), max(b, 0)) for a, b in pairs]   # added before / after
        cut = [(max(-a, 0), max(-b, 0)) for a, b in pairs]   # cropped before / after
        y = xp.pad(x, grow, constant_values=value) if grow else x
        y = y[tuple(slice(c0, y.shape[d] - c1) for d, (c0, c1) in enumerate(cut))]
        # the part of x that survives, and where it sits in y (for the backward)
        in_x = tuple(slice(c0, n - c1) for n, (c0, c1) in zip(x.shape, cut))
        in_y = tuple(slice(g0, g0 + n - c0 - c1) for n, (g0, _), (c0, c1) in
                     zip(x.shape, grow, cut))
        self.inner = (in_y, in_x, x.shape)
        return y.copy()   # a new array (never x itself), C-ordered, 0-d kept 0-d

    def backward(self, F, gy):
        in_y, in_x, shape = self.inner
        g = gy[in_y]
        if all(sl == slice(0, n) for sl, n in zip(in_x, shape)):
            return g
        return F.index_add(shape, in_x, g)   # cropped entries get no gradient


def pad(input, pad, mode="constant", value=None):
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    if mode != "constant":
        raise NotImplementedError(f"pad: mode={mode!r} is not supported by gpugrad (constant "
                                  "only)")
    return ConstantPadNdBackward0.apply(input, pad=pad, value=0.0 if value is None else value)


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


OPS = [ConvolutionBackward0, MaxPool2DWithIndicesBackward0, AvgPool2DBackward0,
       ConstantPadNdBackward0]
