"""The optimizers' per-parameter updates (``kernels.adam_step``, ``sgd_step``) as one loop.

The references update a parameter and its state in ~10 numpy passes (each allocating for a
temporary); here one pass reads and writes each element once. The operations are the
reference's, in its order, each rounded to the parameter's dtype (float32 or float64), so the
results are its bits.
"""
from __future__ import annotations

import numpy as np
from numba import njit

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_JIT)
def _adam(p, g, m, v, decay, l2, b1, c1, b2, c2, step_size, bc2, eps, n):
    for i in range(n):
        gi = g[i]
        pi = p[i] * decay           # by 1 when not AdamW: the same bits
        if l2 != 0:                 # loop-invariant: LLVM takes the branch out of the loop
            gi = gi + l2 * pi
        mi = m[i] * b1 + c1 * gi
        vi = v[i] * b2 + c2 * (gi * gi)
        m[i] = mi
        v[i] = vi
        p[i] = pi - step_size * mi / (np.sqrt(vi / bc2) + eps)


def _flat(p, *arrays):
    """The arrays as 1-D views when all are C-contiguous numpy arrays of p's shape and dtype."""
    out = []
    for a in (p, *arrays):
        if (a.__class__ is not np.ndarray or not a.flags.c_contiguous or a.shape != p.shape
                or a.dtype != p.dtype or a.dtype not in (np.float32, np.float64)):
            return None
        out.append(a.reshape(-1))
    return out


def adam_step(p, g, m, v, lr, beta1, beta2, eps, weight_decay, step, decoupled):
    flat = _flat(p, g, m, v)
    if flat is None:
        return None
    t = p.dtype.type
    # p *= 1 - lr wd (AdamW) or g += wd p (Adam)
    decay = t(1 - lr * weight_decay) if weight_decay and decoupled else t(1)
    l2 = t(weight_decay) if weight_decay and not decoupled else t(0)
    _adam(*flat, decay, l2, t(beta1), t(1 - beta1), t(beta2), t(1 - beta2),
          t(lr / (1 - beta1 ** step)), t(1 - beta2 ** step), t(eps), p.size)
    return ()


@njit(**_JIT)
def _sgd(p, g, buf, wd, momentum, damp, lr, nesterov, first, use_momentum, n):
    for i in range(n):
        d = g[i]
        if wd != 0:
            d = d + wd * p[i]
        if use_momentum:
            b = d if first else buf[i] * momentum + damp * d
            buf[i] = b
            d = d + momentum * b if nesterov else b
        p[i] = p[i] - lr * d


def sgd_step(p, g, buf, lr, momentum, dampening, weight_decay, nesterov, first):
    flat = _flat(p, g) if not momentum else _flat(p, g, buf)
    if flat is None:
        return None
    if not momentum:
        flat.append(flat[0])   # never read
    t = p.dtype.type
    _sgd(*flat, t(weight_decay), t(momentum), t(1 - dampening), t(lr), bool(nesterov),
         bool(first), bool(momentum), p.size)
    return ()
