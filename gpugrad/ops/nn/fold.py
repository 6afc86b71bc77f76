"""``unfold`` (im2col: the sliding blocks of a batched input as columns) and ``fold`` (col2im,
its adjoint), one op each.
"""
from __future__ import annotations

from .._op import Op
from .conv import _crop, _pad2, _scatter_windows, _windows


# -- unfold / fold --------------------------------------------------------------------------------
def _blocks(size, kernel, dilation, padding, stride):
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in
                 zip(size, kernel, dilation, padding, stride))


def _im2col(xp, x, kernel, dilation, padding, stride):
    """(N, C, H, W) -> (N, C kh kw, L): each block as a column, channel-major"""
    win = _windows(xp, _pad2(xp, x, padding), kernel, stride, dilation)
    n, c, oh, ow, kh, kw = win.shape
    return xp.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3)).reshape(n, c * kh * kw, oh * ow)


def _col2im(xp, cols, size, kernel, dilation, padding, stride):
    """(N, C kh kw, L) -> (N, C, H, W): the columns added back where their blocks lie"""
    (kh, kw), (oh, ow) = kernel, _blocks(size, kernel, dilation, padding, stride)
    n, c = cols.shape[0], cols.shape[1] // (kh * kw)
    shares = cols.reshape(n, c, kh, kw, oh, ow).transpose(0, 1, 4, 5, 2, 3)
    full = (n, c, size[0] + 2 * padding[0], size[1] + 2 * padding[1])
    return _crop(_scatter_windows(xp, shares, full, stride, dilation), padding, size)


class Im2ColBackward0(Op):
    """y[n, (c, i, j), (h, w)] = x[n, c, s h + d i - p, s w + d j - p]  (zero outside x; an
    unbatched (C, H, W) x is one sample)"""
    __slots__ = ("size", "args")

    def forward(self, xp, x, kernel_size=(1, 1), dilation=(1, 1), padding=(0, 0),
                stride=(1, 1)):
        self.size, self.args = x.shape[-2:], (kernel_size, dilation, padding, stride)
        if x.ndim == 3:
            return _im2col(xp, x[None], *self.args)[0]
        return _im2col(xp, x, *self.args)

    def backward(self, F, gy):
        if F.fast:
            if gy.ndim == 2:
                return _col2im(F.xp, gy[None], self.size, *self.args)[0]
            return _col2im(F.xp, gy, self.size, *self.args)
        k, d, p, s = self.args
        return Col2ImBackward0.apply(gy, output_size=self.size, kernel_size=k, dilation=d,
                                     padding=p, stride=s)


class Col2ImBackward0(Op):
    """y[n, c, h, w] = the sum of the columns entries x[n, (c, i, j), l] that block l puts at
    (h, w)  (the adjoint of unfold)"""
    __slots__ = ("args",)

    def forward(self, xp, x, output_size=(1, 1), kernel_size=(1, 1), dilation=(1, 1),
                padding=(0, 0), stride=(1, 1)):
        self.args = (kernel_size, dilation, padding, stride)
        if x.ndim == 2:
            return _col2im(xp, x[None], output_size, *self.args)[0]
        return _col2im(xp, x, output_size, *self.args)

    def backward(self, F, gy):
        if F.fast:
            if gy.ndim == 3:
                return _im2col(F.xp, gy[None], *self.args)[0]
            return _im2col(F.xp, gy, *self.args)
        k, d, p, s = self.args
        return Im2ColBackward0.apply(gy, kernel_size=k, dilation=d, padding=p, stride=s)


def _fold_args(kernel_size, dilation, padding, stride):
    out = []
    for v, name in ((kernel_size, "kernel_size"), (dilation, "dilation"), (padding, "padding"),
                    (stride, "stride")):
        v = (v, v) if isinstance(v, int) else tuple(v)
        if len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        out.append(v)
    (k, d, p, s) = out
    for v, name, a, b, cond in ((k, "kernel size", "kernel_height", "kernel_width", "greater "
                                 "than zero"), (s, "stride", "stride_height", "stride_width",
                                                "greater than zero"),
                                (d, "dilation", "dilation_height", "dilation_width", "greater "
                                 "than zero")):
        if any(x <= 0 for x in v):
            raise RuntimeError(f"{name} should be {cond}, but got {a}: {v[0]} {b}: {v[1]}")
    if any(x < 0 for x in p):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    return k, d, p, s


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding blocks of (N, C, H, W) (or (C, H, W)) as (N, C kh kw, L) columns."""
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4) or any(n == 0 for n in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    size = tuple(input.shape[-2:])
    blocks = _blocks(size, k, d, p, s)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least "
                           "one.")
    return Im2ColBackward0.apply(input, kernel_size=k, dilation=d, padding=p, stride=s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Sum (N, C kh kw, L) columns back into (N, C, H, W) (the adjoint of unfold)."""
    size = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(size) != 2:
        raise RuntimeError(f"It is expected output_size equals to 2, but got size {len(size)}")
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3) or any(n == 0 for n in input.shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    c = input.shape[-2]
    if c % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={c} and kernel_size={k}.")
    blocks = _blocks(size, k, d, p, s)
    if input.shape[-1] != blocks[0] * blocks[1] or any(b < 1 for b in blocks):
        raise RuntimeError(f"Given output_size={size}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {max(blocks[0], 0) * max(blocks[1], 0)}, but got "
                           f"input.size(2)={input.shape[-1]}.")
    return Col2ImBackward0.apply(input, output_size=size, kernel_size=k, dilation=d, padding=p,
                                 stride=s)


OPS = [Im2ColBackward0, Col2ImBackward0]
