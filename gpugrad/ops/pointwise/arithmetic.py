"""Elementwise arithmetic: add, sub, rsub, mul, div, neg, reciprocal, pow, square, positive,
float_power; lerp, addcmul, addcdiv; fmod, remainder, floor_divide, and the integer-arithmetic
helpers the other elementwise ops share (PyTorch's rounding of integer division and powers).

Each op is one class: forward and backward side by side. Backward formulas read only what the
op declares it saves; on plain backward the hot ones run as fused kernels.
"""
from __future__ import annotations

import math

import numpy as np

from ... import kernels
from ..._arguments import expect_operand, expect_tensors, is_operand, type_name
from ..._backend import xp_of
from ..._exports import export, method_as_function, tensor_method
from ..._promotion import result_type
from ...tensor import DEFAULT, Tensor
from ...tensor_inplace import inplace
from .._op import Op, broadcast_error, direct
from ..bool_rules import check_neg, check_rounding_mode, check_sub
from ..indexing.gather import _data


def _float(xp, x):
    """Integer and bool inputs of floating-point functions compute in the default dtype."""
    if getattr(x, "dtype", None) is not None and x.dtype.kind in "iub":
        return x.astype(DEFAULT.float)
    return x


def _needs(op, i):
    return op.next_functions[i][0] is not None


# -- arithmetic ---------------------------------------------------------------------------------
class AddBackward0(Op):
    """z = x + alpha * y"""
    elementwise = True
    cpu_ufunc = np.add   # the forward on floats (see Op.cpu_ufunc)
    __slots__ = ("alpha",)
    broadcasts = True

    def forward(self, xp, x, y, alpha=1):
        self.alpha = alpha
        if xp is not np and alpha == 1 and (z := kernels.lean_binary(
                x, y, kernels.add, kernels.add_scalar)) is not None:
            return z
        try:
            return x + y if alpha == 1 else x + alpha * y
        except OverflowError:   # int32 tensor + 2**40: the number wraps, as in PyTorch
            return AddBackward0.forward(self, xp, x, wrap_int(x, y), alpha)

    def backward(self, F, gz):
        if self.alpha == 1 or self.next_functions[1][0] is None:
            return gz, gz
        return gz, gz * self.alpha

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class SubBackward0(Op):
    """z = x - alpha * y"""
    elementwise = True
    cpu_ufunc = np.subtract   # the forward on floats (see Op.cpu_ufunc)
    __slots__ = ("alpha",)
    broadcasts = True

    def forward(self, xp, x, y, alpha=1):
        self.alpha = alpha
        check_sub(x, y)
        if xp is not np and alpha == 1 and y.__class__ in (float, int) and (
                z := kernels.lean_binary(x, -y, None, kernels.add_scalar)) is not None:
            return z   # x - s == x + -s, exactly
        try:
            return x - y if alpha == 1 else x - alpha * y
        except OverflowError:
            return SubBackward0.forward(self, xp, x, wrap_int(x, y), alpha)

    def backward(self, F, gz):
        if self.next_functions[1][0] is None:
            return gz, None
        return gz, (-gz if self.alpha == 1 else gz * -self.alpha)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class RsubBackward1(Op):
    """z = y - x   (``2 - x``: the tensor comes first, as in PyTorch's rsub)"""
    elementwise = True
    broadcasts = True

    def forward(self, xp, x, y=None, other=None):
        # ``other``: a number (``2 - x``), which, as in PyTorch, gets no edge
        check_sub(other if y is None else y, x)
        try:
            return (other if y is None else y) - x
        except OverflowError:
            return wrap_int(x, other if y is None else y) - x

    def backward(self, F, gz):
        if len(self.next_functions) == 1:
            return -gz
        return -gz, (gz if self.next_functions[1][0] is not None else None)


