"""Normalisation: ``layer_norm`` and ``batch_norm``, one op each (PyTorch's
NativeLayerNormBackward0 and NativeBatchNormBackward0)."""
from __future__ import annotations

from ... import _cpu_kernels
from ...amp._state import state as _amp
from ...amp._state import upper as _upper
from .._op import Op


class NativeLayerNormBackward0(Op):
    """y = (x - mean) / sqrt(var + eps) * w + b, mean and (biased) var over the last
    ``len(normalized_shape)`` dimensions; w and b optional"""
    __slots__ = ("axes", "eps", "mean", "rstd")
    saves = (0, 1)
    optional_inputs = (1, 2)   # weight and bias
    saved_names = ("input", "weight")
    temps = ("mean", "rstd")

    def forward(self, xp, x, w, b, normalized_shape=(), eps=1e-5):
        k = len(normalized_shape)
        axes = tuple(range(x.ndim - k, x.ndim))
        if (out := _cpu_kernels.call("layer_norm", x, w, b, k, eps)) is not None:
            y, self.mean, self.rstd = out
            self.axes, self.eps = axes, eps
            return y
        mean = x.mean(axis=axes, keepdims=True)
        d = x - mean
        y = d * d
        rstd = 1 / xp.sqrt(y.mean(axis=axes, keepdims=True) + eps)
        xp.multiply(d, rstd, out=y)
        if w is not None:
            y *= w
        if b is not None:
            y += b
        self.axes, self.eps, self.mean, self.rstd = axes, eps, mean, rstd
        return y

    def backward(self, F, gy, x, w):
        axes = self.axes
        if F.fast and x.ndim:
            return self._backward_arrays(F, gy, x, w)
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

    def _backward_arrays(self, F, gy, x, w):
        """The same formulas on arrays through two reused buffers (a new array per pass costs
        its page faults again)."""
        axes, rstd, need = self.axes, self.rstd, self.needs_input_grad
        if (out := _cpu_kernels.call("layer_norm_bwd", x, gy, w, self.mean, rstd,
                                     len(axes))) is not None:
            gx, gw, gb = out
            return gx if need[0] else None, gw if need[1] else None, gb if need[2] else None
        lead = tuple(range(x.ndim - len(axes)))
        xhat = x - self.mean
        xhat *= rstd
        t = gy * xhat
        gx = gw = gb = None
        if need[1]:
            gw = t.sum(axis=lead) if lead else t.copy()
        if need[2]:
            gb = gy.sum(axis=lead) if lead else gy
        if need[0]:
            gh = gy * w if w is not None else gy
            if w is not None:
                F.multiply(gh, xhat, out=t)
            m2 = t.mean(axis=axes, keepdims=True)
            m1 = gh.mean(axis=axes, keepdims=True)
            F.multiply(xhat, m2, out=t)
            F.subtract(gh, t, out=t)
            t -= m1
            t *= rstd
            gx = t
        return gx, gw, gb


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if _amp.active:
        input, weight, bias = _upper(input, weight, bias)
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


class NativeBatchNormBackward0(Op):
    """y = (x - mean) / sqrt(var + eps) * w + b per channel (dim 1): in training the batch's
    mean and biased var (the running statistics, when given, are updated in place), else the
    running ones"""
    __slots__ = ("axes", "eps", "training", "mean", "rstd")
    saves = (0, 1)
    optional_inputs = (1, 2)   # weight and bias
    saved_names = ("input", "weight")
    temps = ("mean", "rstd")

    def forward(self, xp, x, w, b, running_mean=None, running_var=None, training=True,
                momentum=0.1, eps=1e-5):
        axes = (0,) + tuple(range(2, x.ndim))
        column = (1, -1) + (1,) * (x.ndim - 2)
        if training:
            mean = x.mean(axis=axes, keepdims=True)
            var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
            if running_mean is not None:
                n = x.size // x.shape[1]
                running_mean *= 1 - momentum
                running_mean += momentum * mean.reshape(-1)
                running_var *= 1 - momentum
                running_var += (momentum * n / (n - 1)) * var.reshape(-1)   # unbiased
        else:
            mean, var = running_mean.reshape(column), running_var.reshape(column)
        rstd = 1 / xp.sqrt(var + eps)
        y = (x - mean) * rstd
        if w is not None:
            y *= w.reshape(column)
        if b is not None:
            y += b.reshape(column)
        self.axes, self.eps, self.training, self.mean, self.rstd = axes, eps, training, mean, rstd
        return y.astype(x.dtype, copy=False)

    def backward(self, F, gy, x, w):
        axes = self.axes
        column = (1, -1) + (1,) * (x.ndim - 2)
        mean, rstd = self.mean, self.rstd
        if self.training and not F.fast:   # the batch's statistics are functions of x
            mean = F.mean(x, axes, keepdims=True)
            rstd = 1 / F.sqrt(F.mean((x - mean) * (x - mean), axes, keepdims=True) + self.eps)
        xhat = (x - mean) * rstd
        need = self.needs_input_grad
        gx = gw = gb = None
        if need[0]:
            gh = gy * F.reshape(w, column) if w is not None else gy
            gx = (rstd * (gh - F.mean(gh, axes, keepdims=True)
                          - xhat * F.mean(gh * xhat, axes, keepdims=True))
                  if self.training else gh * rstd)
        if need[1]:
            gw = F.sum(gy * xhat, axes)
        if need[2]:
            gb = F.sum(gy, axes)
        return gx, gw, gb


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if _amp.active:
        input, = _upper(input)
    c = input.shape[1] if input.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if training and input.numel() // max(c, 1) <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    if not training and (running_mean is None or running_var is None):
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    stats = {k: (t._data if t is not None else None)
             for k, t in (("running_mean", running_mean), ("running_var", running_var))}
    return NativeBatchNormBackward0.apply(input, weight, bias, training=training,
                                          momentum=momentum, eps=eps, **stats)


OPS = [NativeLayerNormBackward0, NativeBatchNormBackward0]
