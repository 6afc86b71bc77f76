"""Convolutions (PyTorch's cross-correlation) and transposed convolutions over 1, 2 or 3
spatial dimensions. A convolution is one op over the input's sliding windows (a
strided view: im2col without the copy); adding each window offset's share back with one strided
slice per offset (col2im) gives its input gradient, and the transposed convolution's forward.
1-D convolutions run as 2-D ones of height 1. The pooling ops (pooling.py, pooling3d.py), upsampling
and unfold / fold (fold.py) use the same window helpers; padding lives in padding.py. conv3d and
conv_transpose3d add PyTorch's checks and messages for three spatial dimensions.
"""
from __future__ import annotations

import itertools

from ...amp._state import lower as _lower
from ...amp._state import state as _amp
from .._op import Op


def _windows(xp, x, kernel, stride, dilation=None):
    """(N, C, *out, *kernel) view of the (already padded) input's windows (any number of
    spatial dimensions, one per kernel entry)."""
    n = len(kernel)
    dilation = dilation or (1,) * n
    span = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    win = xp.lib.stride_tricks.sliding_window_view(x, span, axis=tuple(range(2, 2 + n)))
    return win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)
               + tuple(slice(None, None, d) for d in dilation)]


def _scatter_windows(xp, shares, shape, stride, dilation=None):
    """zeros(shape) (a padded input's shape) with per-window shares (N, C, *out, *kernel)
    added back at the positions each kernel offset read."""
    n = len(stride)
    dilation = dilation or (1,) * n
    out, kernel = shares.shape[2:2 + n], shares.shape[2 + n:]
    g = xp.zeros(shape, dtype=shares.dtype)
    for offs in itertools.product(*map(range, kernel)):
        at = tuple(slice(i * d, i * d + s * (o - 1) + 1, s)
                   for i, d, s, o in zip(offs, dilation, stride, out))
        g[(slice(None), slice(None)) + at] += shares[(Ellipsis,) + offs]
    return g


def _pad2(xp, x, padding, value=0.0):
    if not any(padding):
        return x
    return xp.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding), constant_values=value)


def _crop(g, padding, size):
    """The ``size`` block of ``g``'s spatial dimensions that starts at ``padding`` (a new
    array)."""
    return g[(slice(None), slice(None)) + tuple(slice(p, p + n) for p, n in
                                                zip(padding, size))].copy()


def _lead(size):
    """The index taking the first ``size`` entries of each spatial dimension."""
    return (slice(None), slice(None)) + tuple(slice(None, n) for n in size)


def _groups(channels, out, groups):
    """Per group: the slice of the input channels and the slice of the weight's dim 0."""
    c, o = channels // groups, out // groups
    return [(slice(g * c, (g + 1) * c), slice(g * o, (g + 1) * o)) for g in range(groups)]


def _conv_fwd(xp, xpad, w, stride, dilation, groups):
    """y[n, o, i, j] = sum_{c, a, b} xpad[n, c, s i + d a, s j + d b] w[o, c, a, b], c running
    over o's group (likewise over 3 spatial dimensions)"""
    k = w.ndim - 2
    win = _windows(xp, xpad, w.shape[2:], stride, dilation)
    axes = ([1] + list(range(2 + k, 2 + 2 * k)), list(range(1, 2 + k)))
    ys = [xp.tensordot(win[:, c], w[o], axes=axes)
          for c, o in _groups(xpad.shape[1], w.shape[0], groups)]
    y = ys[0] if groups == 1 else xp.concatenate(ys, axis=1 + k)
    return y.transpose((0, 1 + k) + tuple(range(1, 1 + k)))


def _conv_gin(xp, gy, w, shape, stride, dilation, groups):
    """The gradient of _conv_fwd's (padded) input of ``shape``: col2im of gy . w"""
    k = w.ndim - 2
    cols = [xp.tensordot(gy[:, o], w[o], axes=([1], [0]))       # (N, *out, C/g, *kernel)
            for _, o in _groups(shape[1], w.shape[0], groups)]
    cols = cols[0] if groups == 1 else xp.concatenate(cols, axis=1 + k)
    order = (0, 1 + k) + tuple(range(1, 1 + k)) + tuple(range(2 + k, 2 + 2 * k))
    return _scatter_windows(xp, cols.transpose(order), shape, stride, dilation)


