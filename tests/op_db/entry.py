"""The entry of the op database (``OpEntry``), the sample shapes and the builders and
constants the entries of several families share."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import gpugrad


@dataclass(frozen=True)
class OpEntry:
    name: str                  # test id
    fn: Callable               # the public call, on tensors; returns a tensor or a tuple
    ref: Callable              # numpy reference on float64 arrays; returns an array or a tuple
    shapes: tuple              # samples: each a tuple of input shapes
    exercises: tuple           # REGISTRY class names recorded by ``fn``
    domain: tuple = (-2.0, 2.0)  # (lo, hi) for all inputs, or one (lo, hi) per input
    avoid: tuple = ()          # points inputs keep at least 0.1 away from (kinks, poles)
    eps: float = 1e-6          # finite-difference step of gradcheck
    grad_tols: dict = field(default_factory=dict)  # atol/rtol overrides for gradcheck
    double_backward: bool = True   # False: create_graph over it raises NotImplementedError


UNARY = (((2, 3),), ((),))
BINARY = (((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2,)))
ROWS = (((2, 3),),)


def _unary(name, fn, ref, cls, domain=(-2.0, 2.0), avoid=(), shapes=UNARY):
    return OpEntry(name, fn, ref, shapes, (cls,), domain, avoid)


def _binary(name, fn, ref, cls, domain=(-2.0, 2.0), avoid=(), shapes=BINARY):
    return OpEntry(name, fn, ref, shapes, (cls,), domain, avoid)


# -- helpers for calls that need constants or several statements ----------------------------------
COND = np.array([[True, False, True], [False, False, True]])


def _const(array, like):
    """A constant tensor on ``like``'s device."""
    return gpugrad.tensor(array, device=like.device)


def _logsumexp_ref(x, axis, keepdims=False):
    return np.log(np.exp(x).sum(axis=axis, keepdims=keepdims))


def _norm_ref(x, p, axis=None, keepdims=False):
    if p == math.inf:
        return np.abs(x).max(axis=axis, keepdims=keepdims)
    return (np.abs(x) ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


def _in_place(method):
    """``method`` called on a non-leaf copy of the first input (the in-place form)."""
    return lambda x, *rest: method(x * 1, *rest)


SPECIALS = np.array([[0.0, np.nan, 0.0], [np.inf, -np.inf, 0.0]])   # where COND is False


def _specials(x, fill=SPECIALS):
    """x where COND, else nan / inf (a where, so the specials' gradient is exactly 0)."""
    return gpugrad.where(_const(COND, x), x, _const(fill, x))


def _specials_ref(x, fill=SPECIALS):
    return np.where(COND, x, fill)