class MulBackward0(Op):
    """z = x * y"""
    elementwise = True
    cpu_ufunc = np.multiply   # the forward on floats (see Op.cpu_ufunc)
    saves = (0, 1)
    reads_for = ((1,), (0,))
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        if xp is not np and (z := kernels.lean_binary(
                x, y, kernels.mul, kernels.mul_scalar)) is not None:
            return z
        try:
            return x * y
        except OverflowError:
            return x * wrap_int(x, y)

    def backward(self, F, gz, x, y):
        (nx, _), (ny, _) = self.next_functions
        if nx is not None and ny is not None:
            if F.fast and x.shape == y.shape == gz.shape:
                return kernels.mul_bwd(x, y, gz)
            return gz * y, gz * x
        return (gz * y if nx is not None else None), (gz * x if ny is not None else None)

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class DivBackward0(Op):
    """z = x / y"""
    elementwise = True
    cpu_ufunc = np.true_divide   # the forward on floats (see Op.cpu_ufunc)
    saves = (0, 1)
    reads_for = ((1,), (0, 1))
    saved_names = ("self", "other")
    broadcasts = True

    def forward(self, xp, x, y):
        try:
            z = x / y
        except OverflowError:   # computed in floating point: the number does not wrap
            z = x / float(y)
        return z.astype(DEFAULT.float) if z.dtype == np.float64 and _ints(x, y) else z

    def backward(self, F, gz, x, y):
        if F.fast and _needs(self, 0) and _needs(self, 1) and x.shape == y.shape == gz.shape:
            return kernels.div_bwd(x, y, gz)
        gx = gz / y if _needs(self, 0) else None
        gy = -gz * x / (y * y) if _needs(self, 1) else None
        return gx, gy

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


def _ints(*arrays):
    """True when no input is floating (so a float64 result came from int true division)."""
    return all(getattr(a, "dtype", np.dtype(int)).kind in "iub" or isinstance(a, (int, bool))
               for a in arrays)


class NegBackward0(Op):
    """y = -x"""
    elementwise = True
    cpu_ufunc = np.negative   # the forward on floats (see Op.cpu_ufunc)

    def forward(self, xp, x):
        check_neg(x)
        return -x

    def backward(self, F, gy):
        return -gy


class ReciprocalBackward0(Op):
    """y = 1 / x"""
    elementwise = True
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x):
        return 1 / _float(xp, x)

    def backward(self, F, gy, y):
        return -gy * y * y


class PowBackward0(Op):
    """y = x ** p   (p a number)"""
    elementwise = True
    __slots__ = ("exponent",)
    saves = (0,)
    saved_names = ("self",)

    def forward(self, xp, x, exponent):
        self.exponent = exponent
        if x.dtype.kind in "biu":   # integer arithmetic unless the exponent is a float
            return (int_power(xp, x, exponent) if isinstance(exponent, int) else
                    x.astype(DEFAULT.float) ** exponent)
        return x * x if exponent == 2 else x ** exponent

    def backward(self, F, gy, x):
        p = self.exponent
        if p == 0:
            return gy * 0
        if F.fast:
            return kernels.pow_bwd(x, gy, float(p))
        return gy * (p * x ** (p - 1)) if p != 2 else gy * (2 * x)


class PowBackward1(Op):
    """z = x ** y   (both tensors)"""
    elementwise = True
    saves = (0, 1)
    saves_output = True
    saved_names = ("self", "exponent", "result")
    broadcasts = True

    def forward(self, xp, x, y):
        if x.dtype.kind in "biu":
            if y.dtype.kind in "biu":
                return int_power(xp, x, y)
            x = x.astype(DEFAULT.float)
        return x ** y

    def backward(self, F, gz, x, y, z):
        gx = gz * y * x ** (y - 1) if _needs(self, 0) else None
        # NOTE: d/dy x**y = x**y log x; where x == 0 and y >= 0 the limit is 0, not nan
        gy = None
        if _needs(self, 1):
            safe = F.where(x == 0, 1, x) if F.fast else F.where(x == 0, F.ones_like(x), x)
            gy = gz * z * F.log(safe)
        return gx, gy

    def bad_input(self, e, arrays, kw):
        return broadcast_error(e, arrays)


class PowBackward2(Op):
    """z = b ** x   (b a number)"""
    elementwise = True
    __slots__ = ("base",)
    saves_output = True
    saved_names = ("result",)

    def forward(self, xp, x, base):
        self.base = base
        if x.dtype.kind in "biu":
            if isinstance(base, int):
                return int_power(xp, base, x)
            x = x.astype(DEFAULT.float)
        return base ** x

    def backward(self, F, gz, z):
        return gz * z * math.log(self.base) if self.base > 0 else gz * z * math.nan