def _conv_gw(xp, gy, xpad, kernel, stride, dilation, groups):
    """The gradient of _conv_fwd's weight: sum_{n, i, j} gy[n, o, i, j] window[n, c, i, j]"""
    k = len(kernel)
    win = _windows(xp, xpad, kernel, stride, dilation)[_lead(gy.shape[2:])]
    axes = [0] + list(range(2, 2 + k))
    gws = [xp.tensordot(gy[:, o], win[:, c], axes=(axes, axes))
           for c, o in _groups(xpad.shape[1], gy.shape[1], groups)]
    return gws[0] if groups == 1 else xp.concatenate(gws, axis=0)


class ConvolutionBackward0(Op):
    """y[n, o] = sum_{c, i, j} x[n, c, s h + d i, s w + d j] w[o, c, i, j] + b[o]  (x zero-padded,
    c over o's group); transposed: the adjoint in x, y = col2im(x . w) cropped by the padding
    (w of shape (in, out / groups, kh, kw)), plus b"""
    __slots__ = ("stride", "padding", "dilation", "groups", "transposed", "one_d", "in_shape",
                 "kernel")
    saves = (0, 1)
    optional_inputs = (2,)   # the bias
    saved_names = ("input", "weight")

    def forward(self, xp, x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                transposed=False, output_padding=(0, 0), one_d=False):
        if one_d:
            x, w = x[:, :, None, :], w[:, :, None, :]
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.transposed, self.one_d, self.in_shape = transposed, one_d, x.shape
        self.kernel = w.shape[2:]
        if transposed:
            n, k = x.shape[0], w.shape[2:]
            full = tuple((s - 1) * st + d * (kk - 1) + 1 + op for s, st, d, kk, op in
                         zip(x.shape[2:], stride, dilation, k, output_padding))
            g = _conv_gin(xp, x, w, (n, w.shape[1] * groups) + full, stride, dilation, groups)
            y = _crop(g, padding, tuple(f - 2 * p for f, p in zip(full, padding)))
        else:
            y = _conv_fwd(xp, _pad2(xp, x, padding), w, stride, dilation, groups)
        if b is not None:
            y = y + b.reshape((1, -1) + (1,) * (y.ndim - 2))
        y = xp.ascontiguousarray(y)
        return y[:, :, 0, :] if one_d else y

    def backward(self, F, gy, x, w):
        if not F.fast:
            return self._graph_backward(gy, x, w)
        xp = F.xp
        if self.one_d:
            gy, x, w = gy[:, :, None, :], x[:, :, None, :], w[:, :, None, :]
        args = self.stride, self.dilation, self.groups
        need = self.needs_input_grad
        gx = gw = gb = None
        shape = self.in_shape
        if self.transposed:   # the input gradient is a convolution of gy, the weight's one too
            gpad = _pad2(xp, gy, self.padding)
            if need[0]:
                gx = _conv_fwd(xp, gpad, w, *args)[_lead(shape[2:])]
                gx = xp.ascontiguousarray(gx)
            if need[1]:
                gw = _conv_gw(xp, x, gpad, self.kernel, *args)
        else:
            if need[0]:
                full = shape[:2] + tuple(n + 2 * p for n, p in zip(shape[2:], self.padding))
                gx = _crop(_conv_gin(xp, gy, w, full, *args), self.padding, shape[2:])
            if need[1]:
                gw = _conv_gw(xp, gy, _pad2(xp, x, self.padding), self.kernel, *args)
        if need[2]:
            gb = gy.sum(axis=(0,) + tuple(range(2, gy.ndim)))
        if self.one_d:
            gx = None if gx is None else gx[:, :, 0, :]
            gw = None if gw is None else gw[:, :, 0, :]
        return gx, gw, gb

    def _graph_backward(self, gy, x, w):
        """The same gradients as convolutions of tensors (create_graph=True), so they are
        differentiable again to any order: a convolution's input gradient is the transposed
        convolution of gy, its weight gradient a convolution of the input by gy with batch and
        channels swapped (stride and dilation trading places), and the transposed
        convolution's gradients are the same two maps with the roles of gy and x exchanged."""
        from ..reduction.reduce import sum as _sum
        from ..shape.views import squeeze, unsqueeze
        if self.one_d:
            gy, x, w = (None if t is None else unsqueeze(t, 2) for t in (gy, x, w))
        need, shape = self.needs_input_grad, self.in_shape
        s, p, d, g = self.stride, self.padding, self.dilation, self.groups
        gx = gw = gb = None
        if self.transposed:
            if need[0]:
                gx = ConvolutionBackward0.apply(gy, w, None, stride=s, padding=p, dilation=d,
                                                groups=g)[_lead(shape[2:])]
            if need[1]:
                gw = _weight_grad(x, gy, p, s, d, g, self.kernel)
        else:
            if need[0]:
                oh = gy.shape[2:]
                op = tuple(n + 2 * pp - ((o - 1) * ss + dd * (k - 1) + 1) for n, pp, o, ss, dd, k
                           in zip(shape[2:], p, oh, s, d, self.kernel))
                gx = ConvolutionBackward0.apply(gy, w, None, stride=s, padding=p, dilation=d,
                                                groups=g, transposed=True, output_padding=op)
            if need[1]:
                gw = _weight_grad(gy, x, p, s, d, g, self.kernel)
        if need[2]:
            gb = _sum(gy, (0,) + tuple(range(2, gy.ndim)))
        if self.one_d:
            gx = None if gx is None else squeeze(gx, 2)
            gw = None if gw is None else squeeze(gw, 2)
        return gx, gw, gb


