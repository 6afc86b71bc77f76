"""Padding: constant (any number of trailing dimensions), and PyTorch's reflect, replicate and
circular modes over the last 1, 2 or 3 dimensions. A non-constant pad is one gather per padded
dimension by a source index computed on the host; its backward adds each run of that index
(a step of +1, -1 or 0: the copied middle, a mirrored edge, a repeated edge) back with one
slice, so a pad of any width costs a handful of array ops each way.
"""
from __future__ import annotations

import numpy as np

from .._op import Op

MODES = ("constant", "reflect", "replicate", "circular")


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


def _source(mode, n, before, after):
    """Per output position along a dimension of size n padded by (before, after), the input
    position it copies (a negative pad crops)."""
    if mode == "circular":   # PyTorch wraps the cropped input
        lo, hi = max(-before, 0), n - max(-after, 0)
        core = np.arange(lo, hi)
        return core[np.arange(-max(before, 0), hi - lo + max(after, 0)) % max(hi - lo, 1)]
    pos = np.arange(-before, n + after)
    if mode == "reflect":
        return np.where(pos < 0, -pos, np.where(pos >= n, 2 * (n - 1) - pos, pos))
    return np.clip(pos, 0, n - 1)


def _runs(index):
    """``index`` as maximal runs (start, stop, first source, step) with step +1, -1 or 0."""
    runs, k, m = [], 0, len(index)
    while k < m:
        step = int(index[k + 1] - index[k]) if k + 1 < m else 1
        if step not in (-1, 0, 1):
            step = 1
        j = k
        while j + 1 < m and index[j + 1] - index[j] == step:
            j += 1
        runs.append((k, j + 1, int(index[k]), step))
        k = j + 1
    return runs


class _IndexPad(Op):
    """y = x gathered along each padded dimension by its source index"""
    __slots__ = ("steps",)

    def forward(self, xp, x, steps=()):
        self.steps = []
        for axis, index in steps:   # (axis, host source index)
            on_device = xp.asarray(index)
            self.steps.append((axis, x.shape[axis], on_device, _runs(index)))
            x = xp.take(x, on_device, axis=axis)
        return x if steps else x.copy()

    def backward(self, F, gy):
        g = gy
        for axis, n, index, runs in reversed(self.steps):
            shape = g.shape[:axis] + (n,) + g.shape[axis + 1:]
            lead = (slice(None),) * axis
            if not F.fast:   # differentiable: a scatter by the index
                g = F.index_add(shape, lead + (index,), g)
                continue
            out = F.xp.zeros(shape, dtype=g.dtype)
            for k0, k1, s, step in runs:
                part = g[lead + (slice(k0, k1),)]
                if step == 1:
                    out[lead + (slice(s, s + k1 - k0),)] += part
                elif step == -1:
                    out[lead + (slice(s - (k1 - k0) + 1, s + 1),)] += F.xp.flip(part, axis)
                else:
                    out[lead + (slice(s, s + 1),)] += part.sum(axis=axis, keepdims=True)
            g = out
        return g


class ReflectionPad1DBackward0(_IndexPad):
    """y = x mirrored at its edges (edge not repeated) along the last dimension"""


class ReflectionPad2DBackward0(_IndexPad):
    """y = x mirrored at its edges along the last two dimensions"""


class ReflectionPad3DBackward0(_IndexPad):
    """y = x mirrored at its edges along the last three dimensions"""


class ReplicationPad1DBackward0(_IndexPad):
    """y = x with its edge values repeated along the last dimension"""


class ReplicationPad2DBackward0(_IndexPad):
    """y = x with its edge values repeated along the last two dimensions"""


class ReplicationPad3DBackward0(_IndexPad):
    """y = x with its edge values repeated along the last three dimensions"""


class CircularPadBackward0(_IndexPad):
    """y = x wrapped around (periodic) along the last 1, 2 or 3 dimensions (PyTorch records
    slice copies instead of one node)"""


_NODES = {("reflect", 1): ReflectionPad1DBackward0, ("reflect", 2): ReflectionPad2DBackward0,
          ("reflect", 3): ReflectionPad3DBackward0, ("replicate", 1): ReplicationPad1DBackward0,
          ("replicate", 2): ReplicationPad2DBackward0,
          ("replicate", 3): ReplicationPad3DBackward0}
_AXES = "DHW"


def _check_pad(pad):
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}")
    for i, p in enumerate(pad):
        if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(p).__name__} at pos {i}")
    return tuple(int(p) for p in pad)


def pad(input, pad, mode="constant", value=None):
    """PyTorch's ``F.pad``: ``pad`` lists (before, after) pairs from the last dimension
    backwards; a negative entry crops. ``mode`` is constant (any number of dimensions), or
    reflect / replicate / circular over the last 1, 2 or 3 dimensions of a batched or
    unbatched input."""
    pad = _check_pad(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of "
                           f"dimension {input.ndim}")
    if mode == "constant":
        return ConstantPadNdBackward0.apply(input, pad=pad,
                                            value=0.0 if value is None else value)
    if mode not in MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    dims = len(pad) // 2
    if dims not in (1, 2, 3) or input.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    shape = tuple(input.shape)
    if mode != "circular" and any(n == 0 for n in shape[1 if input.ndim == dims + 2 else 0:]):
        raise RuntimeError(f"Expected {dims + 1}D or {dims + 2}D (batch mode) tensor with "
                           f"possibly 0 batch size and other non-zero dimensions for input, but "
                           f"got: {list(shape)}")
    pairs = [(pad[2 * i], pad[2 * i + 1]) for i in range(dims)]   # last dimension first
    axes = [input.ndim - 1 - i for i in range(dims)]
    out = [shape[a] + b + e for a, (b, e) in zip(axes, pairs)]
    if any(o < (0 if mode == "circular" else 1) for o in out):
        names = _AXES[3 - dims:]
        raise RuntimeError(
            f"input ({', '.join(f'{c}: {shape[a]}' for c, a in zip(names, reversed(axes)))}) is "
            f"too small. Calculated output "
            f"{' '.join(f'{c}: {o}' for c, o in zip(names, reversed(out)))}")
    for i, (a, (b, e)) in enumerate(zip(axes, pairs)):
        n = shape[a]
        if mode == "reflect" and (b >= n or e >= n):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                               f"corresponding input dimension, but got: padding ({b}, {e}) at "
                               f"dimension {a} of input {list(shape)}")
        if mode == "circular" and (b > n - max(-e, 0) or e > n - max(-b, 0)):
            raise RuntimeError("Padding value causes wrapping around more than once.")
    steps = tuple((a, _source(mode, shape[a], b, e)) for a, (b, e) in zip(axes, pairs)
                  if (b, e) != (0, 0))
    node = CircularPadBackward0 if mode == "circular" else _NODES[mode, dims]
    return node.apply(input, steps=steps)


OPS = [ConstantPadNdBackward0, ReflectionPad1DBackward0, ReflectionPad2DBackward0,
       ReflectionPad3DBackward0, ReplicationPad1DBackward0, ReplicationPad2DBackward0,
       ReplicationPad3DBackward0, CircularPadBackward0]
