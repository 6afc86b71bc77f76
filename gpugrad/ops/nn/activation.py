"""Activation functions: sigmoid, relu, leaky_relu, gelu, silu, softplus.

Each op is one class, forward and backward side by side; on plain backward their gradients run
as fused kernels (``gpugrad/kernels.py``, CUDA sources in ``kernels/``), under ``create_graph``
the differentiable formula beside each kernel call runs instead.
"""
from __future__ import annotations

import math

import numpy as np

from ... import kernels
from ..._exports import export, method_as_function, tensor_method, torch_function
from ...tensor_inplace import inplace
from .._op import Op, direct
from ..pointwise.arithmetic import _float


class SigmoidBackward0(Op):
    """y = 1 / (1 + exp(-x))"""
    elementwise = True
    splits_itself = True   # kernels.sigmoid: compiled and threaded, or split by its dispatch
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return kernels.sigmoid(_float(xp, x))   # one pass on the GPU

    def backward(self, F, gy, y):
        if F.fast:
            return kernels.sigmoid_bwd(y, gy)
        return gy * y * (1 - y)


class ReluBackward0(Op):
    """y = max(x, 0)   (NOTE: gradient 0 at x == 0 and 1 at NaN, as PyTorch: the gradient is
    cut where y <= 0, which NaN is not)"""
    elementwise = True
    cpu_ufunc = staticmethod(lambda x, out: np.maximum(x, 0, out=out))   # see Op.cpu_ufunc
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        if xp is not np and (y := kernels.lean_unary(kernels.relu, x)) is not None:
            return y
        return xp.maximum(x, 0, dtype=x.dtype) if x.dtype.kind == "f" else xp.maximum(x, 0)

    def backward(self, F, gy, y):
        if F.fast:
            return kernels.relu_bwd(y, gy)
        return gy * (y != 0)   # y is > 0, 0 or NaN: one comparison


class LeakyReluBackward0(Op):
    """y = x if x > 0 else slope * x"""
    elementwise = True
    __slots__ = ("negative_slope",)
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, negative_slope=0.01):
        self.negative_slope = negative_slope
        if 0 <= negative_slope <= 1:  # branch-free: max(x, slope x)
            return xp.maximum(x, x * x.dtype.type(negative_slope))
        return xp.where(x > 0, x, x * negative_slope)

    def backward(self, F, gy, x):
        if F.fast:
            return kernels.leaky_relu_bwd(x, gy, float(self.negative_slope))
        return F.where(x > 0, gy, gy * self.negative_slope)


class GeluBackward0(Op):
    """y = x * Phi(x)   (approximate='tanh': 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))))"""
    elementwise = True
    splits_itself = True   # kernels.gelu_cdf threads itself; the forward keeps Phi whole
    __slots__ = ("approximate", "cdf")
    saves = (0,)
    saved_names = ("self",)
    temps = ("cdf",)   # Phi(x) on the CPU, where it is the costly half of the backward

    def forward(self, xp, x, approximate="none"):
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate argument must be either none or tanh, got "
                             f"{approximate}")
        self.approximate = approximate
        x = _float(xp, x)
        if approximate == "tanh":
            return 0.5 * x * (1 + xp.tanh(_SQRT_2_PI * (x + 0.044715 * x * x * x)))
        cdf = kernels.gelu_cdf(x)
        if cdf.__class__ is np.ndarray and cdf.ndim:
            self.cdf = cdf
            return cdf * x
        cdf *= x
        return cdf

    def backward(self, F, gy, x):
        if F.fast:
            cdf = getattr(self, "cdf", None)
            if cdf is not None:   # gx = gy (Phi(x) + x phi(x)), Phi kept from the forward
                return kernels.gelu_bwd_cdf(x, cdf, gy)
            return kernels.gelu_bwd(x, gy, self.approximate == "tanh")
        if self.approximate == "tanh":
            inner = _SQRT_2_PI * (x + 0.044715 * x * x * x)
            t = F.tanh(inner)
            dinner = _SQRT_2_PI * (1 + 3 * 0.044715 * x * x)
            return gy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dinner)
        cdf = 0.5 * (1 + F.erf(x * _INV_SQRT2))
        pdf = F.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return gy * (cdf + x * pdf)


_SQRT_2_PI = math.sqrt(2 / math.pi)
_INV_SQRT2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