# -- public functions ---------------------------------------------------------------------------
def _t(x):
    return x if isinstance(x, Tensor) else Tensor._make(np.asarray(x))


@export("add", method=True)
def add(input, other, *, alpha=1):
    return AddBackward0.apply(input, other, alpha=alpha)


@export("sub", "subtract", method=True)
def sub(input, other, *, alpha=1):
    return SubBackward0.apply(input, other, alpha=alpha)


subtract = sub


@export("rsub")
def rsub(input, other, *, alpha=1):
    return RsubBackward1.apply(input, other) if alpha == 1 else sub(other * alpha, input)


@export("mul", "multiply", method=True)
def mul(input, other):
    return MulBackward0.apply(input, other)


multiply = mul


@export("div", "divide", "true_divide", method=True)
def div(input, other, *, rounding_mode=None):
    check_rounding_mode(rounding_mode)
    if rounding_mode is None:
        return DivBackward0.apply(input, other)
    return rounded_div(input, other, rounding_mode)


divide = true_divide = div


@export("neg", "negative", method=True)
def neg(input):
    return NegBackward0.apply(input)


negative = neg


@export("reciprocal", method=True)
def reciprocal(input):
    return ReciprocalBackward0.apply(input)


@export("pow", method=True)
def pow(input, exponent):
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            return PowBackward1.apply(input, exponent)
        if exponent.__class__ is not int and exponent.__class__ is not float:
            expect_operand(exponent, "pow", "exponent")
        return PowBackward0.apply(input, exponent=exponent)
    expect_operand(input, "pow", "self")
    return PowBackward2.apply(exponent, base=input)


def _pow_operator(s, o):
    """``s ** o``: a number or a tensor, else Python's TypeError for the operator."""
    if o.__class__ is not int and o.__class__ is not float and not isinstance(o, Tensor) \
            and not is_operand(o):
        raise TypeError(f"unsupported operand type(s) for ** or pow(): 'Tensor' and "
                        f"'{type_name(o)}'")
    return pow(s, o)


@export("square", method=True)
def square(input):
    return PowBackward0.apply(input, exponent=2)


@export("positive", method=True)
def positive(input):
    """The input itself (``+x``)."""
    if input.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


class LerpBackward0(Op):
    """y = start + weight (end - start), weight a number"""
    elementwise = True
    __slots__ = ("weight",)
    broadcasts = True

    def forward(self, xp, start, end, weight=0.5):
        self.weight = weight
        return start + weight * (end - start)

    def backward(self, F, gy):
        w = self.weight
        return gy * (1 - w), gy * w


class LerpBackward1(Op):
    """y = start + weight (end - start), weight a tensor"""
    elementwise = True
    saves = (0, 1, 2)
    saved_names = ("self", "end", "weight")
    broadcasts = True

    def forward(self, xp, start, end, weight):
        return start + weight * (end - start)

    def backward(self, F, gy, start, end, weight):
        need = self.needs_input_grad
        return ((gy * (1 - weight)) if need[0] else None, (gy * weight) if need[1] else None,
                (gy * (end - start)) if need[2] else None)


class AddcmulBackward0(Op):
    """y = x + value t1 t2"""
    elementwise = True
    __slots__ = ("value",)
    saves = (1, 2)
    saved_names = ("tensor1", "tensor2")
    broadcasts = True

    def forward(self, xp, x, t1, t2, value=1):
        self.value = value
        return x + value * t1 * t2

    def backward(self, F, gy, t1, t2):
        need, v = self.needs_input_grad, self.value
        return (gy if need[0] else None, (gy * v * t2) if need[1] else None,
                (gy * v * t1) if need[2] else None)


class AddcdivBackward0(Op):
    """y = x + value t1 / t2"""
    elementwise = True
    __slots__ = ("value",)
    saves = (1, 2)
    saved_names = ("tensor1", "tensor2")
    broadcasts = True

    def forward(self, xp, x, t1, t2, value=1):
        self.value = value
        return x + value * t1 / t2

    def backward(self, F, gy, t1, t2):
        need, v = self.needs_input_grad, self.value
        return (gy if need[0] else None, (gy * v / t2) if need[1] else None,
                (-gy * v * t1 / (t2 * t2)) if need[2] else None)


