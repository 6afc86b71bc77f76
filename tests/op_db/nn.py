"""The op database behind ``test_ops.py``: one entry per public way of reaching each op.

An entry names the public call (a function of tensors), its numpy reference, the input shapes it
is sampled at (broadcasting cases included), the interval its inputs are drawn from, and the
``Op`` classes (``gpugrad.ops.REGISTRY`` keys) whose nodes the call records. ``test_ops.py``
checks the call against the reference, runs ``gradcheck`` and ``gradgradcheck`` in float64 on
every device, and checks that every registered op class is exercised by some entry. An op added
to the registry (e.g. nn's losses) adds its entry to ``OP_DB`` here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import gpugrad
from gpugrad.ops import activation as act
from gpugrad.ops import loss


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
MASK = np.array([True, False, True])


def _const(array, like):
    """A constant tensor on ``like``'s device."""
    return gpugrad.tensor(array, device=like.device)


def _layer_norm_ref(x, k, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    d = x - x.mean(axis=axes, keepdims=True)
    return d / np.sqrt((d ** 2).mean(axis=axes, keepdims=True) + eps)


RUNNING_MEAN, RUNNING_VAR = np.array([0.5, -1.0, 0.0]), np.array([2.0, 0.5, 1.0])


def _column(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


def _batch_norm_ref(x, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    d = x - x.mean(axis=axes, keepdims=True)
    return d / np.sqrt((d ** 2).mean(axis=axes, keepdims=True) + eps)


def _conv2d_ref(x, w, b, stride, padding):
    """Cross-correlation written out with loops over the output positions."""
    sh, sw = (stride, stride) if isinstance(stride, int) else stride
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    xp_ = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    kh, kw = w.shape[2:]
    oh, ow = (xp_.shape[2] - kh) // sh + 1, (xp_.shape[3] - kw) // sw + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp_[:, :, i * sh:i * sh + kh, j * sw:j * sw + kw]
            y[:, :, i, j] = np.einsum("ncij,ocij->no", patch, w)
    return y if b is None else y + b[None, :, None, None]


def _pool_ref(x, reduce_, k, s, p, fill):
    xp_ = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)), constant_values=fill)
    oh, ow = (xp_.shape[2] - k) // s + 1, (xp_.shape[3] - k) // s + 1
    return np.array([[[[reduce_(xp_[n, c, i * s:i * s + k, j * s:j * s + k])
                        for j in range(ow)] for i in range(oh)]
                      for c in range(x.shape[1])] for n in range(x.shape[0])])


def _avg_pool_grad(x):
    """avg_pool2d's gradient, made differentiable: AvgPool2DBackwardBackward0 spreads it."""
    g, = gpugrad.autograd.grad((gpugrad.nn.functional.avg_pool2d(x, 2) ** 2).sum(), x,
                               create_graph=True)
    return g


def _avg_pool_grad_ref(x):
    # d/dx sum(mean(window)^2) = 2 mean(window) / 4 on each element of a (disjoint) window;
    # rows and columns past the last whole window get nothing
    m = _pool_ref(x, np.mean, 2, 2, 0, 0.0)
    g = np.zeros_like(x)
    oh, ow = m.shape[2:]
    g[:, :, :2 * oh, :2 * ow] = np.kron(m, np.ones((2, 2))) / 2
    return g


def _where(x, y):
    return gpugrad.where(_const(COND, x), x, y)


def _setitem(x, v):
    y = x.clone()
    y[:, 1] = v
    return y


def _setitem_ref(x, v):
    y = x.copy()
    y[:, 1] = v
    return y


def _inplace_on_view(x):
    """``b[:, 1:] *= 2`` on a non-leaf ``b``: ``b`` becomes CopySlices, the view AsStrided."""
    b = x * 1
    v = b[:, 1:]
    v.mul_(2)
    return b, v


def _fill_on_view(x, y):
    """``b[:, 1:].fill_(y)`` on a non-leaf ``b``: the new value feeds a CopySlices of ``b``."""
    b = x * 1
    v = b[:, 1:]
    v.fill_(y)
    return b, v * 1


def _fill_on_view_ref(x, y):
    b = x.copy()
    b[:, 1:] = y
    return b, b[:, 1:]


def _inplace_on_view_ref(x):
    b = x.copy()
    b[:, 1:] *= 2
    return b, b[:, 1:]


IDX = [0, 2, 0]


def _index_grad(x):
    """The gradient of an indexing, made differentiable: IndexPutBackward0 scatters it."""
    g, = gpugrad.autograd.grad((x[:, IDX] ** 2).sum(), x, create_graph=True)
    return g


def _index_grad_ref(x):
    g = np.zeros_like(x)
    np.add.at(g, (slice(None), IDX), 2 * x[:, IDX])
    return g


_erf = np.vectorize(math.erf)


def _softplus_ref(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def _gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _var_ref(x, axis=None, ddof=1, keepdims=False):
    return np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)


def _softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _logsumexp_ref(x, axis, keepdims=False):
    return np.log(np.exp(x).sum(axis=axis, keepdims=keepdims))