def _weight_grad(gy, x, padding, stride, dilation, groups, kernel):
    """sum_{n, i, j} gy[n, o, i, j] xpad[n, c, s i + d a, s j + d b] as a tensor of shape
    (O, C / groups, kh, kw): per group, the convolution of x (channels as batch) by gy (batch
    as channels) with stride d and dilation s, cut to the kernel's size."""
    from ..shape.joining import cat
    from ..shape.views import transpose
    o, c = gy.shape[1] // groups, x.shape[1] // groups
    parts = []
    for k in range(groups):
        xt = transpose(x[:, k * c:(k + 1) * c], 0, 1)
        gt = transpose(gy[:, k * o:(k + 1) * o], 0, 1)
        r = ConvolutionBackward0.apply(xt, gt, None, stride=dilation, padding=padding,
                                       dilation=stride)[_lead(kernel)]
        parts.append(transpose(r, 0, 1))
    return parts[0] if groups == 1 else cat(parts, 0)


def _pair(v, n, name):
    v = (v,) * n if isinstance(v, int) else tuple(v)
    if len(v) != n or any(not isinstance(k, int) for k in v):
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(v)}")
    return v


_NAMES = ("depth", "height", "width")


def _dims2(v, one_d, fill):
    """A 1-D parameter seen as the 2-D one of the height-1 convolution."""
    return (fill,) + v if one_d else v


def _check_params(stride, padding, dilation, groups, output_padding=(0, 0), transposed=False):
    """PyTorch's checks of the convolution parameters (2-D view of 1-D), in its order."""
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        if not transposed:   # PyTorch 2.13's wording; its transposed convolutions keep the names
            raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
        raise RuntimeError("dilation should be greater than zero, but got " + ", ".join(
            f"dilation_{n}: {d}" for n, d in zip(_NAMES[-len(dilation):], dilation)))
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _check_input(input, weight, dims, name):
    if input.ndim not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    if weight.ndim != dims + 2:
        raise RuntimeError("weight should have at least three dimensions"
                           if weight.ndim < 3 else f"{name}: expected a {dims + 2}-D weight, "
                           f"got {list(weight.shape)}")


def _check_groups(weight, groups):
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")


