"""The gradient RMSprop, Adagrad, Adadelta, Adamax, NAdam and RAdam step on (maximize and weight
decay applied, as L2 or decoupled) and the check of lr, eps and weight_decay they share."""
from __future__ import annotations

from .. import _backend


def _check(lr, eps, weight_decay):
    if not 0.0 <= lr:   # (NaN too)
        raise ValueError(f"Invalid learning rate: {lr}")
    if eps < 0.0:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if weight_decay < 0.0:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _grads(group):
    """(parameter, its gradient array with weight decay and maximize applied, xp) per param."""
    wd, maximize = group["weight_decay"], group["maximize"]
    for p in group["params"]:
        if p._grad is None:
            continue
        g = -p._grad._data if maximize else p._grad._data
        if wd:
            g = g + wd * p._data
        yield p, g, _backend.xp_of(g)


def _decayed(group):
    """_grads, with weight decay applied to p instead (p *= 1 - lr wd) when decoupled."""
    if not group["decoupled_weight_decay"] or not group["weight_decay"]:
        yield from _grads(group)
        return
    plain = dict(group, weight_decay=0)
    for p, g, xp in _grads(plain):
        p._data *= 1 - group["lr"] * group["weight_decay"]
        yield p, g, xp