def _norm_ref(x, p, axis=None, keepdims=False):
    if p == math.inf:
        return np.abs(x).max(axis=axis, keepdims=keepdims)
    return (np.abs(x) ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


def _split_ref(x, sizes, axis):
    return tuple(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


TARGET = np.array([0, 2])
GATHER_INDEX = np.array([[0, 2], [1, 1]])   # a repeated index: its gradients add up
WEIGHT = np.array([0.5, 2.0, 1.5])


def _nll(x, weight=None, ignore_index=-100, reduction="mean"):
    w = None if weight is None else _const(weight, x)
    return loss.nll_loss(x, _const(TARGET, x), w, ignore_index=ignore_index, reduction=reduction)


def _nll_ref(x, weight=None, ignore_index=-100, reduction="mean"):
    w = (np.ones(x.shape[1]) if weight is None else weight)[TARGET] * (TARGET != ignore_index)
    picked = -x[np.arange(len(TARGET)), TARGET] * w
    if reduction == "none":
        return picked
    return picked.sum() / w.sum() if reduction == "mean" else picked.sum()


def _log_softmax_ref(x, axis):
    return x - _logsumexp_ref(x, axis, True)


def _bce_ref(x, t, pos_weight=1.0):
    return ((1 - t) * x + (1 + (pos_weight - 1) * t) * np.log1p(np.exp(-x))).mean()


# -- the database -------------------------------------------------------------------------------
OP_DB = [
    # arithmetic
    _binary("add", lambda x, y: x + y, np.add, "AddBackward0"),
    _binary("add_alpha", lambda x, y: gpugrad.add(x, y, alpha=2.5), lambda x, y: x + 2.5 * y,
            "AddBackward0"),
    _unary("add_scalar", lambda x: x + 1.5, lambda x: x + 1.5, "AddBackward0"),
    _binary("sub", lambda x, y: x - y, np.subtract, "SubBackward0"),
    _binary("sub_alpha", lambda x, y: gpugrad.sub(x, y, alpha=0.5), lambda x, y: x - 0.5 * y,
            "SubBackward0"),
    _unary("rsub_scalar", lambda x: 1 - x, lambda x: 1 - x, "RsubBackward1"),
    _binary("rsub", lambda x, y: gpugrad.rsub(x, y), lambda x, y: y - x, "RsubBackward1"),
    _binary("mul", lambda x, y: x * y, np.multiply, "MulBackward0"),
    _unary("mul_scalar", lambda x: 2 * x, lambda x: 2 * x, "MulBackward0"),
    _binary("div", lambda x, y: x / y, np.divide, "DivBackward0", avoid=(0.0,)),
    OpEntry("rdiv_scalar", lambda x: 2 / x, lambda x: 2 / x, UNARY,
            ("MulBackward0", "ReciprocalBackward0"), avoid=(0.0,)),
    _unary("neg", lambda x: -x, np.negative, "NegBackward0"),
    _unary("reciprocal", lambda x: x.reciprocal(), np.reciprocal, "ReciprocalBackward0",
           avoid=(0.0,)),
    OpEntry("rsqrt", gpugrad.rsqrt, lambda x: 1 / np.sqrt(x), UNARY,
            ("ReciprocalBackward0", "SqrtBackward0"), domain=(0.5, 3.0)),
    _unary("pow_2", lambda x: x ** 2, np.square, "PowBackward0"),
    _unary("square", gpugrad.square, np.square, "PowBackward0"),
    _unary("pow_3", lambda x: x.pow(3), lambda x: x ** 3, "PowBackward0"),
    _unary("pow_0", lambda x: x ** 0, lambda x: x ** 0, "PowBackward0"),
    _unary("pow_frac", lambda x: x ** 1.5, lambda x: x ** 1.5, "PowBackward0",
           domain=(0.5, 2.0)),
    _binary("pow_tensor", lambda x, y: x ** y, np.power, "PowBackward1",
            domain=((0.5, 2.0), (-2.0, 2.0))),
    _unary("rpow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, "PowBackward2"),
    _unary("pow_scalar_base", lambda x: gpugrad.pow(0.5, x), lambda x: 0.5 ** x, "PowBackward2"),
    # transcendental and activations
    _unary("exp", gpugrad.exp, np.exp, "ExpBackward0"),
    _unary("log", gpugrad.log, np.log, "LogBackward0", domain=(0.5, 3.0)),
    _unary("sqrt", gpugrad.sqrt, np.sqrt, "SqrtBackward0", domain=(0.5, 3.0)),
    _unary("abs", gpugrad.abs, np.abs, "AbsBackward0", avoid=(0.0,)),
    _unary("sign", gpugrad.sign, np.sign, "SignBackward0", avoid=(0.0,)),
    _unary("sin", gpugrad.sin, np.sin, "SinBackward0"),
    _unary("log1p", gpugrad.log1p, np.log1p, "Log1PBackward0", domain=(-0.5, 2.0)),
    _unary("expm1", gpugrad.expm1, np.expm1, "Expm1Backward0"),
    _unary("tan", gpugrad.tan, np.tan, "TanBackward0", domain=(-1.0, 1.0)),
    _unary("sinh", gpugrad.sinh, np.sinh, "SinhBackward0"),
    _unary("cosh", gpugrad.cosh, np.cosh, "CoshBackward0"),
    _unary("asin", gpugrad.asin, np.arcsin, "AsinBackward0", domain=(-0.8, 0.8)),
    _unary("acos", gpugrad.acos, np.arccos, "AcosBackward0", domain=(-0.8, 0.8)),
    _unary("atan", gpugrad.atan, np.arctan, "AtanBackward0"),
    _unary("log2", gpugrad.log2, np.log2, "Log2Backward0", domain=(0.5, 3.0)),
    _unary("log10", gpugrad.log10, np.log10, "Log10Backward0", domain=(0.5, 3.0)),
    _unary("floor", gpugrad.floor, np.floor, "FloorBackward0", avoid=(-2.0, -1.0, 0.0, 1.0, 2.0)),
    _unary("ceil", gpugrad.ceil, np.ceil, "CeilBackward0", avoid=(-2.0, -1.0, 0.0, 1.0, 2.0)),
    _unary("trunc", gpugrad.trunc, np.trunc, "TruncBackward0", avoid=(-2.0, -1.0, 0.0, 1.0, 2.0)),
    _unary("frac", gpugrad.frac, lambda x: x - np.trunc(x), "FracBackward0",
           avoid=(-2.0, -1.0, 0.0, 1.0, 2.0)),
    _unary("round", gpugrad.round, np.round, "RoundBackward0", avoid=(-1.5, -0.5, 0.5, 1.5)),
    _unary("round_decimals", lambda x: gpugrad.round(x, decimals=1), lambda x: np.round(x, 1),
           "RoundBackward1", domain=(0.11, 0.14)),
    _unary("cos", gpugrad.cos, np.cos, "CosBackward0"),
    _unary("tanh", gpugrad.tanh, np.tanh, "TanhBackward0"),
    _unary("sigmoid", gpugrad.sigmoid, lambda x: 1 / (1 + np.exp(-x)), "SigmoidBackward0"),
    _unary("relu", gpugrad.relu, lambda x: np.maximum(x, 0), "ReluBackward0", avoid=(0.0,)),
    _unary("leaky_relu", lambda x: act.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
           "LeakyReluBackward0", avoid=(0.0,)),
    _unary("gelu", act.gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))),
           "GeluBackward0"),
    _unary("gelu_tanh", lambda x: act.gelu(x, approximate="tanh"), _gelu_tanh_ref,
           "GeluBackward0"),
    _unary("silu", act.silu, lambda x: x / (1 + np.exp(-x)), "SiluBackward0"),
    _unary("elu", lambda x: gpugrad.nn.functional.elu(x, 0.7),
           lambda x: np.where(x > 0, x, 0.7 * np.expm1(np.minimum(x, 0))), "EluBackward0",
           avoid=(0.0,)),
    _unary("hardtanh", lambda x: gpugrad.nn.functional.hardtanh(x, -0.5, 1.0),
           lambda x: np.clip(x, -0.5, 1.0), "HardtanhBackward0", avoid=(-0.5, 1.0)),
    _unary("mish", gpugrad.nn.functional.mish, lambda x: x * np.tanh(np.logaddexp(0, x)),
           "MishBackward0"),
    _unary("softplus", act.softplus, _softplus_ref, "SoftplusBackward0"),
    _unary("softplus_threshold", lambda x: act.softplus(x, beta=2.0, threshold=1.0),
           lambda x: _softplus_ref(x, 2.0, 1.0), "SoftplusBackward0", avoid=(0.5,)),
    _unary("erf", gpugrad.erf, _erf, "ErfBackward0"),
    _unary("clamp", lambda x: x.clamp(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
           "ClampBackward1", avoid=(-0.5, 0.5)),
    _unary("clamp_min", lambda x: gpugrad.clamp(x, min=0), lambda x: np.maximum(x, 0),
           "ClampBackward1", avoid=(0.0,)),
    _binary("clamp_tensor_min", lambda x, lo: gpugrad.clamp(x, lo), np.maximum,
            "ClampBackward0"),
    OpEntry("clamp_tensor_both", lambda x, lo, hi: gpugrad.clamp(x, lo, hi),
            lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
            (((2, 3), (2, 3), (3,)), ((2, 3), (), ())), ("ClampBackward0",),
            domain=((-2.0, 2.0), (-1.5, -0.2), (0.2, 1.5))),
    _binary("maximum", gpugrad.maximum, np.maximum, "MaximumBackward0"),
    _binary("minimum", gpugrad.minimum, np.minimum, "MinimumBackward0"),
    _binary("where", _where, lambda x, y: np.where(COND, x, y), "WhereBackward0",
            shapes=(((2, 3), (2, 3)), ((2, 3), (3,)), ((1, 3), (2, 1)), ((), ()))),
    # reductions
    _unary("sum", gpugrad.sum, np.sum, "SumBackward0"),
    _unary("prod", gpugrad.prod, np.prod, "ProdBackward0", domain=(0.5, 1.5)),
    OpEntry("prod_dim", lambda x: x.prod(1), lambda x: np.prod(x, 1), ROWS, ("ProdBackward1",),
            domain=(0.5, 1.5)),
    _unary("sum_dim", lambda x: x.sum(1), lambda x: x.sum(1), "SumBackward1", shapes=ROWS),
    _unary("sum_dims_keepdim", lambda x: x.sum((0, -1), keepdim=True),
           lambda x: x.sum((0, -1), keepdims=True), "SumBackward1", shapes=ROWS),
    _unary("mean", gpugrad.mean, np.mean, "MeanBackward0"),
    _unary("mean_dim", lambda x: x.mean(0, keepdim=True), lambda x: x.mean(0, keepdims=True),
           "MeanBackward1", shapes=ROWS),
    _unary("var", gpugrad.var, _var_ref, "VarBackward0", shapes=ROWS),
    _unary("var_dim", lambda x: x.var(1, keepdim=True, correction=0),
           lambda x: _var_ref(x, 1, 0, True), "VarBackward0", shapes=ROWS),
    _unary("std", gpugrad.std, lambda x: np.std(x, ddof=1), "StdBackward0", shapes=ROWS),
    _unary("std_dim", lambda x: x.std(0), lambda x: np.std(x, 0, ddof=1), "StdBackward0",
           shapes=ROWS),
    _unary("max", gpugrad.max, np.max, "MaxBackward1", shapes=ROWS),
    _unary("min", lambda x: x.min(), np.min, "MinBackward1", shapes=ROWS),
    _unary("max_dim", lambda x: x.max(1).values, lambda x: x.max(1), "MaxBackward0",
           shapes=ROWS),
    _unary("max_dim_keepdim", lambda x: gpugrad.max(x, 0, keepdim=True)[0],
           lambda x: x.max(0, keepdims=True), "MaxBackward0", shapes=ROWS),
    _unary("min_dim", lambda x: x.min(dim=0).values, lambda x: x.min(0), "MinBackward0",
           shapes=ROWS),
    _unary("norm", gpugrad.norm, lambda x: np.sqrt((x * x).sum()), "LinalgVectorNormBackward0"),
    _unary("norm_dim", lambda x: x.norm(dim=1, keepdim=True),
           lambda x: _norm_ref(x, 2, 1, True), "LinalgVectorNormBackward0", shapes=ROWS),
    _unary("norm_1", lambda x: x.norm(1), lambda x: _norm_ref(x, 1),
           "LinalgVectorNormBackward0", avoid=(0.0,), shapes=ROWS),
    _unary("norm_inf", lambda x: x.norm(float("inf"), dim=0), lambda x: _norm_ref(x, math.inf, 0),
           "LinalgVectorNormBackward0", avoid=(0.0,), shapes=ROWS),
    _unary("norm_3", lambda x: x.norm(3), lambda x: _norm_ref(x, 3),
           "LinalgVectorNormBackward0", avoid=(0.0,), shapes=ROWS),
    _unary("logsumexp", lambda x: x.logsumexp(1), lambda x: _logsumexp_ref(x, 1),
           "LogsumexpBackward0", shapes=ROWS),
    _unary("logsumexp_keepdim", lambda x: gpugrad.logsumexp(x, (0, 1), keepdim=True),
           lambda x: _logsumexp_ref(x, (0, 1), True), "LogsumexpBackward0", shapes=ROWS),
    _unary("softmax", lambda x: gpugrad.softmax(x, dim=-1), lambda x: _softmax_ref(x, -1),
           "SoftmaxBackward0", shapes=ROWS),
    _unary("softmax_dim0", lambda x: x.softmax(0), lambda x: _softmax_ref(x, 0),
           "SoftmaxBackward0", shapes=ROWS),
    _unary("log_softmax", lambda x: gpugrad.log_softmax(x, dim=1),
           lambda x: np.log(_softmax_ref(x, 1)), "LogSoftmaxBackward0", shapes=ROWS),
    # views and copies
    _unary("view", lambda x: x.view(3, 2), lambda x: x.reshape(3, 2), "ViewBackward0",
           shapes=ROWS),
    _unary("reshape_flatten", lambda x: x.flatten(), np.ravel, "ViewBackward0", shapes=ROWS),
    OpEntry("reshape_noncontiguous", lambda x: x.t().reshape(-1), lambda x: x.T.reshape(-1),
            ROWS, ("UnsafeViewBackward0", "CloneBackward0", "TBackward0")),
    _unary("squeeze", lambda x: x.squeeze(), np.squeeze, "SqueezeBackward0",
           shapes=(((1, 3, 1),),)),
    _unary("squeeze_dim", lambda x: x.squeeze(0), lambda x: x.squeeze(0), "SqueezeBackward1",
           shapes=(((1, 3, 1),),)),
    _unary("squeeze_dims", lambda x: x.squeeze((0, 2)), lambda x: x.squeeze((0, 2)),
           "SqueezeBackward2", shapes=(((1, 3, 1),),)),
    _unary("alias", lambda x: x[...], lambda x: x[...], "AliasBackward0"),
    _unary("unsqueeze", lambda x: x.unsqueeze(-1), lambda x: x[..., None], "UnsqueezeBackward0"),
    _unary("expand", lambda x: x.expand(2, 2, 3), lambda x: np.broadcast_to(x, (2, 2, 3)),
           "ExpandBackward0", shapes=(((2, 1),), ((1, 3),), ((),))),
    _unary("broadcast_to", lambda x: gpugrad.broadcast_to(x, (2, 3)),
           lambda x: np.broadcast_to(x, (2, 3)), "ExpandBackward0", shapes=(((3,),),)),
    _unary("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1),
           "PermuteBackward0", shapes=(((2, 1, 3),),)),
    _unary("T", lambda x: x.T, lambda x: x.T, "PermuteBackward0", shapes=ROWS),
    _unary("transpose", lambda x: x.transpose(0, -1), lambda x: np.swapaxes(x, 0, -1),
           "TransposeBackward0", shapes=(((2, 1, 3),),)),
    _unary("t", lambda x: x.t(), lambda x: x.T, "TBackward0", shapes=ROWS),
    _unary("clone", lambda x: x.clone(), np.copy, "CloneBackward0"),
    OpEntry("contiguous", lambda x: x.t().contiguous(), lambda x: x.T.copy(), ROWS,
            ("CloneBackward0", "TBackward0")),
    OpEntry("to_dtype", lambda x: x.to(gpugrad.float32).double(),
            lambda x: x.astype(np.float32).astype(np.float64), UNARY, ("ToCopyBackward0",),
            eps=1e-3),
    OpEntry("cat", lambda x, y: gpugrad.cat([x, y, x], dim=1),
            lambda x, y: np.concatenate([x, y, x], axis=1), (((2, 3), (2, 1)),),
            ("CatBackward0",)),
    OpEntry("stack", lambda x, y: gpugrad.stack([x, y], dim=-1),
            lambda x, y: np.stack([x, y], axis=-1), (((2, 3), (2, 3)),), ("StackBackward0",)),
    OpEntry("split", lambda x: x.split(2, dim=1), lambda x: _split_ref(x, [2, 1], 1),
            (((2, 3),),), ("SplitBackward0",)),
    OpEntry("split_one_piece_used", lambda x: x.split(1)[1], lambda x: x[1:2], ROWS,
            ("SplitBackward0",)),
    OpEntry("split_sizes", lambda x: gpugrad.split(x, [1, 2], dim=1),
            lambda x: _split_ref(x, [1, 2], 1), ROWS, ("SplitWithSizesBackward0",)),
    OpEntry("chunk", lambda x: x.chunk(2, 0), lambda x: _split_ref(x, [1, 1], 0), ROWS,
            ("SplitBackward0",)),
    OpEntry("unbind", lambda x: x.unbind(1), lambda x: tuple(x[:, i] for i in range(3)), ROWS,
            ("UnbindBackward0",)),
    # indexing
    _unary("select", lambda x: x[1], lambda x: x[1], "SelectBackward0", shapes=ROWS),
    _unary("select_last", lambda x: x[:, -1], lambda x: x[:, -1], "SelectBackward0",
           shapes=ROWS),
    _unary("slice", lambda x: x[:, 1:], lambda x: x[:, 1:], "SliceBackward0", shapes=ROWS),
    _unary("slice_step", lambda x: x[..., ::2], lambda x: x[..., ::2], "SliceBackward0",
           shapes=ROWS),
    _unary("index_list", lambda x: x[:, IDX], lambda x: x[:, IDX], "IndexBackward0", shapes=ROWS),
    _unary("index_mask", lambda x: x[:, _const(MASK, x)], lambda x: x[:, MASK],
           "IndexBackward0", shapes=ROWS),
    _unary("index_tensor", lambda x: x[_const(np.array([1, 1, 0]), x)], lambda x: x[[1, 1, 0]],
           "IndexBackward0", shapes=ROWS),
    OpEntry("index_grad", _index_grad, _index_grad_ref, ROWS,
            ("IndexPutBackward0", "IndexBackward0")),
    OpEntry("setitem", _setitem, _setitem_ref, (((2, 3), (2,)), ((2, 3), (1,)), ((2, 3), ())),
            ("CopySlices", "CloneBackward0")),
    OpEntry("inplace_on_view", _inplace_on_view, _inplace_on_view_ref, ROWS,
            ("AsStridedBackward0", "MulBackward0")),
    OpEntry("fill_on_view", _fill_on_view, _fill_on_view_ref, (((2, 3), ()),),
            ("ViewCopySlices", "AsStridedBackward0")),
    # matrix products
    OpEntry("dot", gpugrad.dot, np.dot, (((3,), (3,)),), ("DotBackward0",)),
    OpEntry("matmul_vv", lambda x, y: x @ y, np.matmul, (((3,), (3,)),), ("DotBackward0",)),
    OpEntry("mv", lambda a, v: a @ v, np.matmul, (((2, 3), (3,)),), ("MvBackward0",)),
    OpEntry("mm", gpugrad.mm, np.matmul, (((2, 3), (3, 2)),), ("MmBackward0",)),
    OpEntry("matmul_vm", gpugrad.matmul, np.matmul, (((3,), (3, 2)),),
            ("MmBackward0", "UnsqueezeBackward0", "SqueezeBackward1")),
    OpEntry("einsum_batched", lambda x, y: gpugrad.einsum("bij,bjk->bik", x, y),
            lambda x, y: np.einsum("bij,bjk->bik", x, y), (((2, 2, 3), (2, 3, 2)),),
            ("BmmBackward0",)),
    OpEntry("einsum_three", lambda x, y, z: gpugrad.einsum("...ab,bc,c->...a", x, y, z),
            lambda x, y, z: np.einsum("...ab,bc,c->...a", x, y, z),
            (((2, 2, 3), (3, 2), (2,)),), ("BmmBackward0", "ViewBackward0")),
    OpEntry("bmm", gpugrad.bmm, np.matmul, (((2, 1, 3), (2, 3, 2)),), ("BmmBackward0",)),
    OpEntry("matmul_broadcast", lambda x, y: x @ y, np.matmul,
            (((1, 2, 3), (2, 3, 1)), ((2, 1, 2, 3), (3, 3, 2))), ("BmmBackward0",)),
    OpEntry("matmul_batch_by_matrix", lambda x, y: x @ y, np.matmul,
            (((2, 2, 3), (3, 2)), ((2, 1, 2, 3), (3, 2))), ("MmBackward0", "UnsafeViewBackward0")),
    OpEntry("linear_3d", lambda x, w, b: gpugrad.nn.functional.linear(x, w, b),
            lambda x, w, b: x @ w.T + b, (((2, 2, 3), (4, 3), (4,)),),
            ("AddmmBackward0", "ViewBackward0")),
    OpEntry("addmm", gpugrad.addmm, lambda b, x, w: b + x @ w,
            (((2, 2), (2, 3), (3, 2)), ((2,), (2, 3), (3, 2)), ((), (1, 2), (2, 2))),
            ("AddmmBackward0",)),
    # selecting, reordering, repeating
    OpEntry("gather", lambda x: x.gather(1, _const(GATHER_INDEX, x)),
            lambda x: np.take_along_axis(x, GATHER_INDEX, 1), ROWS, ("GatherBackward0",)),
    OpEntry("embedding", lambda w: gpugrad.nn.functional.embedding(
                _const(np.array([[2, 0], [2, 1]]), w), w),
            lambda w: w[np.array([[2, 0], [2, 1]])], (((3, 4),),), ("EmbeddingBackward0",)),
    OpEntry("index_select", lambda x: x.index_select(1, _const(np.array([2, 0, 2]), x)),
            lambda x: np.take(x, [2, 0, 2], 1), ROWS, ("IndexSelectBackward0",)),
    OpEntry("masked_fill", lambda x: x.masked_fill(_const(COND, x), 0.5),
            lambda x: np.where(COND, 0.5, x), ROWS, ("MaskedFillBackward0",)),
    OpEntry("masked_fill_tensor", lambda x, v: x.masked_fill(_const(COND, x), v),
            lambda x, v: np.where(COND, v, x), (((2, 3), ()),), ("MaskedFillBackward1",)),
    OpEntry("flip", lambda x: x.flip((0, 1)), lambda x: np.flip(x, (0, 1)), ROWS,
            ("FlipBackward0",)),
    OpEntry("roll", lambda x: x.roll((1, -1), (0, 1)), lambda x: np.roll(x, (1, -1), (0, 1)),
            ROWS, ("RollBackward0",)),
    OpEntry("roll_flat", lambda x: x.roll(2), lambda x: np.roll(x, 2), ROWS, ("RollBackward0",)),
    OpEntry("cumsum", lambda x: x.cumsum(1), lambda x: np.cumsum(x, 1), ROWS,
            ("CumsumBackward0",)),
    OpEntry("tril", lambda x: x.tril(-1), lambda x: np.tril(x, -1), (((3, 3),), ((2, 3, 3),)),
            ("TrilBackward0",)),
    OpEntry("triu", lambda x: x.triu(1), lambda x: np.triu(x, 1), (((3, 3),), ((2, 3, 4),)),
            ("TriuBackward0",)),
    OpEntry("sort", lambda x: x.sort(1, descending=True)[0], lambda x: -np.sort(-x, 1), ROWS,
            ("SortBackward0",)),
    OpEntry("topk", lambda x: x.topk(2, 1)[0], lambda x: -np.sort(-x, 1)[:, :2], ROWS,
            ("TopkBackward0",)),
    OpEntry("repeat", lambda x: x.repeat(2, 1, 2), lambda x: np.tile(x, (2, 1, 2)), ROWS,
            ("RepeatBackward0",)),
    _binary("atan2", gpugrad.atan2, np.arctan2, "Atan2Backward0", avoid=(0.0,)),
    OpEntry("lerp", lambda a, b: gpugrad.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a),
            BINARY, ("LerpBackward0",)),
    OpEntry("lerp_tensor", gpugrad.lerp, lambda a, b, w: a + w * (b - a),
            (((2, 3), (3,), (2, 1)),), ("LerpBackward1",)),
    OpEntry("addcmul", lambda x, a, b: gpugrad.addcmul(x, a, b, value=0.5),
            lambda x, a, b: x + 0.5 * a * b, (((2, 3), (3,), (2, 1)),), ("AddcmulBackward0",)),
    OpEntry("addcdiv", lambda x, a, b: gpugrad.addcdiv(x, a, b, value=2),
            lambda x, a, b: x + 2 * a / b, (((2, 3), (2, 3), (3,)),), ("AddcdivBackward0",),
            domain=((-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0))),
    OpEntry("masked_select", lambda x: x.masked_select(_const(COND, x)),
            lambda x: np.broadcast_to(x, COND.shape)[COND], (((2, 3),), ((3,),)),
            ("MaskedSelectBackward0",)),
    OpEntry("trace", gpugrad.trace, np.trace, (((3, 3),), ((2, 4),)), ("TraceBackward0",)),
    OpEntry("diag_embed", lambda v: gpugrad.diag(v, -1), lambda v: np.diag(v, -1), (((3,),),),
            ("DiagEmbedBackward0",)),
    OpEntry("diagonal", lambda x: gpugrad.diag(x, 1), lambda x: np.diag(x, 1).copy(),
            (((3, 4),),), ("DiagonalBackward0_copy",)),
    OpEntry("median", gpugrad.median, lambda x: np.sort(x.ravel())[(x.size - 1) // 2],
            (((2, 3),),), ("MedianBackward0",)),
    OpEntry("median_dim", lambda x: gpugrad.median(x, 1)[0],
            lambda x: np.sort(x, 1)[:, (x.shape[1] - 1) // 2], (((3, 4),),),
            ("MedianBackward1",)),
    # convolution
    OpEntry("conv2d", lambda x, w, b: gpugrad.nn.functional.conv2d(x, w, b, 2, 1),
            lambda x, w, b: _conv2d_ref(x, w, b, 2, 1), (((2, 2, 5, 4), (3, 2, 3, 2), (3,)),),
            ("ConvolutionBackward0",)),
    OpEntry("conv1d", lambda x, w: gpugrad.nn.functional.conv1d(x, w, padding=1),
            lambda x, w: _conv2d_ref(x[:, :, None], w[:, :, None], None, 1, (0, 1))[:, :, 0],
            (((2, 2, 5), (3, 2, 3)),), ("ConvolutionBackward0",)),
    OpEntry("pad", lambda x: gpugrad.nn.functional.pad(x, (1, -1, 2, 0), value=0.5),
            lambda x: np.pad(x, ((2, 0), (1, 0)), constant_values=0.5)[:, :-1], ROWS,
            ("ConstantPadNdBackward0",)),
    OpEntry("pad_reflect", lambda x: gpugrad.nn.functional.pad(x, (2, 1, 1, 2), mode="reflect"),
            lambda x: np.pad(x, ((0, 0), (1, 2), (2, 1)), mode="reflect"), (((2, 4, 3),),),
            ("ReflectionPad2DBackward0",)),
    OpEntry("pad_replicate", lambda x: gpugrad.nn.functional.pad(x, (3, -1), mode="replicate"),
            lambda x: np.pad(x, ((0, 0), (3, 0)), mode="edge")[:, :-1], ROWS,
            ("ReplicationPad1DBackward0",)),
    OpEntry("pad_reflect_1d", lambda x: gpugrad.nn.functional.pad(x, (2, 2), mode="reflect"),
            lambda x: np.pad(x, ((0, 0), (2, 2)), mode="reflect"), ROWS,
            ("ReflectionPad1DBackward0",)),
    OpEntry("pad_reflect_3d", lambda x: gpugrad.nn.functional.pad(x, (1, 0, 0, 1, 1, 1),
                                                                  mode="reflect"),
            lambda x: np.pad(x, ((0, 0), (1, 1), (0, 1), (1, 0)), mode="reflect"),
            (((2, 3, 2, 3),),), ("ReflectionPad3DBackward0",)),
    OpEntry("pad_replicate_2d", lambda x: gpugrad.nn.functional.pad(x, (0, 2, 1, 1),
                                                                    mode="replicate"),
            lambda x: np.pad(x, ((0, 0), (1, 1), (0, 2)), mode="edge"), (((2, 3, 3),),),
            ("ReplicationPad2DBackward0",)),
    OpEntry("pad_replicate_3d", lambda x: gpugrad.nn.functional.pad(x, (1, 1, 2, 0, 0, 1),
                                                                    mode="replicate"),
            lambda x: np.pad(x, ((0, 0), (0, 0), (0, 1), (2, 0), (1, 1)), mode="edge"),
            (((1, 2, 2, 2, 3),),), ("ReplicationPad3DBackward0",)),
    OpEntry("pad_circular", lambda x: gpugrad.nn.functional.pad(x, (1, 2, 0, 1, 2, 0),
                                                                mode="circular"),
            lambda x: np.pad(x, ((0, 0), (2, 0), (0, 1), (1, 2)), mode="wrap"),
            (((1, 2, 3, 4),),), ("CircularPadBackward0",)),
    OpEntry("max_pool2d", lambda x: gpugrad.nn.functional.max_pool2d(x, 3, 2, 1),
            lambda x: _pool_ref(x, np.max, 3, 2, 1, -np.inf), (((2, 2, 5, 4),),),
            ("MaxPool2DWithIndicesBackward0",)),
    OpEntry("avg_pool2d", lambda x: gpugrad.nn.functional.avg_pool2d(x, 2),
            lambda x: _pool_ref(x, np.mean, 2, 2, 0, 0.0), (((2, 2, 5, 4),),),
            ("AvgPool2DBackward0",)),
    OpEntry("avg_pool2d_grad", _avg_pool_grad, _avg_pool_grad_ref, (((2, 2, 5, 4),),),
            ("AvgPool2DBackwardBackward0", "AvgPool2DBackward0")),
    # normalisation
    OpEntry("layer_norm", lambda x, w, b: gpugrad.nn.functional.layer_norm(x, (4,), w, b),
            lambda x, w, b: _layer_norm_ref(x, 1) * w + b,
            (((2, 3, 4), (4,), (4,)), ((4,), (4,), (4,))), ("NativeLayerNormBackward0",)),
    OpEntry("layer_norm_2d_no_affine", lambda x: gpugrad.nn.functional.layer_norm(x, (3, 4)),
            lambda x: _layer_norm_ref(x, 2), (((2, 3, 4),),), ("NativeLayerNormBackward0",)),
    OpEntry("batch_norm_train", lambda x, w, b: gpugrad.nn.functional.batch_norm(
                x, None, None, w, b, training=True),
            lambda x, w, b: _batch_norm_ref(x) * _column(w, x) + _column(b, x),
            (((4, 3), (3,), (3,)), ((2, 3, 4), (3,), (3,))), ("NativeBatchNormBackward0",)),
    OpEntry("batch_norm_eval", lambda x, w, b: gpugrad.nn.functional.batch_norm(
                x, _const(RUNNING_MEAN, x), _const(RUNNING_VAR, x), w, b, training=False),
            lambda x, w, b: ((x - _column(RUNNING_MEAN, x)) / np.sqrt(_column(RUNNING_VAR, x)
                                                                   + 1e-5) * _column(w, x)
                             + _column(b, x)),
            (((4, 3), (3,), (3,)),), ("NativeBatchNormBackward0",)),
    # losses
    OpEntry("mse_loss", loss.mse_loss, lambda x, t: ((x - t) ** 2).mean(),
            (((2, 3), (2, 3)), ((), ())), ("MseLossBackward0",)),
    OpEntry("mse_loss_sum", lambda x, t: loss.mse_loss(x, t, reduction="sum"),
            lambda x, t: ((x - t) ** 2).sum(), (((2, 3), (2, 3)),), ("MseLossBackward0",)),
    OpEntry("mse_loss_none", lambda x, t: loss.mse_loss(x, t, reduction="none"),
            lambda x, t: (x - t) ** 2, (((2, 3), (2, 3)),), ("MseLossBackward0",)),
    OpEntry("nll_loss", _nll, _nll_ref, ROWS, ("NllLossBackward0",)),
    OpEntry("nll_loss_weight", lambda x: _nll(x, WEIGHT), lambda x: _nll_ref(x, WEIGHT), ROWS,
            ("NllLossBackward0",)),
    OpEntry("nll_loss_ignore_sum", lambda x: _nll(x, ignore_index=2, reduction="sum"),
            lambda x: _nll_ref(x, ignore_index=2, reduction="sum"), ROWS,
            ("NllLossBackward0",)),
    OpEntry("nll_loss_none", lambda x: _nll(x, reduction="none"),
            lambda x: _nll_ref(x, reduction="none"), ROWS, ("NllLossBackward0",)),
    OpEntry("cross_entropy", lambda x: loss.cross_entropy(x, _const(TARGET, x)),
            lambda x: _nll_ref(_log_softmax_ref(x, 1)), ROWS,
            ("NllLossBackward0", "LogSoftmaxBackward0")),
    OpEntry("l1_loss", lambda x, t: gpugrad.nn.functional.l1_loss(x, t),
            lambda x, t: np.abs(x - t).mean(), (((2, 3), (2, 3)),),
            ("MeanBackward0", "AbsBackward0"), avoid=(0.0,)),
    OpEntry("smooth_l1_loss", lambda x, t: gpugrad.nn.functional.smooth_l1_loss(x, t, beta=0.5),
            lambda x, t: np.where(np.abs(x - t) < 0.5, (x - t) ** 2, np.abs(x - t) - 0.25).mean(),
            (((2, 3), (2, 3)),), ("SmoothL1LossBackward0",)),
    OpEntry("huber_loss", lambda x, t: gpugrad.nn.functional.huber_loss(x, t, "sum", delta=0.5),
            lambda x, t: np.where(np.abs(x - t) < 0.5, 0.5 * (x - t) ** 2,
                                  0.5 * (np.abs(x - t) - 0.25)).sum(),
            (((2, 3), (2, 3)),), ("HuberLossBackward0",)),
    OpEntry("binary_cross_entropy", lambda x, t: gpugrad.nn.functional.binary_cross_entropy(
                x, t, weight=_const(np.array([0.5, 1.0, 2.0]), x), reduction="none"),
            lambda x, t: -np.array([0.5, 1.0, 2.0]) * (t * np.log(x) + (1 - t) * np.log(1 - x)),
            (((2, 3), (2, 3)),), ("BinaryCrossEntropyBackward0",), domain=(0.1, 0.9)),
    OpEntry("bce_with_logits", loss.binary_cross_entropy_with_logits, _bce_ref,
            (((2, 3), (2, 3)),), ("BinaryCrossEntropyWithLogitsBackward0",),
            domain=((-2.0, 2.0), (0.0, 1.0))),
    OpEntry("bce_with_logits_pos_weight",
            lambda x, t: loss.binary_cross_entropy_with_logits(
                x, t, pos_weight=_const(np.array([3.0]), x)),
            lambda x, t: _bce_ref(x, t, 3.0), (((2, 3), (2, 3)),),
            ("BinaryCrossEntropyWithLogitsBackward0",), domain=((-2.0, 2.0), (0.0, 1.0))),
]


# -- scatter, index_* and take_along_dim (gpugrad/ops/scatter.py) --------------------------------
PERM_INDEX = np.array([[1, 0, 1], [0, 1, 0]])    # along dim 0 of (2, 3): every position once
REDUCE_INDEX = np.array([[0, 1, 0], [0, 0, 0]])  # repeats, and leaves (1, 0), (1, 2) alone
ROW_INDEX = np.array([1, 0, 1])                  # index_add along dim 0 of (2, 3): repeats
COL_INDEX = np.array([2, 0])                     # index_copy / index_fill along dim 1
ZEROS = np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]])  # at most one src zero per position
TAKE_INDEX = np.array([[2, 0, 0, 1], [1, 1, 2, 0]])