def _conv(input, weight, bias, stride, padding, dilation, groups, dims):
    if _amp.active:
        input, weight, bias = _lower(input, weight, bias)
    name = f"conv{dims}d"
    _check_input(input, weight, dims, name)
    dilation = _pair(dilation, dims, "dilation")
    if input.ndim == dims + 1:
        from ..shape.views import squeeze, unsqueeze
        return squeeze(_conv(unsqueeze(input, 0), weight, bias, stride, padding, dilation,
                             groups, dims), 0)
    kernel = tuple(weight.shape[2:])
    if padding == "valid":
        padding = 0
    elif padding == "same":
        if _pair(stride, dims, "stride") != (1,) * dims:
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        if any(t % 2 for t in total):   # the odd pixel goes after, padded here
            from .padding import pad
            extra = [0 if t % 2 == 0 else 1 for t in reversed(total)]
            input = pad(input, tuple(v for e in extra for v in (0, e)))
        padding = tuple(t // 2 for t in total)
    elif isinstance(padding, str):
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    stride, padding = _pair(stride, dims, "stride"), _pair(padding, dims, "padding")
    one_d = dims == 1
    _check_params(_dims2(stride, one_d, 1), _dims2(padding, one_d, 0),
                  _dims2(dilation, one_d, 1), groups)
    _check_groups(weight, groups)
    c = input.shape[1]
    if weight.shape[1] * groups != c:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {c} channels instead")
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {weight.shape[0]} elements, but got bias of "
                           f"size {list(bias.shape)} instead")
    size = tuple(input.shape[2:])
    span = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    if any(s + 2 * p < k for s, p, k in zip(size, padding, span)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(str(s + 2 * p) for s, p in zip(size, padding))}). "
                           f"Kernel size: ({' x '.join(map(str, span))}). Kernel size can't "
                           "be greater than actual input size")
    return ConvolutionBackward0.apply(
        input, weight, bias, stride=_dims2(stride, one_d, 1), padding=_dims2(padding, one_d, 0),
        dilation=_dims2(dilation, one_d, 1), groups=groups, one_d=one_d)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1)


def _conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation,
                    dims):
    if _amp.active:
        input, weight, bias = _lower(input, weight, bias)
    name = f"conv_transpose{dims}d"
    _check_input(input, weight, dims, name)
    if input.ndim == dims + 1:
        from ..shape.views import squeeze, unsqueeze
        return squeeze(_conv_transpose(unsqueeze(input, 0), weight, bias, stride, padding,
                                       output_padding, groups, dilation, dims), 0)
    one_d = dims == 1
    stride, padding, output_padding, dilation = (
        _dims2(_pair(v, dims, n), one_d, fill) for v, n, fill in (
            (stride, "stride", 1), (padding, "padding", 0),
            (output_padding, "output_padding", 0), (dilation, "dilation", 1)))
    _check_params(stride, padding, dilation, groups, output_padding, transposed=True)
    _check_groups(weight, groups)
    w = list(weight.shape)
    if w[0] != input.shape[1]:
        raise RuntimeError(f"Given transposed=1, weight of size {w}, expected "
                           f"input{list(input.shape)} to have {w[0]} channels, but got "
                           f"{input.shape[1]} channels instead")
    if bias is not None and tuple(bias.shape) != (w[1] * groups,):
        raise RuntimeError(f"Given transposed=1, weight of size {w}, expected bias to be "
                           f"1-dimensional with {w[1] * groups} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if any(p >= s and p >= d for p, s, d in zip(output_padding, stride, dilation)):
        names = _NAMES[-len(stride):]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(f"{what}_{n}: {v}" for what, vs in (
                               ("output_padding", output_padding), ("stride", stride),
                               ("dilation", dilation)) for n, v in zip(names, vs)))
    size = (1,) * one_d + tuple(input.shape[2:])
    kernel = (1,) * one_d + tuple(w[2:])
    out = [(n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, s, p, d, k, op in
           zip(size, stride, padding, dilation, kernel, output_padding)]
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, size))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, out))}). Output size is too small")
    return ConvolutionBackward0.apply(
        input, weight, bias, stride=stride, padding=padding, dilation=dilation, groups=groups,
        transposed=True, output_padding=output_padding, one_d=one_d)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The adjoint of conv1d in its input (weight (in, out / groups, k)); output length
    (L - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The adjoint of conv2d in its input (weight (in, out / groups, kh, kw))."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, t, i, j] = sum_{c, a, b, e} x[n, c, s t + d a, s i + d b, s j + d e]
    w[o, c, a, b, e] + bias[o] (x zero-padded, c over o's group)"""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The adjoint of conv3d in its input (weight (in, out / groups, kd, kh, kw))."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


OPS = [ConvolutionBackward0]