@export("lerp", method=True)
def lerp(input, end, weight):
    if end.__class__ is not Tensor:
        expect_tensors("lerp", ("input", "end"), input, end)
    if isinstance(weight, Tensor):
        return LerpBackward1.apply(input, end, weight)
    return LerpBackward0.apply(input, end, weight=float(expect_operand(weight, "lerp", "weight")))


@export("addcmul", method=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    return AddcmulBackward0.apply(input, tensor1, tensor2, value=value)


@export("addcdiv", method=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    if _data(tensor1).dtype.kind in "iub" and _data(tensor2).dtype.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return AddcdivBackward0.apply(input, tensor1, tensor2, value=value)


class FmodBackward0(Op):
    """y = a - trunc(a / b) b, b a number"""
    elementwise = True
    broadcasts = True

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "fmod")
        return xp.fmod(a, b)

    def backward(self, F, gy):
        return gy, None


def _raw(a):
    return a._data if isinstance(a, Tensor) else a


class FmodBackward1(Op):
    """y = a - trunc(a / b) b"""
    saves = (0, 1)
    reads_for = ((1,), (1,))
    saved_names = ("self", "other")
    broadcasts = True
    rounding = "trunc"

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "fmod")
        return xp.fmod(a, b)

    def backward(self, F, gy, a, b):
        gb = None
        if self.needs_input_grad[1]:   # the quotient is piecewise constant
            a, b = _raw(a), _raw(b)
            gb = -gy * getattr(xp_of(a), self.rounding)(a / b)
        return gy, gb


class RemainderBackward0(FmodBackward0):
    """y = a - floor(a / b) b, b a number"""
    elementwise = True

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "remainder")
        return xp.remainder(a, b)


class RemainderBackward1(FmodBackward1):
    """y = a - floor(a / b) b"""
    rounding = "floor"

    def forward(self, xp, a, b):
        check_divisor(xp, a, b, "remainder")
        return xp.remainder(a, b)


@export("fmod", method=True, inplace=True)
def fmod(input, other):
    if isinstance(other, Tensor):
        return FmodBackward1.apply(input, other)
    return FmodBackward0.apply(input, other)


@export("remainder", method=("remainder", "__mod__"), inplace=("remainder_",))
def remainder(input, other):
    if not isinstance(input, Tensor):   # number % tensor: not differentiable (as in PyTorch)
        a = _raw(other)
        check_divisor(xp_of(a), input, a, "remainder")
        return Tensor._make(xp_of(a).asarray(xp_of(a).remainder(input, a)))
    if isinstance(other, Tensor):
        return RemainderBackward1.apply(input, other)
    return RemainderBackward0.apply(input, other)


# -- integer arithmetic as PyTorch does it --------------------------------------------------------
def integral(v) -> bool:
    return v.dtype.kind in "iub" if hasattr(v, "dtype") else isinstance(v, int)


def check_divisor(xp, a, b, name):
    """Integer division by zero raises on the CPU, as in PyTorch (on CUDA it is undefined, and
    checking would cost a device sync); bool by bool is not implemented."""
    if integral(a) and integral(b):
        if _is_bool(a) and _is_bool(b):
            raise NotImplementedError(f"\"{name}_{'cpu' if xp is np else 'cuda'}\" not "
                                      f"implemented for 'Bool'")
        if xp is np and not np.all(b):
            raise RuntimeError("ZeroDivisionError")


def _is_bool(v):
    return v.dtype.kind == "b" if hasattr(v, "dtype") else isinstance(v, bool)


def rounded_div(input, other, rounding_mode):
    """div(..., rounding_mode='floor' | 'trunc'): integers stay integers (and exact); floats
    divide then round, with zero gradient almost everywhere."""
    a, b = _raw(input), _raw(other)
    if integral(a) and integral(b):
        xp = xp_of(a if hasattr(a, "dtype") else b)
        check_divisor(xp, a, b, "div_" + rounding_mode)
        if rounding_mode == "floor":
            return Tensor._make(xp.asarray(xp.floor_divide(a, b)))
        q = xp.floor_divide(xp.abs(a), xp.abs(b))
        return Tensor._make(xp.asarray(xp.where((xp.asarray(a) < 0) != (xp.asarray(b) < 0),
                                                -q, q)))
    from ...autograd.grad_mode import no_grad
    with no_grad():
        q = DivBackward0.apply(input, other)
        f = np.floor if rounding_mode == "floor" else np.trunc
        return Tensor._make(f(q._data).astype(q._data.dtype))