def _scatter_ref(x, dim, index, src, combine, include_self=True):
    """x with the values of src (or a number) at index combined into it, written as loops."""
    out = x.copy()
    groups = {}
    for pos in np.ndindex(*index.shape):
        target = list(pos)
        target[dim] = index[pos]
        groups.setdefault(tuple(target), []).append(src[pos] if np.ndim(src) else src)
    for target, values in groups.items():
        out[target] = combine(([x[target]] if include_self else []) + values)
    return out


def _last(values):
    return values[-1]


_COMBINE = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "amax": np.max, "amin": np.min}


def _index_ref(x, dim, index, src, combine):
    """x with combine(x[.., i, ..], src[.., k, ..]) at i = index[k] along dim, in order."""
    out = x.copy()
    view = np.moveaxis(out, dim, 0)
    s = np.moveaxis(src, dim, 0) if np.ndim(src) else [src] * len(index)
    for k, i in enumerate(index):
        view[i] = combine(view[i], s[k])
    return out


def _in_place(method):
    """``method`` called on a non-leaf copy of the first input (the in-place form)."""
    return lambda x, *rest: method(x * 1, *rest)


def _reduce_entry(reduce, include_self, **kw):
    name = f"scatter_reduce_{reduce}" + ("" if include_self else "_exclude_self")
    return OpEntry(name, lambda x, s: gpugrad.scatter_reduce(
                       x, 0, _const(REDUCE_INDEX, x), s, reduce, include_self=include_self),
                   lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, _COMBINE[reduce],
                                             include_self),
                   (((2, 3), (2, 3)), ((2, 3), (3, 4))), ("ScatterReduceBackward0",), **kw)


OP_DB += [
    OpEntry("scatter", lambda x, s: gpugrad.scatter(x, 0, _const(PERM_INDEX, x), s),
            lambda x, s: _scatter_ref(x, 0, PERM_INDEX, s, _last),
            (((2, 3), (2, 3)), ((2, 3), (3, 4))), ("ScatterBackward0",)),
    OpEntry("scatter_method", lambda x, s: x.scatter(1, _const(PERM_INDEX.T, x), s),
            lambda x, s: _scatter_ref(x, 1, PERM_INDEX.T, s, _last), (((3, 2), (3, 2)),),
            ("ScatterBackward0",)),
    OpEntry("scatter_", _in_place(lambda x, s: x.scatter_(0, _const(PERM_INDEX, x), s)),
            lambda x, s: _scatter_ref(x, 0, PERM_INDEX, s, _last), (((2, 3), (2, 3)),),
            ("ScatterBackward0",)),
    OpEntry("scatter_value", lambda x: x.scatter(0, _const(REDUCE_INDEX, x), 0.5),
            lambda x: _scatter_ref(x, 0, REDUCE_INDEX, 0.5, _last), ROWS,
            ("ScatterBackward1",)),
    OpEntry("scatter_value_", _in_place(lambda x: x.scatter_(0, _const(REDUCE_INDEX, x),
                                                             value=-1.0)),
            lambda x: _scatter_ref(x, 0, REDUCE_INDEX, -1.0, _last), ROWS,
            ("ScatterBackward1",)),
    OpEntry("scatter_add", lambda x, s: gpugrad.scatter_add(x, 0, _const(REDUCE_INDEX, x), s),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.sum),
            (((2, 3), (2, 3)), ((2, 3), (3, 4))), ("ScatterAddBackward0",)),
    OpEntry("scatter_add_method", lambda x, s: x.scatter_add(0, _const(REDUCE_INDEX, x), s),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.sum), (((2, 3), (2, 3)),),
            ("ScatterAddBackward0",)),
    OpEntry("scatter_add_", _in_place(lambda x, s: x.scatter_add_(0, _const(REDUCE_INDEX, x),
                                                                  s)),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.sum), (((2, 3), (2, 3)),),
            ("ScatterAddBackward0",)),
    *[_reduce_entry(r, inc) for r in ("sum", "mean", "amax", "amin") for inc in (True, False)],
    _reduce_entry("prod", True, avoid=(0.0,)),
    _reduce_entry("prod", False, avoid=(0.0,)),
    OpEntry("scatter_reduce_prod_zeros", lambda x, s: gpugrad.scatter_reduce(
                x * _const(ZEROS, x), 0, _const(REDUCE_INDEX, x), s * _const(ZEROS[::-1], x),
                "prod"),
            lambda x, s: _scatter_ref(x * ZEROS, 0, REDUCE_INDEX, s * ZEROS[::-1], np.prod),
            (((2, 3), (2, 3)),), ("ScatterReduceBackward0", "MulBackward0"), avoid=(0.0,)),
    OpEntry("scatter_reduce_method", lambda x, s: x.scatter_reduce(
                1, _const(REDUCE_INDEX.T, x), s, "amax", include_self=False),
            lambda x, s: _scatter_ref(x, 1, REDUCE_INDEX.T, s, np.max, False),
            (((3, 2), (3, 2)),), ("ScatterReduceBackward0",)),
    OpEntry("scatter_reduce_", _in_place(lambda x, s: x.scatter_reduce_(
                0, _const(REDUCE_INDEX, x), s, "mean")),
            lambda x, s: _scatter_ref(x, 0, REDUCE_INDEX, s, np.mean), (((2, 3), (2, 3)),),
            ("ScatterReduceBackward0",)),
    OpEntry("index_add", lambda x, s: gpugrad.index_add(x, 0, _const(ROW_INDEX, x), s, alpha=2),
            lambda x, s: _index_ref(x, 0, ROW_INDEX, 2 * s, np.add), (((2, 3), (3, 3)),),
            ("IndexAddBackward0",)),
    OpEntry("index_add_method", lambda x, s: x.index_add(1, _const(ROW_INDEX, x), s),
            lambda x, s: _index_ref(x, 1, ROW_INDEX, s, np.add), (((3, 2), (3, 3)),),
            ("IndexAddBackward0",)),
    OpEntry("index_add_", _in_place(lambda x, s: x.index_add_(0, _const(ROW_INDEX, x), s)),
            lambda x, s: _index_ref(x, 0, ROW_INDEX, s, np.add), (((2, 3), (3, 3)),),
            ("IndexAddBackward0",)),
    OpEntry("index_fill", lambda x: gpugrad.index_fill(x, 1, _const(COL_INDEX, x), 0.5),
            lambda x: _index_ref(x, 1, COL_INDEX, 0.5, lambda a, v: v), ROWS,
            ("IndexFillBackward0",)),
    OpEntry("index_fill_tensor", lambda x, v: x.index_fill(1, _const(COL_INDEX[::-1], x), v),
            lambda x, v: _index_ref(x, 1, COL_INDEX, v, lambda a, w: w), (((2, 3), ()),),
            ("IndexFillBackward1",)),
    OpEntry("index_fill_", _in_place(lambda x, v: x.index_fill_(0, _const(ROW_INDEX, x), v)),
            lambda x, v: _index_ref(x, 0, ROW_INDEX, v, lambda a, w: w), (((2, 3), ()),),
            ("IndexFillBackward1",)),
    OpEntry("index_copy", lambda x, s: gpugrad.index_copy(x, 1, _const(COL_INDEX, x), s),
            lambda x, s: _index_ref(x, 1, COL_INDEX, s, lambda a, v: v), (((2, 3), (2, 2)),),
            ("IndexCopyBackward0",)),
    OpEntry("index_copy_", _in_place(lambda x, s: x.index_copy_(1, _const(COL_INDEX, x), s)),
            lambda x, s: _index_ref(x, 1, COL_INDEX, s, lambda a, v: v), (((2, 3), (2, 2)),),
            ("IndexCopyBackward0",)),
    OpEntry("take_along_dim", lambda x: gpugrad.take_along_dim(x, _const(TAKE_INDEX, x), 1),
            lambda x: np.take_along_axis(np.broadcast_to(x, (2, 3)), TAKE_INDEX, 1),
            (((1, 3),),), ("GatherBackward0", "ExpandBackward0")),
    OpEntry("take_along_dim_flat", lambda x: x.take_along_dim(_const(np.array([5, 0, 5]), x)),
            lambda x: x.ravel()[[5, 0, 5]], ROWS, ("GatherBackward0", "ViewBackward0")),
]


