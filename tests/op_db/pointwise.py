"""Op database entries of the pointwise ops: arithmetic, transcendental functions and
activations, binary functions (hypot, xlogy, fmod ...), clamps, inverse hyperbolic functions and
the in-place forms."""
from __future__ import annotations

import math

import numpy as np
from op_db.entry import (
    COND,
    ROWS,
    UNARY,
    OpEntry,
    _binary,
    _const,
    _in_place,
    _specials,
    _specials_ref,
    _unary,
)

import gpugrad
from gpugrad.ops.nn import activation as act


def _where(x, y):
    return gpugrad.where(_const(COND, x), x, y)


_erf = np.vectorize(math.erf)


def _softplus_ref(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


def _gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


ARITHMETIC = [
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
]


TRANSCENDENTAL = [
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
]


BINARY_FUNCTIONS = [
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
]


CLAMP_FUNCTIONS = [
    _unary("clamp_min_fn", lambda x: gpugrad.clamp_min(x, 0.5), lambda x: np.maximum(x, 0.5),
           "ClampBackward1", avoid=(0.5,)),
    _unary("clamp_max_method", lambda x: x.clamp_max(-0.5), lambda x: np.minimum(x, -0.5),
           "ClampBackward1", avoid=(-0.5,)),
    _unary("clamp_min_", _in_place(lambda x: x.clamp_min_(0.5)), lambda x: np.maximum(x, 0.5),
           "ClampBackward1", avoid=(0.5,)),
]


IN_PLACE = [
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


# -- inverse hyperbolic functions (ops/pointwise/unary.py) -----------------------------------------
INVERSE_HYPERBOLIC = [
    _unary("acosh", gpugrad.acosh, np.arccosh, "AcoshBackward0", (1.2, 3.0)),
    _unary("arccosh_method", lambda x: x.arccosh(), np.arccosh, "AcoshBackward0", (1.2, 3.0)),
    _unary("asinh", gpugrad.asinh, np.arcsinh, "AsinhBackward0"),
    _unary("arcsinh_method", lambda x: x.arcsinh(), np.arcsinh, "AsinhBackward0"),
    _unary("atanh", gpugrad.atanh, np.arctanh, "AtanhBackward0", (-0.8, 0.8)),
    _unary("arctanh_method", lambda x: x.arctanh(), np.arctanh, "AtanhBackward0", (-0.8, 0.8)),
]