def wrap_int(a, v):
    """A Python int out of range for the integer array ``a``, wrapped into ``a``'s dtype as
    PyTorch casts it (two's complement: an int32 tensor + 2**40 adds 0)."""
    if not (isinstance(v, int) and a.dtype.kind in "iu" and -2 ** 63 <= v < 2 ** 64):
        raise OverflowError("int too big to convert")
    bits = 8 * a.dtype.itemsize
    v %= 1 << bits
    return v - (1 << bits) if a.dtype.kind == "i" and v >> (bits - 1) else v


def int_power(xp, x, y):
    """x ** y, both integer or bool (arrays, or one a number): PyTorch's result type and
    integer arithmetic. A negative power of an integer truncates to 0, except for the bases 1
    and -1; a negative number exponent is an error, as in PyTorch."""
    rt = result_type([x, y])
    if not hasattr(y, "dtype"):
        if rt.kind == "b":
            return x if y else xp.ones_like(x)
        if y < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        return x.astype(rt, copy=False) ** y
    if rt.kind == "b":
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    x, y = xp.asarray(x, dtype=rt), y.astype(rt, copy=False)
    neg = y < 0
    out = x ** xp.where(neg, -y, y)
    return xp.where(neg & (x != 1) & (x != -1), xp.zeros((), dtype=rt), out)


def int_clamp_bounds(x, lo, hi):
    """clamp of an integer or bool array: x in the type PyTorch promotes to (a float bound
    makes it float), integer bounds wrapped into that type."""
    rt = result_type([x, lo, hi])
    if rt != x.dtype:
        x = x.astype(rt)
    if rt.kind in "iu":
        lo, hi = (wrap_int(x, v) if isinstance(v, int) and not isinstance(v, bool) else v
                  for v in (lo, hi))
    return x, lo, hi


@export("floor_divide", method=True)
def floor_divide(input, other):
    from ...autograd.grad_mode import no_grad
    with no_grad():
        if not isinstance(input, Tensor):
            input = Tensor._make(xp_of(_raw(other)).asarray(input))
        return div(input, other, rounding_mode="floor")


def _as_double(v):
    if isinstance(v, Tensor):
        return v.to(np.complex128 if v.dtype.kind == "c" else np.float64)
    return complex(v) if isinstance(v, complex) else float(v)


@export("float_power", method=True)
def float_power(input, exponent, *, out=None):
    """input ** exponent computed in float64 (complex128 for complex inputs)."""
    base = _as_double(input)
    if not isinstance(base, Tensor):
        ref = _as_double(exponent)
        base = Tensor._make(xp_of(ref._data).asarray(base, dtype=ref.dtype))
    return pow(base, _as_double(exponent))


OPS = [AddBackward0, SubBackward0, RsubBackward1, MulBackward0, DivBackward0, NegBackward0,
       ReciprocalBackward0, PowBackward0, PowBackward1, PowBackward2, LerpBackward0, LerpBackward1,
       AddcmulBackward0, AddcdivBackward0, FmodBackward0, FmodBackward1, RemainderBackward0,
       RemainderBackward1]


# -- Tensor methods: operators and in-place forms -------------------------------------------------
# the hottest operators call their op's specialised apply directly
tensor_method("__add__", "__radd__")(direct(AddBackward0, 2, "__add__"))
tensor_method("__sub__")(direct(SubBackward0, 2, "__sub__"))
tensor_method("__rsub__")(lambda s, o: RsubBackward1.apply(s, other=o))
tensor_method("__mul__", "__rmul__")(direct(MulBackward0, 2, "__mul__"))
tensor_method("__truediv__")(direct(DivBackward0, 2, "__truediv__"))
tensor_method("__rtruediv__")(lambda s, o: MulBackward0.apply(ReciprocalBackward0.apply(s), o))
tensor_method("__floordiv__")(lambda s, o: div(s, o, rounding_mode="floor"))
tensor_method("__rfloordiv__")(lambda s, o: div(Tensor._make(xp_of(s._data).asarray(o)), s,
                                                rounding_mode="floor"))