# -- linear algebra (gpugrad/ops/matrix.py) ------------------------------------------------------
SQUARE = (((3, 3),), ((2, 3, 3),))


def _conditioned(a):
    """a + 4 I: the sampled matrices kept well away from singular."""
    return a + _const(4 * np.eye(a.shape[-1]), a)


def _spd(a):
    """a a^T + I: symmetric positive-definite (cholesky reads one triangle, so its gradient
    is checked through a symmetric input, as PyTorch's OpInfo does)."""
    return a @ a.mT + _const(np.eye(a.shape[-1]), a)


def _spd_ref(a):
    return a @ np.swapaxes(a, -1, -2) + np.eye(a.shape[-1])


def _cross_ref(a, b, axis=-1):
    return np.cross(a, b, axis=axis)


def _matrix_norm_ref(a, ord, axes=(-2, -1)):
    return np.linalg.norm(a, ord, axis=axes)


_inv_ref = lambda a: np.linalg.inv(a + 4 * np.eye(a.shape[-1]))  # noqa: E731

OP_DB += [
    OpEntry("linalg_inv", lambda a: gpugrad.linalg.inv(_conditioned(a)), _inv_ref, SQUARE,
            ("LinalgInvExBackward0",)),
    OpEntry("inverse", lambda a: gpugrad.inverse(_conditioned(a)), _inv_ref, SQUARE,
            ("LinalgInvExBackward0",)),
    OpEntry("inverse_method", lambda a: _conditioned(a).inverse(), _inv_ref, (((2, 2),),),
            ("LinalgInvExBackward0",)),
    OpEntry("linalg_det", gpugrad.linalg.det, np.linalg.det, SQUARE, ("LinalgDetBackward0",)),
    OpEntry("det", gpugrad.det, np.linalg.det, (((2, 2),),), ("LinalgDetBackward0",)),
    OpEntry("det_method", lambda a: a.det(), np.linalg.det, (((2, 2, 2),),),
            ("LinalgDetBackward0",)),
    OpEntry("linalg_slogdet", lambda a: gpugrad.linalg.slogdet(a).logabsdet,
            lambda a: np.linalg.slogdet(a)[1], SQUARE, ("LinalgSlogdetBackward0",)),
    OpEntry("slogdet", lambda a: gpugrad.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1],
            (((2, 2),),), ("LinalgSlogdetBackward0",)),
    OpEntry("logdet", lambda a: gpugrad.logdet(_conditioned(a)),
            lambda a: np.log(np.linalg.det(a + 4 * np.eye(a.shape[-1]))), SQUARE,
            ("LinalgSlogdetBackward0", "AddBackward0")),
    OpEntry("slogdet_method", lambda a: a.slogdet()[1], lambda a: np.linalg.slogdet(a)[1],
            (((2, 2),),), ("LinalgSlogdetBackward0",)),
    OpEntry("solve", lambda a, b: gpugrad.linalg.solve(_conditioned(a), b),
            lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b),
            (((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((3, 3), (2, 3, 2))),
            ("LinalgSolveExBackward0",)),
    OpEntry("solve_vector", lambda a, b: gpugrad.linalg.solve(_conditioned(a), b),
            lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b), (((3, 3), (3,)),),
            ("LinalgSolveExBackward0", "SqueezeBackward1")),
    OpEntry("solve_left_false", lambda a, b: gpugrad.linalg.solve(_conditioned(a), b,
                                                                  left=False),
            lambda a, b: np.swapaxes(np.linalg.solve(np.swapaxes(a + 4 * np.eye(3), -1, -2),
                                                     np.swapaxes(b, -1, -2)), -1, -2),
            (((3, 3), (2, 3)),), ("LinalgSolveExBackward0",)),
    OpEntry("cholesky", lambda a: gpugrad.linalg.cholesky(_spd(a)),
            lambda a: np.linalg.cholesky(_spd_ref(a)), SQUARE, ("LinalgCholeskyExBackward0",)),
    OpEntry("cholesky_upper", lambda a: gpugrad.linalg.cholesky(_spd(a), upper=True),
            lambda a: np.swapaxes(np.linalg.cholesky(_spd_ref(a)), -1, -2), (((3, 3),),),
            ("LinalgCholeskyExBackward0",)),
    OpEntry("linalg_cross", gpugrad.linalg.cross, _cross_ref,
            (((2, 3), (2, 3)), ((2, 3), (1, 3))), ("LinalgCrossBackward0",)),
    OpEntry("cross_dim", lambda a, b: gpugrad.cross(a, b, dim=0),
            lambda a, b: _cross_ref(a, b, 0), (((3, 2), (3, 2)),), ("LinalgCrossBackward0",)),
    OpEntry("cross_method", lambda a, b: a.cross(b, dim=-1), _cross_ref, (((3,), (3,)),),
            ("LinalgCrossBackward0",)),
    OpEntry("svdvals", gpugrad.linalg.svdvals, lambda a: np.linalg.svd(a, compute_uv=False),
            (((3, 2),), ((2, 2, 3),)), ("LinalgSvdBackward0",)),
    OpEntry("vector_norm", lambda x: gpugrad.linalg.vector_norm(x, 3, dim=(0, 1)),
            lambda x: _norm_ref(x, 3, (0, 1)), (((2, 3, 2),),), ("LinalgVectorNormBackward0",),
            avoid=(0.0,)),
    OpEntry("vector_norm_neg_inf", lambda x: gpugrad.linalg.vector_norm(x, -math.inf, 1),
            lambda x: np.abs(x).min(1), ROWS, ("AminBackward0", "AbsBackward0"), avoid=(0.0,)),
    OpEntry("linalg_norm", gpugrad.linalg.norm, lambda x: np.sqrt((x * x).sum()),
            (((2, 3),), ((2, 3, 2),)), ("LinalgVectorNormBackward0",)),
    OpEntry("matrix_norm_fro", gpugrad.linalg.matrix_norm, lambda a: _matrix_norm_ref(a, "fro"),
            (((2, 3, 2),),), ("LinalgVectorNormBackward0",)),
    OpEntry("matrix_norm_1", lambda a: gpugrad.linalg.matrix_norm(a, 1),
            lambda a: _matrix_norm_ref(a, 1), (((2, 3, 2),),), ("AmaxBackward0", "SumBackward1"),
            avoid=(0.0,)),
    OpEntry("norm_inf_keepdim", lambda a: gpugrad.linalg.norm(a, -math.inf, (2, 0), True),
            lambda a: _matrix_norm_ref(a, -np.inf, (2, 0))[None, :, None], (((2, 3, 2),),),
            ("AminBackward0", "SumBackward1"), avoid=(0.0,)),
    OpEntry("matrix_norm_2", lambda a: gpugrad.linalg.matrix_norm(a, 2),
            lambda a: _matrix_norm_ref(a, 2), (((3, 2),),), ("LinalgSvdBackward0",)),
    OpEntry("norm_nuc", lambda a: gpugrad.linalg.norm(a, "nuc"),
            lambda a: _matrix_norm_ref(a, "nuc"), (((3, 2),),), ("LinalgSvdBackward0",)),
    OpEntry("matrix_power", lambda a: gpugrad.linalg.matrix_power(a, 3),
            lambda a: np.linalg.matrix_power(a, 3), (((3, 3),),), ("MmBackward0",)),
    OpEntry("matrix_power_negative", lambda a: _conditioned(a).matrix_power(-2),
            lambda a: np.linalg.matrix_power(a + 4 * np.eye(3), -2), (((3, 3),),),
            ("LinalgInvExBackward0", "MmBackward0")),
    OpEntry("kron", gpugrad.kron, np.kron, (((2, 3), (2, 1, 2)), ((2,), (3,))),
            ("UnsafeViewBackward0", "MulBackward0")),
    OpEntry("addmv", lambda b, a, v: gpugrad.addmv(b, a, v, beta=0.5, alpha=2),
            lambda b, a, v: 0.5 * b + 2 * (a @ v), (((2,), (2, 3), (3,)),),
            ("MvBackward0", "AddBackward0")),
    OpEntry("baddbmm", lambda b, x, y: b.baddbmm(x, y), lambda b, x, y: b + x @ y,
            (((2, 1, 2), (2, 1, 3), (2, 3, 2)),), ("BmmBackward0", "AddBackward0")),
    OpEntry("vdot", gpugrad.vdot, np.vdot, (((3,), (3,)),), ("DotBackward0",)),
    OpEntry("multi_dot", lambda a, b, v: gpugrad.linalg.multi_dot([a, b, v]),
            lambda a, b, v: a @ b @ v, (((2, 3), (3, 3), (3,)),), ("MvBackward0", "MmBackward0")),
    OpEntry("vecdot", lambda x, y: gpugrad.linalg.vecdot(x, y, dim=0),
            lambda x, y: (x * y).sum(0), (((2, 3), (2, 1)),), ("SumBackward1", "MulBackward0")),
    OpEntry("linalg_diagonal", lambda a: gpugrad.linalg.diagonal(a, offset=-1),
            lambda a: np.diagonal(a, -1, -2, -1).copy(), (((2, 3, 3),),),
            ("DiagonalBackward0",)),
]


# -- gpugrad/ops/misc.py -------------------------------------------------------------------------
X_ZEROS = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])   # x * X_ZEROS has exact zeros
SPECIALS = np.array([[0.0, np.nan, 0.0], [np.inf, -np.inf, 0.0]])   # where COND is False


def _specials(x, fill=SPECIALS):
    """x where COND, else nan / inf (a where, so the specials' gradient is exactly 0)."""
    return gpugrad.where(_const(COND, x), x, _const(fill, x))


def _specials_ref(x, fill=SPECIALS):
    return np.where(COND, x, fill)


NANS = np.where(COND, 0.0, np.nan)


def _cumprod_zeros(x):
    return gpugrad.cumprod(x * _const(X_ZEROS, x), 1)


def _rot90_ref(x, k):
    return np.rot90(x, k, (1, 2))