class SiluBackward0(Op):
    """y = x * sigmoid(x)"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        x = _float(xp, x)
        return x * (0.5 * xp.tanh(0.5 * x) + 0.5)

    def backward(self, F, gy, x):
        if F.fast:
            return kernels.silu_bwd(x, gy)
        s = F.sigmoid(x)
        return gy * s * (1 + x * (1 - s))


class SoftplusBackward0(Op):
    """y = log(1 + exp(beta x)) / beta; linear above ``threshold``"""
    elementwise = True
    __slots__ = ("beta", "threshold")
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, beta=1.0, threshold=20.0):
        self.beta, self.threshold = beta, threshold
        x = _float(xp, x)
        bx = beta * x
        return xp.where(bx > threshold, x, xp.logaddexp(0, bx) / beta).astype(x.dtype, copy=False)

    def backward(self, F, gy, x):
        bx = x * self.beta
        s = F.sigmoid(bx) if not F.fast else 0.5 * F.tanh(0.5 * bx) + 0.5
        return F.where(bx > self.threshold, gy, gy * s)


class EluBackward0(Op):
    """y = x where x > 0 else alpha (exp(x) - 1)"""
    elementwise = True
    __slots__ = ("alpha",)
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, alpha=1.0):
        self.alpha = alpha
        x = _float(xp, x)
        return xp.where(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0))).astype(x.dtype, copy=False)

    def backward(self, F, gy, x):
        return F.where(x > 0, gy, gy * (F.exp(x) * self.alpha))


class HardtanhBackward0(Op):
    """y = clamp(x, min_val, max_val)   (gradient 1 strictly inside, as PyTorch)"""
    elementwise = True
    __slots__ = ("lo", "hi")
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, min_val=-1.0, max_val=1.0):
        self.lo, self.hi = min_val, max_val
        return xp.clip(x, min_val, max_val)

    def backward(self, F, gy, x):
        return F.where((x > self.lo) & (x < self.hi), gy, gy * 0)


class MishBackward0(Op):
    """y = x tanh(softplus(x))"""
    elementwise = True
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x):
        x = _float(xp, x)
        return x * xp.tanh(xp.logaddexp(0, x)).astype(x.dtype, copy=False)

    def backward(self, F, gy, x):
        t = F.tanh(F.maximum(x, 0) + F.log(1 + F.exp(-F.abs(x))))   # tanh(softplus(x))
        s = 0.5 * F.tanh(0.5 * x) + 0.5   # sigmoid(x), in both namespaces
        return gy * (t + x * s * (1 - t * t))


# -- public functions ---------------------------------------------------------------------------
sigmoid = direct(SigmoidBackward0, 1, "sigmoid")
export("sigmoid", method=True)(sigmoid)


relu = direct(ReluBackward0, 1, "relu")
export("relu", method=True)(relu)


silu = direct(SiluBackward0, 1, "silu")


def leaky_relu(input, negative_slope=0.01):
    return LeakyReluBackward0.apply(input, negative_slope=negative_slope)


def gelu(input, approximate="none"):
    return GeluBackward0.apply(input, approximate=approximate)


def softplus(input, beta=1.0, threshold=20.0):
    return SoftplusBackward0.apply(input, beta=beta, threshold=threshold)


def elu(input, alpha=1.0):
    return EluBackward0.apply(input, alpha=alpha)


def hardtanh(input, min_val=-1.0, max_val=1.0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return HardtanhBackward0.apply(input, min_val=min_val, max_val=max_val)


def mish(input):
    return MishBackward0.apply(input)


OPS = [SigmoidBackward0, ReluBackward0, LeakyReluBackward0, GeluBackward0, SiluBackward0,
       SoftplusBackward0, EluBackward0, HardtanhBackward0, MishBackward0]


# -- Tensor methods: in-place forms, and the methods and top-level in-place functions that are
# nn.functional's --------------------------------------------------------------------------------
tensor_method("relu_")(lambda s: inplace(s, relu))
tensor_method("sigmoid_")(lambda s: inplace(s, sigmoid))
method_as_function("relu_", "sigmoid_")


def _functional(name):
    """``t.<name>(...)``: nn.functional's <name> (loaded on first use)."""
    def method(self, *args, **kw):
        from ...nn import functional as F  # layering: Tensor.hardshrink / prelu are F's functions
        return getattr(F, name)(self, *args, **kw)
    method.__name__ = name
    return method


tensor_method("hardshrink")(_functional("hardshrink"))
tensor_method("prelu")(_functional("prelu"))


def _nn(name):
    """``torch.<name>_(input, ...)``: nn.functional's <name> with inplace=True."""
    def fn(input, *args, **kw):
        from ...nn import functional as F  # layering: torch.relu_ ... are F's, in place
        return getattr(F, name)(input, *args, inplace=True, **kw)
    fn.__name__ = name + "_"
    return fn


torch_function("dropout_")(lambda input, p=0.5, train=True: _nn("dropout")(input, p, train))
torch_function("alpha_dropout_")(
    lambda input, p=0.5, train=False: _nn("alpha_dropout")(input, p, train))
torch_function("feature_alpha_dropout_")(
    lambda input, p=0.5, train=False: _nn("feature_alpha_dropout")(input, p, train))
torch_function("celu_")(_nn("celu"))
torch_function("selu_")(_nn("selu"))
torch_function("rrelu_")(_nn("rrelu"))
torch_function("threshold_")(_nn("threshold"))