tensor_method("__rmod__")(lambda s, o: remainder(o, s))
tensor_method("__pow__")(_pow_operator)
tensor_method("__rpow__")(lambda s, o: PowBackward2.apply(s, base=o))
tensor_method("__neg__")(lambda s: NegBackward0.apply(s))
tensor_method("__pos__")(lambda s: s)

LEAK_HINT = (
    "accumulating a tensor whose graph backward() has already used: `total += loss` chains every "
    "step's graph into `total`, so memory grows with every step. Accumulate `loss.item()` (a "
    "number) or `loss.detach()` instead.")


def _used_by_backward(t):
    """True when ``t``'s history reaches (one step down) a node backward() already released."""
    from ...autograd.graph import AccumulateGrad  # a leaf's sink lives on across steps
    fn = t.grad_fn if isinstance(t, Tensor) else None
    if fn is None:
        return False
    return fn._saved is None or any(
        c is not None and c.__class__ is not AccumulateGrad and getattr(c, "_saved", ()) is None
        for c, _ in fn.next_functions)


def _warn_if_accumulating_history(s, o):
    """``s += o`` where ``s`` or ``o`` carries a graph that backward already ran through: the
    classic ``total_loss += loss`` leak, which no engine reports."""
    from ...autograd.grad_mode import state
    if state.enabled and (_used_by_backward(o) or _used_by_backward(s)):
        import warnings
        warnings.warn(LEAK_HINT, UserWarning, stacklevel=3)


@tensor_method("__iadd__", "add_")
def iadd(s, o, alpha=1):
    _warn_if_accumulating_history(s, o)
    return inplace(s, lambda t, v: add(t, v, alpha=alpha), o,
                   raw=lambda a, v: a.__iadd__(v if alpha == 1 else v * alpha))


tensor_method("__isub__", "sub_", "subtract_")(lambda s, o, alpha=1: inplace(
    s, lambda t, v: sub(t, v, alpha=alpha), o,
    raw=lambda a, v: a.__isub__(v if alpha == 1 else v * alpha)))
tensor_method("__imul__", "mul_", "multiply_")(
    lambda s, o: inplace(s, mul, o, raw=lambda a, v: a.__imul__(v)))
tensor_method("__itruediv__", "div_")(lambda s, o: inplace(s, div, o,
                                                           raw=lambda a, v: a.__itruediv__(v)))
tensor_method("true_divide_", "divide_")(lambda s, other: inplace(s, div, other))
tensor_method("pow_")(lambda s, o: inplace(s, pow, o))
tensor_method("neg_")(lambda s: inplace(s, neg))
tensor_method("negative_")(lambda s: inplace(s, neg))
tensor_method("reciprocal_")(lambda s, _fn=reciprocal: inplace(s, _fn))
tensor_method("square_")(lambda s, _fn=square: inplace(s, _fn))
tensor_method("floor_divide_")(lambda s, o: inplace(s, lambda t, v: floor_divide(t, v), o))
tensor_method("lerp_")(lambda s, end, weight: inplace(s, lambda t, e: lerp(t, e, weight), end))
tensor_method("addcmul_")(lambda s, tensor1, tensor2, *, value=1: inplace(
    s, lambda t, a, b: addcmul(t, a, b, value=value), tensor1, tensor2))
tensor_method("addcdiv_")(lambda s, tensor1, tensor2, *, value=1: inplace(
    s, lambda t, a, b: addcdiv(t, a, b, value=value), tensor1, tensor2))


@tensor_method("float_power_")
def _float_power_(self, exponent):
    if self.dtype != np.float64:
        from ...tensor import scalar_name
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{scalar_name(self.dtype).capitalize()} but the operation's result "
                           f"requires dtype Double")
    return inplace(self, lambda t, *v: float_power(t, *v), exponent)


method_as_function("neg_", "negative_", "reciprocal_", "square_")