OP_DB += [
    OpEntry("cumprod", lambda x: gpugrad.cumprod(x, 0), lambda x: np.cumprod(x, 0),
            (((3, 2),),), ("CumprodBackward0",), avoid=(0.0,)),
    OpEntry("cumprod_method", lambda x: x.cumprod(1), lambda x: np.cumprod(x, 1), ROWS,
            ("CumprodBackward0",), avoid=(0.0,)),
    OpEntry("cumprod_zeros", _cumprod_zeros, lambda x: np.cumprod(x * X_ZEROS, 1), ROWS,
            ("CumprodBackward0", "MulBackward0")),
    OpEntry("logcumsumexp", lambda x: gpugrad.logcumsumexp(x, 1),
            lambda x: np.logaddexp.accumulate(x, 1), (((2, 4),),), ("LogcumsumexpBackward0",)),
    OpEntry("logcumsumexp_method", lambda x: x.logcumsumexp(0),
            lambda x: np.logaddexp.accumulate(x, 0), ROWS, ("LogcumsumexpBackward0",)),
    _binary("hypot", gpugrad.hypot, np.hypot, "HypotBackward0", avoid=(0.0,)),
    _binary("logaddexp", lambda a, b: a.logaddexp(b), np.logaddexp, "LogaddexpBackward0"),
    _binary("xlogy", gpugrad.xlogy, lambda x, y: x * np.log(y), "XlogyBackward0",
            domain=((-2.0, 2.0), (0.2, 2.0))),
    _unary("xlogy_number_self", lambda y: gpugrad.xlogy(1.5, y), lambda y: 1.5 * np.log(y),
           "XlogyBackward1", domain=(0.2, 2.0)),
    _unary("xlogy_number_other", lambda x: x.xlogy(3.0), lambda x: x * np.log(3.0),
           "XlogyBackward2"),
    _unary("fmod_number", lambda x: gpugrad.fmod(x, 0.75), lambda x: np.fmod(x, 0.75),
           "FmodBackward0", avoid=(-1.5, -0.75, 0.75, 1.5)),
    OpEntry("fmod", lambda a, b: a.fmod(b), np.fmod, (((2, 3), (3,)),), ("FmodBackward1",),
            domain=((0.1, 0.9), (1.1, 2.0))),
    _unary("remainder_number", lambda x: gpugrad.remainder(x, 0.75),
           lambda x: np.remainder(x, 0.75), "RemainderBackward0",
           avoid=(-1.5, -0.75, 0.0, 0.75, 1.5)),
    OpEntry("remainder", lambda a, b: a % b, np.remainder, (((2, 3), (3,)),),
            ("RemainderBackward1",), domain=((0.1, 0.9), (1.1, 2.0))),
    OpEntry("nan_to_num", lambda x: gpugrad.nan_to_num(_specials(x), 0.5, posinf=9.0),
            lambda x: np.nan_to_num(_specials_ref(x), nan=0.5, posinf=9.0), ROWS,
            ("NanToNumBackward0", "WhereBackward0")),
    OpEntry("nan_to_num_", _in_place(lambda x: x.nan_to_num_(neginf=-7.0)),
            lambda x: np.nan_to_num(x, neginf=-7.0), ROWS, ("NanToNumBackward0",)),
    OpEntry("nansum", lambda x: gpugrad.nansum(_specials(x, NANS)),
            lambda x: np.nansum(_specials_ref(x, NANS)), ROWS, ("NansumBackward0",)),
    _unary("nansum_dim", lambda x: x.nansum(1, keepdim=True), lambda x: x.sum(1, keepdims=True),
           "NansumBackward0", shapes=ROWS),
    OpEntry("nanmean", lambda x: gpugrad.nanmean(_specials(x, NANS), 1),
            lambda x: np.nanmean(_specials_ref(x, NANS), 1), ROWS,
            ("NansumBackward0", "DivBackward0")),
    OpEntry("diagonal_view", lambda x: gpugrad.diagonal(x, 1), lambda x: np.diagonal(x, 1).copy(),
            (((3, 4),),), ("DiagonalBackward0",)),
    OpEntry("diagonal_method", lambda x: x.diagonal(-1, 2, 0),
            lambda x: np.diagonal(x, -1, 2, 0).copy(), (((3, 2, 4),),), ("DiagonalBackward0",)),
    _unary("select_method", lambda x: x.select(1, -1), lambda x: x[:, -1], "SelectBackward0",
           shapes=ROWS),
    _unary("select_fn", lambda x: gpugrad.select(x, 0, 1), lambda x: x[1], "SelectBackward0",
           shapes=ROWS),
    OpEntry("diff", gpugrad.diff, lambda x: np.diff(x), ROWS, ("SubBackward0", "SliceBackward0")),
    OpEntry("diff_prepend", lambda x, p: x.diff(2, 0, prepend=p),
            lambda x, p: np.diff(x, 2, 0, prepend=p), (((2, 3), (1, 3)),),
            ("SubBackward0", "CatBackward0")),
    OpEntry("tile", lambda x: gpugrad.tile(x, (2,)), lambda x: np.tile(x, (2,)), ROWS,
            ("RepeatBackward0",)),
    OpEntry("tile_method", lambda x: x.tile((2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), ROWS,
            ("RepeatBackward0",)),
    _unary("clamp_min_fn", lambda x: gpugrad.clamp_min(x, 0.5), lambda x: np.maximum(x, 0.5),
           "ClampBackward1", avoid=(0.5,)),
    _unary("clamp_max_method", lambda x: x.clamp_max(-0.5), lambda x: np.minimum(x, -0.5),
           "ClampBackward1", avoid=(-0.5,)),
    _unary("clamp_min_", _in_place(lambda x: x.clamp_min_(0.5)), lambda x: np.maximum(x, 0.5),
           "ClampBackward1", avoid=(0.5,)),
    OpEntry("tensor_split", lambda x: gpugrad.tensor_split(x, 3, 1),
            lambda x: tuple(np.array_split(x, 3, 1)), (((2, 4),),), ("SliceBackward0",)),
    OpEntry("tensor_split_indices", lambda x: x.tensor_split([1, 3], dim=0),
            lambda x: tuple(np.split(x, [1, 3], 0)), (((4, 2),),), ("SliceBackward0",)),
    OpEntry("fliplr", gpugrad.fliplr, np.fliplr, ROWS, ("FlipBackward0",)),
    OpEntry("flipud", lambda x: x.flipud(), np.flipud, ROWS, ("FlipBackward0",)),
    OpEntry("rot90", lambda x: gpugrad.rot90(x, 1, (1, 2)), lambda x: _rot90_ref(x, 1),
            (((2, 3, 4),),), ("FlipBackward0", "TransposeBackward0")),
    OpEntry("rot90_method", lambda x: x.rot90(-1, (1, 2)), lambda x: _rot90_ref(x, -1),
            (((2, 3, 4),),), ("FlipBackward0", "TransposeBackward0")),
    OpEntry("unflatten", lambda x: x.unflatten(1, (2, -1)), lambda x: x.reshape(2, 2, 2),
            (((2, 4),),), ("ViewBackward0",)),
    OpEntry("take", lambda x: gpugrad.take(x, _const(np.array([[0, -1], [5, 0]]), x)),
            lambda x: x.ravel()[[[0, -1], [5, 0]]], ROWS, ("IndexBackward0", "ViewBackward0")),
    # in-place forms: the node saves the value self had before the write (a private copy, tied
    # back into the graph for double backward)
    OpEntry("hypot_", _in_place(lambda a, b: a.hypot_(b)), np.hypot, (((2, 3), (2, 3)),),
            ("HypotBackward0",), avoid=(0.0,)),
    OpEntry("logaddexp_", _in_place(lambda a, b: a.logaddexp_(b)), np.logaddexp,
            (((2, 3), (2, 3)),), ("LogaddexpBackward0",)),
    OpEntry("xlogy_", _in_place(lambda a, b: a.xlogy_(b)), lambda x, y: x * np.log(y),
            (((2, 3), (2, 3)),), ("XlogyBackward0",), domain=((-2.0, 2.0), (0.2, 2.0))),
    OpEntry("cumprod_", _in_place(lambda x: x.cumprod_(1)), lambda x: np.cumprod(x, 1), ROWS,
            ("CumprodBackward0",), avoid=(0.0,)),
    OpEntry("mul_tensor_", _in_place(lambda a, b: a.mul_(b)), np.multiply, (((2, 3), (2, 3)),),
            ("MulBackward0",)),
    _unary("clamp_max_", _in_place(lambda x: x.clamp_max_(0.5)), lambda x: np.minimum(x, 0.5),
           "ClampBackward1", avoid=(0.5,)),
    OpEntry("fmod_", _in_place(lambda a, b: a.fmod_(b)), np.fmod, (((2, 3), (3,)),),
            ("FmodBackward1",), domain=((0.1, 0.9), (1.1, 2.0))),
    _unary("remainder_", _in_place(lambda x: x.remainder_(0.75)), lambda x: np.remainder(x, 0.75),
           "RemainderBackward0", avoid=(-1.5, -0.75, 0.0, 0.75, 1.5)),
]


# -- transposed convolution, pooling and resampling (ops/conv.py, pool.py, resize.py) -------------
def _conv_transpose_ref(x, w, b, stride, padding, output_padding=0, groups=1, dilation=1):
    """Each input pixel scatters x[n, c, i, j] w[c, o] into the output, written with loops."""
    s, p, op, d = ((v, v) if isinstance(v, int) else v
                   for v in (stride, padding, output_padding, dilation))
    n, c, h, wd = x.shape
    cg, og, kh, kw = c // groups, w.shape[1], w.shape[2], w.shape[3]
    full = np.zeros((n, og * groups, (h - 1) * s[0] + d[0] * (kh - 1) + 1 + op[0],
                     (wd - 1) * s[1] + d[1] * (kw - 1) + 1 + op[1]))
    for ci in range(c):
        g = ci // cg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for bb in range(kw):
                        full[:, g * og:(g + 1) * og, i * s[0] + a * d[0], j * s[1] + bb * d[1]] \
                            += x[:, ci, i, j, None] * w[ci, :, a, bb]
    y = full[:, :, p[0]:full.shape[2] - p[0], p[1]:full.shape[3] - p[1]]
    return y if b is None else y + b[None, :, None, None]


def _conv_dilated_ref(x, w, s, p, d):
    """Cross-correlation with dilated kernel taps, written with loops over the output."""
    xp_ = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    kh, kw = w.shape[2:]
    oh = (xp_.shape[2] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (xp_.shape[3] - d[1] * (kw - 1) - 1) // s[1] + 1
    y = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp_[:, :, i * s[0]:i * s[0] + d[0] * (kh - 1) + 1:d[0],
                        j * s[1]:j * s[1] + d[1] * (kw - 1) + 1:d[1]]
            y[:, :, i, j] = np.einsum("ncij,ocij->no", patch, w)
    return y


def _window_ref(x, reduce_, k, s, p, d=(1, 1), ceil=False, fill=-np.inf, divisor=None):
    """2-D pooling with loops: each output reduces the window's in-range entries (padding
    entries are ``fill``); ``divisor(i0, i1, j0, j1)`` divides a sum when given."""
    n, c, h, w = x.shape
    outs = []
    for size, kk, ss, pp, dd in zip((h, w), k, s, p, d):
        o = (size + 2 * pp - dd * (kk - 1) - 1 + (ss - 1 if ceil else 0)) // ss + 1
        outs.append(o - 1 if ceil and (o - 1) * ss >= size + pp else o)
    y = np.zeros((n, c) + tuple(outs))
    for i in range(outs[0]):
        for j in range(outs[1]):
            rows = [i * s[0] - p[0] + a * d[0] for a in range(k[0])]
            cols = [j * s[1] - p[1] + b * d[1] for b in range(k[1])]
            vals = [x[:, :, r, q] if 0 <= r < h and 0 <= q < w else np.full((n, c), fill)
                    for r in rows for q in cols]
            y[:, :, i, j] = reduce_(np.stack(vals, -1), -1)
            if divisor is not None:
                y[:, :, i, j] /= divisor(rows[0], rows[-1] + 1, cols[0], cols[-1] + 1)
    return y


def _avg_divisor(h, w, p, include_pad):
    def divisor(i0, i1, j0, j1):
        if include_pad:
            return (min(i1, h + p[0]) - i0) * (min(j1, w + p[1]) - j0)
        return (min(i1, h) - max(i0, 0)) * (min(j1, w) - max(j0, 0))
    return divisor


def _adaptive_max_ref(x, oh, ow):
    h, w = x.shape[-2:]
    y = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            r0, r1 = i * h // oh, -(-(i + 1) * h // oh)
            c0, c1 = j * w // ow, -(-(j + 1) * w // ow)
            y[..., i, j] = x[..., r0:r1, c0:c1].max(axis=(-2, -1))
    return y


def _nearest_ref(x, out, exact=False):
    """Along each trailing axis: output i reads input floor((i [+ 0.5]) n / out)."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        src = [min(int((i + 0.5 * exact) * n / o), n - 1) for i in range(o)]
        x = np.take(x, src, axis=axis)
    return x


def _linear_ref(x, out, align_corners):
    """Along each trailing axis: output i blends the two inputs around its source position."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        parts = []
        for i in range(o):
            if align_corners:
                src = i * (n - 1) / (o - 1) if o > 1 else 0.0
            else:
                src = max((i + 0.5) * n / o - 0.5, 0.0)
            i0 = min(int(src), n - 1)
            i1 = min(i0 + 1, n - 1)
            lam = src - i0
            parts.append((1 - lam) * np.take(x, i0, axis) + lam * np.take(x, i1, axis))
        x = np.stack(parts, axis)
    return x


def _pixel_shuffle_ref(x, r):
    n, c, h, w = x.shape
    y = np.zeros((n, c // (r * r), h * r, w * r))
    for ch in range(c // (r * r)):
        for i in range(r):
            for j in range(r):
                y[:, ch, i::r, j::r] = x[:, ch * r * r + i * r + j]
    return y


def _unfold_ref(x, k, d, p, s):
    n, c, h, w = x.shape
    xp_ = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for a in range(k[0]):
        for b in range(k[1]):
            for i in range(oh):
                for j in range(ow):
                    cols[:, :, a, b, i, j] = xp_[:, :, i * s[0] + a * d[0], j * s[1] + b * d[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def _fold_ref(cols, size, k, d, p, s):
    n = cols.shape[0]
    c = cols.shape[1] // (k[0] * k[1])
    oh = (size[0] + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (size[1] + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    blocks = cols.reshape(n, c, k[0], k[1], oh, ow)
    y = np.zeros((n, c, size[0] + 2 * p[0], size[1] + 2 * p[1]))
    for a in range(k[0]):
        for b in range(k[1]):
            for i in range(oh):
                for j in range(ow):
                    y[:, :, i * s[0] + a * d[0], j * s[1] + b * d[1]] += blocks[:, :, a, b, i, j]
    return y[:, :, p[0]:p[0] + size[0], p[1]:p[1] + size[1]]


_FN = gpugrad.nn.functional
_CONV_T = (("ConvolutionBackward0",),)
OP_DB += [
    OpEntry("conv_transpose2d",
            lambda x, w, b: _FN.conv_transpose2d(x, w, b, 2, 1, 1, groups=2, dilation=(1, 2)),
            lambda x, w, b: _conv_transpose_ref(x, w, b, 2, 1, 1, 2, (1, 2)),
            (((2, 4, 3, 3), (4, 2, 3, 2), (4,)),), *_CONV_T),
    OpEntry("conv_transpose2d_no_bias",
            lambda x, w: _FN.conv_transpose2d(x, w, stride=(1, 3), padding=(1, 0),
                                              output_padding=(0, 2)),
            lambda x, w: _conv_transpose_ref(x, w, None, (1, 3), (1, 0), (0, 2)),
            (((1, 2, 3, 2), (2, 3, 3, 3)),), *_CONV_T),
    OpEntry("conv_transpose1d",
            lambda x, w, b: _FN.conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
            lambda x, w, b: _conv_transpose_ref(x[:, :, None], w[:, :, None], b, (1, 3), (0, 1),
                                                (0, 2))[:, :, 0],
            (((2, 3, 4), (3, 2, 3), (2,)),), *_CONV_T),
    OpEntry("conv2d_dilated", lambda x, w: _FN.conv2d(x, w, None, (2, 1), 1, (1, 2)),
            lambda x, w: _conv_dilated_ref(x, w, (2, 1), (1, 1), (1, 2)),
            (((2, 2, 5, 6), (3, 2, 3, 2)),), *_CONV_T),
    OpEntry("max_pool2d_ceil_dilation",
            lambda x: _FN.max_pool2d(x, (3, 2), (2, 3), 1, (1, 2), ceil_mode=True),
            lambda x: _window_ref(x, np.max, (3, 2), (2, 3), (1, 1), (1, 2), ceil=True),
            (((2, 2, 6, 7),),), ("MaxPool2DWithIndicesBackward0",)),
    OpEntry("max_pool1d", lambda x: _FN.max_pool1d(x, 3, 2, 1, ceil_mode=True),
            lambda x: _window_ref(x[:, :, None], np.max, (1, 3), (1, 2), (0, 1), ceil=True)[
                :, :, 0], (((2, 3, 8),),),
            ("MaxPool2DWithIndicesBackward0", "UnsqueezeBackward0", "SqueezeBackward1")),
    OpEntry("avg_pool2d_ceil_exclude_pad",
            lambda x: _FN.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
            lambda x: _window_ref(x, np.sum, (3, 3), (2, 2), (1, 1), ceil=True, fill=0.0,
                                  divisor=_avg_divisor(6, 5, (1, 1), False)),
            (((2, 2, 6, 5),),), ("AvgPool2DBackward0",)),
    OpEntry("avg_pool1d", lambda x: _FN.avg_pool1d(x, 4, 3, 1, ceil_mode=True),
            lambda x: _window_ref(x[:, :, None], np.sum, (1, 4), (1, 3), (0, 1), ceil=True,
                                  fill=0.0, divisor=_avg_divisor(1, 9, (0, 1), True))[:, :, 0],
            (((2, 3, 9),),), ("AvgPool2DBackward0", "SqueezeBackward1")),
    OpEntry("adaptive_max_pool2d", lambda x: _FN.adaptive_max_pool2d(x, (3, 2)),
            lambda x: _adaptive_max_ref(x, 3, 2), (((2, 2, 5, 7),), ((3, 4, 3),)),
            ("AdaptiveMaxPool2DBackward0",)),
    OpEntry("adaptive_max_pool1d", lambda x: _FN.adaptive_max_pool1d(x, 4),
            lambda x: _adaptive_max_ref(x[:, :, None], 1, 4)[:, :, 0], (((2, 3, 7),),),
            ("AdaptiveMaxPool2DBackward0",)),
    OpEntry("interpolate_nearest1d", lambda x: _FN.interpolate(x, size=7),
            lambda x: _nearest_ref(x, (7,)), (((2, 2, 3),),), ("UpsampleNearest1DBackward0",)),
    OpEntry("interpolate_nearest2d", lambda x: _FN.interpolate(x, size=(5, 2)),
            lambda x: _nearest_ref(x, (5, 2)), (((2, 2, 3, 4),),),
            ("UpsampleNearest2DBackward0",)),
    OpEntry("interpolate_nearest_exact1d", lambda x: _FN.interpolate(x, 7, mode="nearest-exact"),
            lambda x: _nearest_ref(x, (7,), exact=True), (((2, 2, 3),),),
            ("UpsampleNearestExact1DBackward0",)),
    OpEntry("interpolate_nearest_exact2d",
            lambda x: _FN.interpolate(x, (5, 3), mode="nearest-exact"),
            lambda x: _nearest_ref(x, (5, 3), exact=True), (((2, 2, 3, 4),),),
            ("UpsampleNearestExact2DBackward0",)),
    OpEntry("interpolate_linear", lambda x: _FN.interpolate(x, 7, mode="linear"),
            lambda x: _linear_ref(x, (7,), False), (((2, 2, 4),),),
            ("UpsampleLinear1DBackward0",)),
    OpEntry("interpolate_linear_align_corners",
            lambda x: _FN.interpolate(x, 3, mode="linear", align_corners=True),
            lambda x: _linear_ref(x, (3,), True), (((2, 2, 5),),),
            ("UpsampleLinear1DBackward0",)),
    OpEntry("interpolate_bilinear", lambda x: _FN.interpolate(x, (5, 2), mode="bilinear"),
            lambda x: _linear_ref(x, (5, 2), False), (((2, 2, 3, 4),),),
            ("UpsampleBilinear2DBackward0",)),
    OpEntry("interpolate_bilinear_align_corners",
            lambda x: _FN.interpolate(x, (2, 7), mode="bilinear", align_corners=True),
            lambda x: _linear_ref(x, (2, 7), True), (((1, 2, 3, 4),),),
            ("UpsampleBilinear2DBackward0",)),
    OpEntry("pixel_shuffle", lambda x: _FN.pixel_shuffle(x, 2),
            lambda x: _pixel_shuffle_ref(x, 2), (((2, 8, 2, 3),),), ("PixelShuffleBackward0",)),
    OpEntry("pixel_unshuffle", lambda x: _FN.pixel_unshuffle(_FN.pixel_shuffle(x, 2), 2),
            lambda x: x, (((2, 8, 2, 3),),),
            ("PixelShuffleBackward0", "PixelUnshuffleBackward0")),
    OpEntry("unfold", lambda x: _FN.unfold(x, (2, 3), (2, 1), (1, 0), (1, 2)),
            lambda x: _unfold_ref(x, (2, 3), (2, 1), (1, 0), (1, 2)), (((2, 2, 4, 6),),),
            ("Im2ColBackward0",)),
    OpEntry("fold", lambda x: _FN.fold(x, (4, 5), 2, 1, (1, 0), 2),
            lambda x: _fold_ref(x, (4, 5), (2, 2), (1, 1), (1, 0), (2, 2)), (((2, 8, 6),),),
            ("Col2ImBackward0",)),
]


BAG_INDEX, BAG_OFFSETS = np.array([1, 2, 4, 5, 4, 3, 2, 0]), np.array([0, 2, 2, 5])


def _bag_ref(w, psw=None, mode="sum", padding_idx=None):
    """Each bag's rows (weighted), reduced with a loop; empty bags give zeros."""
    ends = list(BAG_OFFSETS[1:]) + [len(BAG_INDEX)]
    out = []
    for start, end in zip(BAG_OFFSETS, ends):
        rows = [w[BAG_INDEX[j]] * (1.0 if psw is None else psw[j]) for j in range(start, end)
                if BAG_INDEX[j] != padding_idx]
        if not rows:
            out.append(np.zeros(w.shape[1]))
        else:
            out.append({"sum": np.sum, "mean": np.mean, "max": np.max}[mode](rows, axis=0))
    return np.array(out)


def _bag(w, psw=None, **kw):
    return _FN.embedding_bag(_const(BAG_INDEX, w), w, _const(BAG_OFFSETS, w),
                             per_sample_weights=psw, **kw)


OP_DB += [
    OpEntry("embedding_bag_sum_weighted", lambda w, p: _bag(w, p, mode="sum"),
            lambda w, p: _bag_ref(w, p), (((6, 3), (8,)),), ("EmbeddingBagBackward0",)),
    OpEntry("embedding_bag_mean_padding", lambda w: _bag(w, mode="mean", padding_idx=4),
            lambda w: _bag_ref(w, mode="mean", padding_idx=4), (((6, 3),),),
            ("EmbeddingBagBackward0",)),
    OpEntry("embedding_bag_max", lambda w: _bag(w, mode="max"),
            lambda w: _bag_ref(w, mode="max"), (((6, 3),),), ("EmbeddingBagBackward0",)),
]


# -- special functions (gpugrad.ops.special): references from the math module and written-out
# series, independent of the series gpugrad sums -------------------------------------------------
_SP = gpugrad.special


def _vec(f):
    return lambda x: np.vectorize(f, otypes=[np.float64])(x)


def _hurwitz_ref(s, x, n_terms=2000):
    """sum_{k>=0} (x + k)^-s: the first terms directly, the rest by Euler-Maclaurin."""
    k = np.arange(n_terms).reshape((-1,) + (1,) * np.ndim(x))
    head = ((x + k) ** -s).sum(axis=0)
    z = x + n_terms
    return head + z ** (1 - s) / (s - 1) + z ** -s / 2 + s * z ** (-s - 1) / 12


def _digamma_ref(x, n_terms=2000):
    """-euler_gamma + sum_k (1 / (k + 1) - 1 / (k + x)), the tail by Euler-Maclaurin."""
    k = np.arange(n_terms).reshape((-1,) + (1,) * np.ndim(x))
    head = (1 / (k + 1) - 1 / (k + x)).sum(axis=0)
    n = n_terms
    tail = np.log((n + x) / (n + 1)) + (1 / (n + 1) - 1 / (n + x)) / 2 \
        - (1 / (n + x) ** 2 - 1 / (n + 1) ** 2) / 12
    return -np.euler_gamma + head + tail


def _polygamma_ref(n, x):
    return (-1) ** (n + 1) * math.factorial(n) * _hurwitz_ref(n + 1, x)


def _bisect(f, y, lo, hi, steps=200):
    """x with f(x) = y for an increasing f, by bisection."""
    lo, hi = np.full(np.shape(y), lo), np.full(np.shape(y), hi)
    for _ in range(steps):
        mid = (lo + hi) / 2
        below = f(mid) < y
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return (lo + hi) / 2


_ERF = _vec(math.erf)


def _ndtr_ref(x):
    return 0.5 * _vec(math.erfc)(-x / math.sqrt(2))


def _i1_ref(x):
    return sum((x / 2) ** (2 * k + 1) / (math.factorial(k) * math.factorial(k + 1))
               for k in range(60))


def _mvlgamma_ref(x, p):
    return sum(_vec(math.lgamma)(x - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(math.pi)


def _digamma_reflected(x):
    """digamma(x) = digamma(1 - x) - pi cot(pi x) below 1/2."""
    low = x < 0.5
    up = _digamma_ref(np.where(low, 1 - x, x))
    return np.where(low, up - math.pi / np.tan(math.pi * x), up)


_POLES = (-2.0, -1.0, 0.0)
_SPECIAL_UNARY = [
    # name, function, method, reference, class, domain, avoid
    ("lgamma", gpugrad.lgamma, lambda x: x.lgamma(), _vec(math.lgamma), "LgammaBackward0",
     (-2.5, 3.0), _POLES),
    ("digamma", gpugrad.digamma, lambda x: x.digamma(), _digamma_reflected, "DigammaBackward0",
     (-2.5, 3.0), _POLES),
    ("polygamma3", lambda x: gpugrad.polygamma(3, x), lambda x: x.polygamma(3),
     lambda x: _polygamma_ref(3, x), "PolygammaBackward0", (0.5, 3.0), ()),
    ("erfc", gpugrad.erfc, lambda x: x.erfc(), _vec(math.erfc), "ErfcBackward0", (-2.0, 2.0),
     ()),
    ("erfinv", gpugrad.erfinv, lambda x: x.erfinv(), lambda y: _bisect(_ERF, y, -6.0, 6.0),
     "ErfinvBackward0", (-0.9, 0.9), ()),
    ("logit", gpugrad.logit, lambda x: x.logit(), lambda x: np.log(x / (1 - x)),
     "LogitBackward0", (0.05, 0.95), ()),
    ("logit_eps", lambda x: gpugrad.logit(x, 0.2), lambda x: x.logit(eps=0.2),
     lambda x: np.log(np.clip(x, 0.2, 0.8) / (1 - np.clip(x, 0.2, 0.8))), "LogitBackward0",
     (0.05, 0.95), (0.2, 0.8)),
    ("sinc", gpugrad.sinc, lambda x: x.sinc(), np.sinc, "SincBackward0", (-2.0, 2.0), ()),
    ("i0", gpugrad.i0, lambda x: x.i0(), np.i0, "I0Backward0", (-3.0, 3.0), ()),
    ("i1", _SP.i1, None, _i1_ref, "SpecialI1Backward0", (-3.0, 3.0), ()),
    ("mvlgamma3", lambda x: gpugrad.mvlgamma(x, 3), lambda x: x.mvlgamma(3),
     lambda x: _mvlgamma_ref(x, 3), "MvlgammaBackward0", (1.2, 4.0), ()),
    ("ndtr", _SP.ndtr, None, _ndtr_ref, "ErfcBackward0", (-3.0, 3.0), ()),
    ("ndtri", _SP.ndtri, None, lambda p: _bisect(_ndtr_ref, p, -10.0, 10.0),
     "SpecialNdtriBackward0", (0.05, 0.95), ()),
    ("log_ndtr", _SP.log_ndtr, None, lambda x: np.log(_ndtr_ref(x)), "SpecialLogNdtrBackward0",
     (-5.0, 3.0), ()),
    ("entr", _SP.entr, None, lambda x: -x * np.log(x), "SpecialEntrBackward0", (0.1, 2.0), ()),
]
for _name, _fn, _method, _ref, _cls, _dom, _avoid in _SPECIAL_UNARY:
    OP_DB.append(_unary(_name, _fn, _ref, _cls, _dom, _avoid))
    if _method is not None:
        OP_DB.append(_unary(_name + "_method", _method, _ref, _cls, _dom, _avoid))

_XLOG1PY_DOMAIN = ((-2.0, 2.0), (-0.9, 2.0))
OP_DB += [
    OpEntry("xlog1py", _SP.xlog1py, lambda x, y: x * np.log1p(y), BINARY,
            ("SpecialXlog1PyBackward0",), _XLOG1PY_DOMAIN),
    OpEntry("xlog1py_method", lambda x, y: x.xlog1py(y), lambda x, y: x * np.log1p(y), BINARY,
            ("SpecialXlog1PyBackward0",), _XLOG1PY_DOMAIN),
    OpEntry("xlog1py_number_self", lambda y: _SP.xlog1py(1.5, y), lambda y: 1.5 * np.log1p(y),
            UNARY, ("SpecialXlog1PyBackward1",), (-0.9, 2.0)),
    OpEntry("xlog1py_number_other", lambda x: _SP.xlog1py(x, 0.5),
            lambda x: x * math.log1p(0.5), UNARY, ("SpecialXlog1PyBackward2",)),
]


def _windows_ref(x, dim, size, step):
    """Every window along ``dim``, stacked, the window as the last axis (written with a loop)."""
    d = dim % x.ndim
    x = np.moveaxis(x, d, -1)
    out = np.stack([x[..., i:i + size] for i in range(0, x.shape[-1] - size + 1, step)], -2)
    return np.moveaxis(out, -2, d)


def _kth_ref(x, k, dim):
    return np.sort(x, axis=dim).take(k - 1, axis=dim)


OP_DB += [
    OpEntry("unfold_method", lambda x: x.unfold(1, 3, 2), lambda x: _windows_ref(x, 1, 3, 2),
            (((2, 7, 3),),), ("UnfoldBackward0",)),
    OpEntry("unfold_overlapping", lambda x: x.unfold(-1, 2, 1),
            lambda x: _windows_ref(x, -1, 2, 1), (((3, 4),), ((5,),)), ("UnfoldBackward0",)),
    OpEntry("kthvalue", lambda x: gpugrad.kthvalue(x, 2, 1)[0], lambda x: _kth_ref(x, 2, 1),
            (((3, 4),),), ("GatherBackward0",)),
    OpEntry("aminmax", lambda x: tuple(gpugrad.aminmax(x, dim=0)),
            lambda x: (x.min(axis=0), x.max(axis=0)), (((3, 4),),), ()),
    OpEntry("repeat_interleave_int", lambda x: x.repeat_interleave(2, dim=1),
            lambda x: np.repeat(x, 2, axis=1), (((2, 3),),), ("IndexBackward0",)),
    OpEntry("repeat_interleave_tensor",
            lambda x: gpugrad.repeat_interleave(x, _const(np.array([2, 0, 3]), x), dim=0),
            lambda x: np.repeat(x, [2, 0, 3], axis=0), (((3, 2),),), ("IndexBackward0",)),
]


# -- inverse hyperbolic functions (ops.pointwise_more) --------------------------------------------
OP_DB += [
    _unary("acosh", gpugrad.acosh, np.arccosh, "AcoshBackward0", (1.2, 3.0)),
    _unary("arccosh_method", lambda x: x.arccosh(), np.arccosh, "AcoshBackward0", (1.2, 3.0)),
    _unary("asinh", gpugrad.asinh, np.arcsinh, "AsinhBackward0"),
    _unary("arcsinh_method", lambda x: x.arcsinh(), np.arcsinh, "AsinhBackward0"),
    _unary("atanh", gpugrad.atanh, np.arctanh, "AtanhBackward0", (-0.8, 0.8)),
    _unary("arctanh_method", lambda x: x.arctanh(), np.arctanh, "AtanhBackward0", (-0.8, 0.8)),
]


# -- 3-D pools, unpooling, spatial transformers ---------------------------------------------------
def _pool3d_ref(x, reduce_, k, s, p, fill):
    """Each (k, k, k) window of x padded by p (with ``fill``), stride s, reduced (a loop)."""
    xp_ = np.pad(x, ((0, 0), (0, 0)) + ((p, p),) * 3, constant_values=fill)
    out = [(n - k) // s + 1 for n in xp_.shape[2:]]
    y = np.zeros(x.shape[:2] + tuple(out))
    for i in range(out[0]):
        for j in range(out[1]):
            for m in range(out[2]):
                win = xp_[:, :, i * s:i * s + k, j * s:j * s + k, m * s:m * s + k]
                y[:, :, i, j, m] = reduce_(win.reshape(x.shape[:2] + (-1,)), axis=-1)
    return y


def _adaptive3d_ref(x, out, reduce_):
    y = np.zeros(x.shape[:2] + out)
    for idx in np.ndindex(*out):
        box = tuple(slice(i * n // o, -(-(i + 1) * n // o))
                    for i, n, o in zip(idx, x.shape[2:], out))
        y[(Ellipsis,) + idx] = reduce_(x[(Ellipsis,) + box].reshape(x.shape[:2] + (-1,)), -1)
    return y


def _avg_pool3d_grad(x):
    g, = gpugrad.autograd.grad((_FN.avg_pool3d(x, 2) ** 2).sum(), x, create_graph=True)
    return g


def _avg_pool3d_grad_ref(x):
    m = _pool3d_ref(x, np.mean, 2, 2, 0, 0.0)
    return np.kron(m / 4, np.ones((1, 1, 2, 2, 2)))


_UNPOOL_IDX = np.array([[[0, 3], [9, 14]], [[5, 2], [12, 11]]])   # (2, 2, 2) into 4 x 4


def _unpool_ref(x, idx, size):
    y = np.zeros(x.shape[:2] + (int(np.prod(size)),))
    for n, c in np.ndindex(*x.shape[:2]):
        y[n, c, idx[c].reshape(-1)] = x[n, c].reshape(-1)
    return y.reshape(x.shape[:2] + size)


def _grid_sample_ref(x, grid):
    """Bilinear, zeros padding, align_corners=False, one output pixel at a time."""
    n, c, h, w = x.shape
    y = np.zeros((n, c) + grid.shape[1:3])
    for b, i, j in np.ndindex(n, *grid.shape[1:3]):
        sx, sy = ((grid[b, i, j] + 1) * (w, h) - 1) / 2
        x0, y0 = int(np.floor(sx)), int(np.floor(sy))
        for dy, dx in np.ndindex(2, 2):
            if 0 <= x0 + dx < w and 0 <= y0 + dy < h:
                wt = (1 - abs(sx - x0 - dx)) * (1 - abs(sy - y0 - dy))
                y[b, :, i, j] += wt * x[b, :, y0 + dy, x0 + dx]
    return y


def _grid3d_ref(x, grid):
    """Trilinear, zeros padding, align_corners=True."""
    n, c = x.shape[:2]
    size = np.array(x.shape[2:][::-1])          # (W, H, D): the grid's coordinate order
    y = np.zeros((n, c) + grid.shape[1:4])
    for b, i, j, m in np.ndindex(n, *grid.shape[1:4]):
        s = (grid[b, i, j, m] + 1) / 2 * (size - 1)
        base = np.floor(s).astype(int)
        for off in np.ndindex(2, 2, 2):
            q = base + off
            if np.all(q >= 0) and np.all(q < size):
                y[b, :, i, j, m] += np.prod(1 - np.abs(s - q)) * x[b, :, q[2], q[1], q[0]]
    return y


def _affine_ref(theta, size):
    """theta @ (x, y, 1) at each pixel centre of an (H, W) output (align_corners=False)."""
    h, w = size
    xs, ys = (np.arange(w) * 2 + 1) / w - 1, (np.arange(h) * 2 + 1) / h - 1
    base = np.array([[[x, y, 1.0] for x in xs] for y in ys])
    return np.einsum("hwk,nik->nhwi", base, theta)


OP_DB += [
    OpEntry("max_pool3d", lambda x: _FN.max_pool3d(x, 3, 2, 1),
            lambda x: _pool3d_ref(x, np.max, 3, 2, 1, -np.inf), (((2, 2, 4, 5, 3),),),
            ("MaxPool3DWithIndicesBackward0",)),
    OpEntry("avg_pool3d", lambda x: _FN.avg_pool3d(x, 2, 1),
            lambda x: _pool3d_ref(x, np.mean, 2, 1, 0, 0.0), (((2, 2, 3, 4, 3),),),
            ("AvgPool3DBackward0",)),
    OpEntry("avg_pool3d_grad", _avg_pool3d_grad, _avg_pool3d_grad_ref, (((1, 2, 4, 2, 4),),),
            ("AvgPool3DBackwardBackward0", "AvgPool3DBackward0")),
    OpEntry("adaptive_max_pool3d", lambda x: _FN.adaptive_max_pool3d(x, (2, 3, 2)),
            lambda x: _adaptive3d_ref(x, (2, 3, 2), np.max), (((2, 2, 3, 5, 4),),),
            ("AdaptiveMaxPool3DBackward0",)),
    OpEntry("max_unpool2d", lambda x: _FN.max_unpool2d(x, _const(_UNPOOL_IDX, x)
                                                       .expand(2, 2, 2, 2), 2),
            lambda x: _unpool_ref(x, _UNPOOL_IDX, (4, 4)), (((2, 2, 2, 2),),),
            ("MaxUnpool2DBackward0",)),
    OpEntry("max_unpool3d", lambda x: _FN.max_unpool3d(
        x, _const(_UNPOOL_IDX[:, None], x).expand(2, 2, 1, 2, 2), (1, 2, 2), (1, 2, 2)),
            lambda x: _unpool_ref(x, _UNPOOL_IDX, (1, 4, 4)), (((2, 2, 1, 2, 2),),),
            ("MaxUnpool3DBackward0",)),
    OpEntry("affine_grid", lambda t: _FN.affine_grid(t, (2, 3, 3, 4), align_corners=False),
            lambda t: _affine_ref(t, (3, 4)), (((2, 2, 3),),), ("AffineGridGeneratorBackward0",)),
    OpEntry("grid_sample", lambda x, g: _FN.grid_sample(x, g, align_corners=False),
            _grid_sample_ref, (((2, 2, 3, 4), (2, 3, 2, 2)),), ("GridSampler2DBackward0",),
            ((-2.0, 2.0), (-1.1, 1.1))),
    OpEntry("grid_sample_3d", lambda x, g: _FN.grid_sample(x, g, align_corners=True),
            _grid3d_ref, (((1, 2, 3, 2, 3), (1, 2, 1, 2, 3)),), ("GridSampler3DBackward0",),
            ((-2.0, 2.0), (-1.1, 1.1))),
]


# -- decompositions and solvers of linalg_more (gauge-fixed outputs where they are not unique) ----
_LA = gpugrad.linalg


def _la_legacy():
    from gpugrad.ops import linalg_legacy
    return linalg_legacy


def _la_sym(a):
    return a + a.mT


def _la_sym_ref(a):
    return a + np.swapaxes(a, -1, -2)


def _la_diag_sign(x):
    """sign of the diagonal of x (tensor or array), as a row to scale columns with."""
    if isinstance(x, np.ndarray):
        return np.sign(np.diagonal(x, axis1=-2, axis2=-1))[..., None, :]
    return x.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _la_qr_fixed(q, r):
    """Q and R with R's diagonal made positive (the QR factors are unique up to those signs)."""
    d = _la_diag_sign(r)
    return q * d, r * (np.swapaxes(d, -1, -2) if isinstance(d, np.ndarray) else d.mT)


def _la_first_row_sign(u):
    return np.sign(u[..., :1, :]) if isinstance(u, np.ndarray) else u[..., :1, :].sign()


def _la_svd_fixed(u, s, vh):
    d = _la_first_row_sign(u)
    return s, u * d, vh * (np.swapaxes(d, -1, -2) if isinstance(d, np.ndarray) else d.mT)


def _la_svd_ref(a):
    return _la_svd_fixed(*np.linalg.svd(a, full_matrices=False))


def _la_eigh_ref(a):
    w, v = np.linalg.eigh(_la_sym_ref(a))
    return w, v * _la_first_row_sign(v)


def _la_lu_ref(a):
    """(P, L, U, packed LU) by elimination with partial pivoting, written with loops."""
    if a.ndim > 2:
        parts = [_la_lu_ref(m) for m in a.reshape((-1,) + a.shape[-2:])]
        return tuple(np.stack([p[i] for p in parts]).reshape(a.shape[:-2] + parts[0][i].shape)
                     for i in range(4))
    m, n = a.shape
    k = min(m, n)
    u, low, perm = a.copy(), np.zeros((m, n)), list(range(m))
    for j in range(k):
        p = j + int(np.argmax(np.abs(u[j:, j])))
        u[[j, p]], low[[j, p]] = u[[p, j]], low[[p, j]]
        perm[j], perm[p] = perm[p], perm[j]
        low[j + 1:, j] = u[j + 1:, j] / u[j, j]
        u[j + 1:] -= low[j + 1:, j, None] * u[j]
    packed = np.triu(u) + np.tril(low, -1)
    return (np.eye(m)[:, perm], np.tril(low, -1)[:, :k] + np.eye(m, k), np.triu(u)[:k],
            packed)


def _la_householder_ref(a, tau):
    out = np.zeros(a.shape)
    for idx in np.ndindex(*a.shape[:-2]):
        m, n = a.shape[-2:]
        q = np.eye(m)
        for i in range(tau.shape[-1]):
            v = np.concatenate([np.zeros(i), [1.0], a[idx][i + 1:, i]])
            q = q @ (np.eye(m) - tau[idx][i] * np.outer(v, v))
        out[idx] = q[:, :n]
    return out


def _la_upper(a):
    return a.triu() + _const(4 * np.eye(a.shape[-1]), a)


def _la_upper_ref(a):
    return np.triu(a) + 4 * np.eye(a.shape[-1])


def _la_lower(a):
    return a.tril() + _const(4 * np.eye(a.shape[-1]), a)


def _la_lower_ref(a):
    return np.tril(a) + 4 * np.eye(a.shape[-1])


def _la_solve_ref(a, b):
    return np.linalg.solve(a, b)


def _la_lstsq_ref(a, b):
    x = np.linalg.pinv(a) @ b
    return x, ((a @ x - b) ** 2).sum(-2)


_LA_EYE6 = np.eye(6).reshape(2, 3, 6)
_LA_EYE4 = np.eye(4).reshape(4, 2, 2)
_LA_RECT = (((4, 3),), ((2, 3, 5),))
_LA_SQUARE = (((3, 3),), ((2, 3, 3),))

OP_DB += [
    OpEntry("linalg_qr", lambda a: _la_qr_fixed(*_LA.qr(a)),
            lambda a: _la_qr_fixed(*np.linalg.qr(a)), _LA_RECT, ("LinalgQrBackward0",)),
    OpEntry("linalg_qr_complete_wide", lambda a: _la_qr_fixed(*_LA.qr(a, mode="complete")),
            lambda a: _la_qr_fixed(*np.linalg.qr(a, mode="complete")), (((2, 4),),),
            ("LinalgQrBackward0",)),
    OpEntry("qr_legacy", lambda a: _la_qr_fixed(*_la_legacy().qr(a)),
            lambda a: _la_qr_fixed(*np.linalg.qr(a)), (((3, 2),),), ("LinalgQrBackward0",)),
    OpEntry("linalg_eigh", lambda a: (lambda w, v: (w, v * _la_first_row_sign(v)))(
        *_LA.eigh(_la_sym(a))), _la_eigh_ref, _LA_SQUARE, ("LinalgEighBackward0",)),
    OpEntry("linalg_eigh_upper", lambda a: _LA.eigh(_la_sym(a), UPLO="U").eigenvalues,
            lambda a: np.linalg.eigvalsh(_la_sym_ref(a)), (((3, 3),),),
            ("LinalgEighBackward0",)),
    OpEntry("linalg_eigvalsh", lambda a: _LA.eigvalsh(_la_sym(a)),
            lambda a: np.linalg.eigvalsh(_la_sym_ref(a)), _LA_SQUARE, ("LinalgEighBackward0",)),
    OpEntry("linalg_svd", lambda a: _la_svd_fixed(*_LA.svd(a, full_matrices=False)),
            _la_svd_ref, _LA_RECT, ("LinalgSvdBackward0",)),
    OpEntry("linalg_svd_full", lambda a: (lambda u, s, vh: (s, u[..., :, :3] @ vh[..., :3, :]))(
        *_LA.svd(a)), lambda a: (lambda u, s, vh: (s, u @ vh))(*np.linalg.svd(a, False)),
            (((4, 3),), ((3, 5),)), ("LinalgSvdBackward0",)),
    OpEntry("svd_legacy", lambda a: (lambda u, s, v: _la_svd_fixed(u, s, v.mT))(
        *_la_legacy().svd(a)), _la_svd_ref, (((2, 4, 3),),), ("LinalgSvdBackward0",)),
    OpEntry("linalg_pinv", _LA.pinv, np.linalg.pinv, _LA_RECT, ("LinalgPinvBackward0",)),
    OpEntry("linalg_pinv_hermitian", lambda a: _LA.pinv(_la_sym(a), hermitian=True),
            lambda a: np.linalg.pinv(_la_sym_ref(a)), _LA_SQUARE, ("LinalgPinvBackward0",)),
    OpEntry("pinverse", lambda a: _la_legacy().pinverse(a), np.linalg.pinv, (((3, 4),),),
            ("LinalgPinvBackward0",)),
    OpEntry("linalg_lstsq", lambda a, b: tuple(_LA.lstsq(a, b, driver="gelsd"))[:2],
            _la_lstsq_ref, (((4, 3), (4, 2)), ((2, 5, 3), (2, 5, 1))),
            ("LinalgPinvBackward0",)),
    OpEntry("linalg_solve_triangular", lambda a, b: _LA.solve_triangular(_la_upper(a), b,
                                                                         upper=True),
            lambda a, b: _la_solve_ref(_la_upper_ref(a), b),
            (((3, 3), (3, 2)), ((3, 3), (2, 3, 2)), ((2, 3, 3), (3, 1))),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("linalg_solve_triangular_right_unit",
            lambda a, b: _LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
            lambda a, b: b @ np.linalg.inv(np.tril(a, -1) + np.eye(3)), (((3, 3), (2, 3)),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("linalg_lu_factor", lambda a: _LA.lu_factor(a).LU, lambda a: _la_lu_ref(a)[3],
            (((3, 3),), ((2, 4, 3),), ((3, 5),)), ("LinalgLuFactorExBackward0",)),
    OpEntry("linalg_lu_factor_ex", lambda a: _LA.lu_factor_ex(a).LU,
            lambda a: _la_lu_ref(a)[3], (((3, 3),),), ("LinalgLuFactorExBackward0",)),
    OpEntry("linalg_lu", lambda a: tuple(_LA.lu(a))[1:], lambda a: _la_lu_ref(a)[1:3],
            (((3, 3),), ((2, 4, 3),), ((3, 5),)), ("LinalgLuBackward0",)),
    OpEntry("lu_legacy", lambda a: _la_legacy().lu(a)[0], lambda a: _la_lu_ref(a)[3],
            (((3, 3),),), ("LinalgLuFactorExBackward0",)),
    OpEntry("lu_unpack", lambda a: tuple(_la_legacy().lu_unpack(*_LA.lu_factor(a)))[1:],
            lambda a: _la_lu_ref(a)[1:3], (((4, 3),),), ("LinalgLuFactorExBackward0",)),
    OpEntry("linalg_lu_solve", lambda a, b: _LA.lu_solve(*_LA.lu_factor(_conditioned(a)), b),
            lambda a, b: _la_solve_ref(a + 4 * np.eye(3), b), (((3, 3), (3, 2)),),
            ("LinalgLuFactorExBackward0", "LinalgSolveTriangularBackward0")),
    OpEntry("linalg_lu_solve_adjoint_right",
            lambda a, b: _LA.lu_solve(*_LA.lu_factor(_conditioned(a)), b, left=False,
                                      adjoint=True),
            lambda a, b: b @ np.swapaxes(np.linalg.inv(a + 4 * np.eye(3)), -1, -2),
            (((2, 3, 3), (2, 3)),),
            ("LinalgLuFactorExBackward0", "LinalgSolveTriangularBackward0")),
    OpEntry("lu_solve_legacy",
            lambda b, a: _la_legacy().lu_solve(b, *_LA.lu_factor(_conditioned(a))),
            lambda b, a: _la_solve_ref(a + 4 * np.eye(3), b), (((3, 1), (3, 3)),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("triangular_solve", lambda b, a: tuple(_la_legacy().triangular_solve(
        b, _la_upper(a), transpose=True)), lambda b, a: (
            _la_solve_ref(_la_upper_ref(a).T, b), _la_upper_ref(a)), (((3, 2), (3, 3)),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("cholesky_solve", lambda b, a: _la_legacy().cholesky_solve(b, _la_lower(a)),
            lambda b, a: _la_solve_ref(_la_lower_ref(a) @ _la_lower_ref(a).T, b),
            (((3, 2), (3, 3)),), ("LinalgSolveTriangularBackward0",)),
    OpEntry("cholesky_inverse_upper",
            lambda a: _la_legacy().cholesky_inverse(_la_upper(a), upper=True),
            lambda a: np.linalg.inv(_la_upper_ref(a).T @ _la_upper_ref(a)), (((3, 3),),),
            ("LinalgSolveTriangularBackward0",)),
    OpEntry("linalg_cholesky_ex", lambda a: _LA.cholesky_ex(_spd(a)).L,
            lambda a: np.linalg.cholesky(_spd_ref(a)), _LA_SQUARE,
            ("LinalgCholeskyExBackward0",)),
    OpEntry("linalg_inv_ex", lambda a: _LA.inv_ex(_conditioned(a)).inverse, _inv_ref,
            _LA_SQUARE, ("LinalgInvExBackward0",)),
    OpEntry("linalg_solve_ex", lambda a, b: _LA.solve_ex(_conditioned(a), b).result,
            lambda a, b: np.linalg.solve(a + 4 * np.eye(3), b), (((3, 3), (3, 2)),),
            ("LinalgSolveExBackward0",)),
    OpEntry("linalg_cond", _LA.cond, np.linalg.cond, _LA_RECT, ("LinalgSvdBackward0",)),
    OpEntry("linalg_cond_fro", lambda a: _LA.cond(_conditioned(a), "fro"),
            lambda a: np.linalg.cond(a + 4 * np.eye(3), "fro"), _LA_SQUARE,
            ("LinalgInvExBackward0",)),
    OpEntry("linalg_householder_product", _LA.householder_product, _la_householder_ref,
            (((4, 3), (2,)), ((2, 3, 3), (2, 3))), ("MulBackward0",)),
    OpEntry("linalg_tensorinv", lambda a: _LA.tensorinv(a + _const(4 * _LA_EYE4, a), ind=1),
            lambda a: np.linalg.tensorinv(a + 4 * _LA_EYE4, ind=1), (((4, 2, 2),),),
            ("LinalgInvExBackward0",)),
    OpEntry("linalg_tensorsolve", lambda a, b: _LA.tensorsolve(a + _const(4 * _LA_EYE6, a), b),
            lambda a, b: np.linalg.tensorsolve(a + 4 * _LA_EYE6, b), (((2, 3, 6), (2, 3)),),
            ("LinalgSolveExBackward0",)),
    OpEntry("linalg_vander", lambda x: _LA.vander(x, N=4),
            lambda x: x[..., None] ** np.arange(4), (((3,),), ((2, 3),)),
            ("CumprodBackward0", "CatBackward0")),
]


# -- the rest of gpugrad.special (gpugrad.ops.special_more): incomplete gamma at shape parameters
# with closed forms, Hurwitz zeta by its written-out sum, erfcx / i0e / i1e from the math module
# and written-out series --------------------------------------------------------------------------
_IGAMMA_A = np.array([0.5, 1.0, 2.5])


def _igamma_ref(x, upper=False):
    xs = np.broadcast_to(x, np.broadcast_shapes(np.shape(x), (3,)))
    erf = _vec(math.erf)(np.sqrt(xs))
    p = np.where(_IGAMMA_A == 0.5, erf, np.where(
        _IGAMMA_A == 1.0, -np.expm1(-xs),
        erf - 2 * np.sqrt(xs / math.pi) * np.exp(-xs) * (1 + 2 * xs / 3)))
    return 1 - p if upper else p


def _zeta2(x):
    """zeta(s, 2.0) at constants s that require grad but lie off the path to x: PyTorch gives
    SpecialZetaBackward2 no derivative, so only its forward value is checked here."""
    s = _const(np.array([2.5, 3.0, 4.0]), x).requires_grad_()
    return x * _SP.zeta(s, 2.0)


_ZETA_S = np.array([2.5, 3.0, 4.0])
_IGAMMA_SHAPES = (((2, 3),), ((3,),), ((),))
OP_DB += [
    OpEntry("gammainc", lambda x: _SP.gammainc(_const(_IGAMMA_A, x), x), _igamma_ref,
            _IGAMMA_SHAPES, ("IgammaBackward0",), (0.2, 3.0)),
    OpEntry("gammaincc", lambda x: _SP.gammaincc(_const(_IGAMMA_A, x), x),
            lambda x: _igamma_ref(x, True), _IGAMMA_SHAPES, ("IgammacBackward0",), (0.2, 3.0)),
    OpEntry("zeta_number_s", lambda q: _SP.zeta(3.0, q), lambda q: _hurwitz_ref(3.0, q), UNARY,
            ("SpecialZetaBackward1",), (0.5, 3.0)),
    OpEntry("zeta_tensor_s", lambda q: _SP.zeta(_const(_ZETA_S, q), q),
            lambda q: _hurwitz_ref(_ZETA_S, q), (((2, 3),), ((3,),)),
            ("SpecialZetaBackward0",), (0.5, 3.0)),
    OpEntry("zeta_number_q", _zeta2, lambda x: x * _hurwitz_ref(_ZETA_S, np.full(3, 2.0)),
            (((2, 3),), ((3,),)), ("SpecialZetaBackward2",)),
    _unary("erfcx", _SP.erfcx, lambda x: np.exp(x * x) * _vec(math.erfc)(x),
           "SpecialErfcxBackward0", (-2.0, 3.0)),
    _unary("i0e", _SP.i0e, lambda x: np.exp(-np.abs(x)) * np.i0(x), "SpecialI0EBackward0",
           (-3.0, 3.0), (0.0,)),
    _unary("i1e", _SP.i1e, lambda x: np.exp(-np.abs(x)) * _i1_ref(x), "SpecialI1EBackward0",
           (-3.0, 3.0), (0.0,)),
]


# -- the remaining nn ops: CTC loss (every alignment enumerated), bicubic / antialiased / 3-D
# interpolation (per-axis loops), fractional max pooling (windows from fixed samples) ------------
def _cubic_w(d, a):
    d = abs(d)
    if d <= 1:
        return ((a + 2) * d - (a + 3)) * d * d + 1
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a if d < 2 else 0.0


def _bicubic_ref(x, out, align_corners):
    """Along each trailing axis: output i sums the 4 inputs around its source, border-clamped."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        parts = []
        for i in range(o):
            src = i * (n - 1) / (o - 1) if align_corners else (i + 0.5) * n / o - 0.5
            f = math.floor(src)
            parts.append(sum(_cubic_w(src - (f + k), -0.75)
                             * np.take(x, min(max(f + k, 0), n - 1), axis) for k in (-1, 0, 1, 2)))
        x = np.stack(parts, axis)
    return x


def _aa_ref(x, out, cubic):
    """Antialiased: the filter (tent, or cubic a = -0.5) stretched by n / o over the inputs,
    weights normalised per output."""
    for axis, o in zip(range(x.ndim - len(out), x.ndim), out):
        n = x.shape[axis]
        r = n / o
        stretch = max(r, 1.0)
        parts = []
        for i in range(o):
            c = r * (i + 0.5) - 0.5
            if cubic:
                ws = [_cubic_w((j - c) / stretch, -0.5) for j in range(n)]
            else:
                ws = [max(0.0, 1 - abs(j - c) / stretch) for j in range(n)]
            parts.append(sum(w * np.take(x, j, axis) for j, w in enumerate(ws)) / sum(ws))
        x = np.stack(parts, axis)
    return x


_FRAC_U = np.array([[[0.3, 0.8], [0.55, 0.1]]])


def _frac_starts(u, n, o, k):
    a = (n - k) / (o - 1)
    return [int((i + u) * a) - int(u * a) for i in range(o - 1)] + [n - k]


def _frac_ref(x, k=(2, 3), out=(3, 4)):
    y = np.empty(x.shape[:2] + out)
    for c in range(x.shape[1]):
        rows = _frac_starts(_FRAC_U[0, c, 1], x.shape[2], out[0], k[0])
        cols = _frac_starts(_FRAC_U[0, c, 0], x.shape[3], out[1], k[1])
        for i, h in enumerate(rows):
            for j, w in enumerate(cols):
                y[0, c, i, j] = x[0, c, h:h + k[0], w:w + k[1]].max()
    return y


_CTC_TARGETS, _CTC_IN, _CTC_TL = np.array([[1, 1], [2, 0]]), np.array([4, 3]), np.array([2, 1])


def _ctc_collapse(path, blank=0):
    out, prev = [], None
    for c in path:
        if c != prev and c != blank:
            out.append(c)
        prev = c
    return out


def _ctc_ref(x, reduction="mean"):
    import itertools
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    nll = []
    for n in range(lp.shape[1]):
        target = list(_CTC_TARGETS[n, :_CTC_TL[n]])
        total = sum(np.exp(sum(lp[t, n, c] for t, c in enumerate(path)))
                    for path in itertools.product(range(lp.shape[2]), repeat=_CTC_IN[n])
                    if _ctc_collapse(path) == target)
        nll.append(-np.log(total))
    nll = np.array(nll)
    return {"none": nll, "sum": nll.sum(), "mean": (nll / np.maximum(_CTC_TL, 1)).mean()}[
        reduction]


def _ctc(x, reduction="mean"):
    return _FN.ctc_loss(_FN.log_softmax(x, 2), _const(_CTC_TARGETS, x), _const(_CTC_IN, x),
                        _const(_CTC_TL, x), reduction=reduction)


OP_DB += [
    OpEntry("ctc_loss_mean", _ctc, _ctc_ref, (((4, 2, 3),),),
            ("CtcLossBackward0", "LogSoftmaxBackward0"), double_backward=False),
    OpEntry("ctc_loss_none", lambda x: _ctc(x, "none"), lambda x: _ctc_ref(x, "none"),
            (((4, 2, 3),),), ("CtcLossBackward0",), double_backward=False),
    OpEntry("interpolate_bicubic", lambda x: _FN.interpolate(x, (5, 3), mode="bicubic"),
            lambda x: _bicubic_ref(x, (5, 3), False), (((2, 2, 3, 4),),),
            ("UpsampleBicubic2DBackward0",)),
    OpEntry("interpolate_bicubic_align_corners",
            lambda x: _FN.interpolate(x, (2, 7), mode="bicubic", align_corners=True),
            lambda x: _bicubic_ref(x, (2, 7), True), (((1, 2, 3, 4),),),
            ("UpsampleBicubic2DBackward0",)),
    OpEntry("interpolate_bilinear_antialias",
            lambda x: _FN.interpolate(x, (3, 2), mode="bilinear", antialias=True),
            lambda x: _aa_ref(x, (3, 2), False), (((1, 2, 7, 5),),),
            ("UpsampleBilinear2DAaBackward0",)),
    OpEntry("interpolate_bicubic_antialias",
            lambda x: _FN.interpolate(x, (3, 6), mode="bicubic", antialias=True),
            lambda x: _aa_ref(x, (3, 6), True), (((1, 2, 8, 4),),),
            ("UpsampleBicubic2DAaBackward0",)),
    OpEntry("interpolate_trilinear", lambda x: _FN.interpolate(x, (3, 4, 2), mode="trilinear"),
            lambda x: _linear_ref(x, (3, 4, 2), False), (((1, 2, 2, 3, 4),),),
            ("UpsampleTrilinear3DBackward0",)),
    OpEntry("interpolate_nearest3d", lambda x: _FN.interpolate(x, (3, 5, 2)),
            lambda x: _nearest_ref(x, (3, 5, 2)), (((1, 2, 2, 3, 4),),),
            ("UpsampleNearest3DBackward0",)),
    OpEntry("interpolate_nearest_exact3d",
            lambda x: _FN.interpolate(x, (3, 5, 2), mode="nearest-exact"),
            lambda x: _nearest_ref(x, (3, 5, 2), exact=True), (((1, 2, 2, 3, 4),),),
            ("UpsampleNearestExact3DBackward0",)),
    OpEntry("fractional_max_pool2d",
            lambda x: _FN.fractional_max_pool2d(x, (2, 3), (3, 4),
                                                _random_samples=_const(_FRAC_U, x)),
            _frac_ref, (((1, 2, 6, 8),),), ("FractionalMaxPool2DBackward0",)),
]


# -- 3-D fractional max pooling (windows from fixed samples u_t, u_h, u_w per channel) -----------
_FRAC3_U = np.array([[[0.3, 0.8, 0.45], [0.55, 0.1, 0.9]]])


def _frac3_ref(x, k=(2, 2, 3), out=(2, 3, 2)):
    y = np.empty(x.shape[:2] + out)
    for c in range(x.shape[1]):
        ts, hs, ws = (_frac_starts(_FRAC3_U[0, c, a], x.shape[2 + a], out[a], k[a])
                      for a in range(3))
        for i, t in enumerate(ts):
            for j, h in enumerate(hs):
                for m, w in enumerate(ws):
                    y[0, c, i, j, m] = x[0, c, t:t + k[0], h:h + k[1], w:w + k[2]].max()
    return y


OP_DB += [
    OpEntry("fractional_max_pool3d",
            lambda x: _FN.fractional_max_pool3d(x, (2, 2, 3), (2, 3, 2),
                                                _random_samples=_const(_FRAC3_U, x)),
            _frac3_ref, (((1, 2, 4, 5, 6),),), ("FractionalMaxPool3DBackward0",)),
]


# -- amax/amin (ties share the gradient), nanmedian, var_mean/std_mean (one node, two outputs) ---
OP_DB += [
    OpEntry("amax_dims", lambda x: x.amax((0, 2), keepdim=True),
            lambda x: x.max(axis=(0, 2), keepdims=True), (((2, 3, 2),),), ("AmaxBackward0",)),
    OpEntry("amin_all", gpugrad.amin, np.min, (((2, 3),), ((),)), ("AminBackward0",)),
    OpEntry("nanmedian", gpugrad.nanmedian, lambda x: np.sort(x.ravel())[(x.size - 1) // 2],
            (((2, 3),),), ("NanmedianBackward0",)),
    OpEntry("nanmedian_dim", lambda x: gpugrad.nanmedian(x, 1)[0],
            lambda x: np.sort(x, 1)[:, (x.shape[1] - 1) // 2], (((3, 4),),),
            ("NanmedianBackward1",)),
    OpEntry("var_mean", lambda x: tuple(gpugrad.var_mean(x, 1, keepdim=True)),
            lambda x: (x.var(1, ddof=1, keepdims=True), x.mean(1, keepdims=True)), ROWS,
            ("VarMeanBackward0",)),
    OpEntry("std_mean", lambda x: tuple(gpugrad.std_mean(x, correction=0)),
            lambda x: (x.std(), x.mean()), ROWS, ("StdMeanBackward0",)),
]
