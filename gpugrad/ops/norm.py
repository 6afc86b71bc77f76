"""Normalisation: ``layer_norm`` (one op, PyTorch's NativeLayerNormBackward0)."""
from __future__ import annotations

from ._op import Op


class NativeLayerNormBackward0(Op):
    """y = (x - mean) / sqrt(var + eps) * w + b, mean and (biased) var over the last
    ``len(normalized_shape)`` dimensions; w and b optional"""
    __slots__ = ("axes", "eps", "mean", "rstd")
    saves = (0, 1)
    saved_names = ("input", "weight")
    temps = ("mean", "rstd")

    def forward(self, xp, x, w, b, normalized_shape=(), eps=1e-5):
        k = len(normalized_shape)
        axes = tuple(range(x.ndim - k, x.ndim))
        mean = x.mean(axis=axes, keepdims=True)
        d = x - mean
        rstd = 1 / xp.sqrt((d * d).mean(axis=axes, keepdims=True) + eps)
        y = d * rstd
        if w is not None:
            y *= w
        if b is not None:
            y += b
        self.axes, self.eps, self.mean, self.rstd = axes, eps, mean, rstd
        return y

    def backward(self, F, gy, x, w):
        axes = self.axes
        if F.fast:
            mean, rstd = self.mean, self.rstd
        else:   # recomputed from x, so that the graph of this backward depends on x
            mean = F.mean(x, axes, keepdims=True)
            rstd = 1 / F.sqrt(F.mean((x - mean) * (x - mean), axes, keepdims=True) + self.eps)
        xhat = (x - mean) * rstd
        need = self.needs_input_grad
        lead = tuple(range(x.ndim - len(axes)))
        gx = gw = gb = None
        if need[0]:
            gh = gy * w if w is not None else gy
            gx = rstd * (gh - F.mean(gh, axes, keepdims=True)
                         - xhat * F.mean(gh * xhat, axes, keepdims=True))
        if need[1]:
            gw = F.sum(gy * xhat, lead) if lead else gy * xhat
        if need[2]:
            gb = F.sum(gy, lead) if lead else gy
        return gx, gw, gb


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or k > input.ndim or tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(input.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but "
                               f"got {name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(shape)}")
    return NativeLayerNormBackward0.apply(input, weight, bias, normalized_shape=shape, eps=eps)


OPS = [NativeLayerNormBackward0]
