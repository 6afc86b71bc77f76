"""Op database entries of the reductions: sums, means, norms, softmax, scans (cumprod,
logcumsumexp), nan-reductions, kthvalue / aminmax, amax / amin with ties and var_mean."""
from __future__ import annotations

import math

import numpy as np
from op_db.entry import (
    COND,
    ROWS,
    OpEntry,
    _const,
    _logsumexp_ref,
    _norm_ref,
    _specials,
    _specials_ref,
    _unary,
)

import gpugrad


def _var_ref(x, axis=None, ddof=1, keepdims=False):
    return np.var(x, axis=axis, ddof=ddof, keepdims=keepdims)


def _softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


REDUCTIONS = [
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
]


# -- scans, differences and nan-reductions -----------------------------------------------------
X_ZEROS = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])   # x * X_ZEROS has exact zeros


NANS = np.where(COND, 0.0, np.nan)


def _cumprod_zeros(x):
    return gpugrad.cumprod(x * _const(X_ZEROS, x), 1)


SCANS = [
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
]


NAN_REDUCTIONS = [
    OpEntry("nansum", lambda x: gpugrad.nansum(_specials(x, NANS)),
            lambda x: np.nansum(_specials_ref(x, NANS)), ROWS, ("NansumBackward0",)),
    _unary("nansum_dim", lambda x: x.nansum(1, keepdim=True), lambda x: x.sum(1, keepdims=True),
           "NansumBackward0", shapes=ROWS),
    OpEntry("nanmean", lambda x: gpugrad.nanmean(_specials(x, NANS), 1),
            lambda x: np.nanmean(_specials_ref(x, NANS), 1), ROWS,
            ("NansumBackward0", "DivBackward0")),
]


def _kth_ref(x, k, dim):
    return np.sort(x, axis=dim).take(k - 1, axis=dim)


KTHVALUE_AMINMAX = [
    OpEntry("kthvalue", lambda x: gpugrad.kthvalue(x, 2, 1)[0], lambda x: _kth_ref(x, 2, 1),
            (((3, 4),),), ("GatherBackward0",)),
    OpEntry("aminmax", lambda x: tuple(gpugrad.aminmax(x, dim=0)),
            lambda x: (x.min(axis=0), x.max(axis=0)), (((3, 4),),), ()),
]


# -- amax/amin (ties share the gradient), nanmedian, var_mean/std_mean (one node, two outputs) ---
REDUCTIONS_WITH_TIES = [
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
