"""``pixel_shuffle`` / ``pixel_unshuffle``: depth to space and back, one op each."""
from __future__ import annotations

from .._op import Op


# -- pixel shuffle --------------------------------------------------------------------------------
def _shuffle(ns, x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r)"""
    *lead, c, h, w = x.shape
    n = len(lead)
    y = ns.reshape(x, (*lead, c // (r * r), r, r, h, w))
    y = ns.transpose(y, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return ns.reshape(y, (*lead, c // (r * r), h * r, w * r))


def _unshuffle(ns, x, r):
    """(*, C, H r, W r) -> (*, C r^2, H, W)"""
    *lead, c, h, w = x.shape
    n = len(lead)
    y = ns.reshape(x, (*lead, c, h // r, r, w // r, r))
    y = ns.transpose(y, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return ns.reshape(y, (*lead, c * r * r, h // r, w // r))


class PixelShuffleBackward0(Op):
    """y[..., c, h r + i, w r + j] = x[..., c r^2 + i r + j, h, w]"""
    __slots__ = ("r",)

    def forward(self, xp, x, r=1):
        self.r = r
        return xp.ascontiguousarray(_shuffle(xp, x, r))

    def backward(self, F, gy):
        return _unshuffle(F, gy, self.r)


class PixelUnshuffleBackward0(Op):
    """y[..., c r^2 + i r + j, h, w] = x[..., c, h r + i, w r + j]"""
    __slots__ = ("r",)

    def forward(self, xp, x, r=1):
        self.r = r
        return xp.ascontiguousarray(_unshuffle(xp, x, r))

    def backward(self, F, gy):
        return _shuffle(F, gy, self.r)


def _check_factor(input, r, fn, what):
    if input.ndim < 3:
        raise RuntimeError(f"{fn} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{fn} expects a positive {what}, but got {r}")


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    _check_factor(input, r, "pixel_shuffle", "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return PixelShuffleBackward0.apply(input, r=r)


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    _check_factor(input, r, "pixel_unshuffle", "downscale_factor")
    for d, name in ((-2, "height"), (-1, "width")):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return PixelUnshuffleBackward0.apply(input, r=r)


OPS = [PixelShuffleBackward0, PixelUnshuffleBackward0]
