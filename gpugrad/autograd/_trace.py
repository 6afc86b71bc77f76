"""Symbolic tracing of elementwise backward formulas, and the code that runs what was traced.

A node's ``backward(F, g, *saved)`` is written against a namespace ``F``. Called with
:class:`SymNS` and symbolic values (:class:`Sym`), it records an expression DAG instead of
computing: the formula is its own description, so fusion needs no second copy of any gradient.
A formula that steps outside the elementwise subset (a reduction, a shape, a branch on a value)
raises :class:`TraceError`, and its node is simply not fused.

What was traced runs as one CUDA kernel (:func:`cuda_source`, spliced into the frame
``kernels/backward_region.cu``) or, on numpy, through :func:`evaluate`, which is also the
reference the tests hold the generated code to.
"""
from __future__ import annotations

import math

import numpy as np


class TraceError(Exception):
    """The formula does something an elementwise kernel cannot (it is then run unfused)."""


# op name -> (C spelling, numpy spelling); C functions are the CUDA builtins or the frame's gg_*
_UNARY = {
    "exp": ("exp", "exp"), "log": ("log", "log"), "tanh": ("tanh", "tanh"),
    "sin": ("sin", "sin"), "cos": ("cos", "cos"), "sqrt": ("sqrt", "sqrt"),
    "abs": ("fabs", "abs"), "sign": ("gg_sign_nan", "sign"), "erf": ("erf", None),
    "sigmoid": ("gg_sigmoid", None), "log1p": ("log1p", "log1p"), "expm1": ("expm1", "expm1"),
    "cosh": ("cosh", "cosh"), "sinh": ("sinh", "sinh"),
}
_ARITH = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_COMPARE = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!="}
_LOGIC = {"and": "&&", "or": "||"}
_MINMAX = {"max": ("gg_max", "maximum"), "min": ("gg_min", "minimum")}
_NP_COMPARE = {"gt": "greater", "ge": "greater_equal", "lt": "less", "le": "less_equal",
               "eq": "equal", "ne": "not_equal"}


class Tracer:
    """The DAG being recorded: ``nodes[i] = (op, args, kind)``, kind ``"f"`` (a floating value)
    or ``"b"`` (a truth value); args are node indices, or the value of a ``const``. Identical
    nodes are recorded once (the same saved value read by two formulas is one load)."""

    def __init__(self):
        self.nodes: list[tuple] = []
        self._memo: dict = {}

    def add(self, op, args, kind) -> Sym:
        key = (op, args, kind)
        i = self._memo.get(key)
        if i is None:
            i = self._memo[key] = len(self.nodes)
            self.nodes.append(key)
        return Sym(self, i, kind)

    def input(self, k: int) -> Sym:
        return self.add("in", k, "f")

    def param(self, k: int) -> Sym:
        return self.add("param", k, "f")

    def const(self, v) -> Sym:
        if isinstance(v, (bool, np.bool_)):
            return self.add("const", bool(v), "b")
        if isinstance(v, (int, float, np.integer, np.floating)):
            return self.add("const", float(v), "f")
        raise TraceError(f"a value of type {type(v).__name__} in an elementwise formula")

    def lift(self, v) -> Sym:
        return v if isinstance(v, Sym) else self.const(v)


def _kind_of(op, kinds):
    if op in _COMPARE or op in _LOGIC or op == "not":
        return "b"
    return "f"


class Sym:
    """One value of a traced formula. Arithmetic, comparisons and ``& | ~`` record nodes;
    anything else (``.shape``, indexing, ``if value:``) raises :class:`TraceError`."""
    __slots__ = ("tracer", "index", "kind")
    __array_priority__ = 1000   # numpy scalars defer to Sym's reflected operators

    def __init__(self, tracer, index, kind):
        self.tracer, self.index, self.kind = tracer, index, kind

    def _op(self, op, *others):
        t = self.tracer
        args = (self, *(t.lift(o) for o in others))
        if op in _LOGIC and any(a.kind != "b" for a in args):
            raise TraceError(f"'{_LOGIC[op]}' of non-boolean values")
        return t.add(op, tuple(a.index for a in args), _kind_of(op, args))

    def _rop(self, op, other):
        return self.tracer.lift(other)._op(op, self)

    def __add__(self, o): return self._op("add", o)
    def __radd__(self, o): return self._rop("add", o)
    def __sub__(self, o): return self._op("sub", o)
    def __rsub__(self, o): return self._rop("sub", o)
    def __mul__(self, o): return self._op("mul", o)
    def __rmul__(self, o): return self._rop("mul", o)
    def __truediv__(self, o): return self._op("div", o)
    def __rtruediv__(self, o): return self._rop("div", o)
    def __pow__(self, o): return self._op("pow", o)
    def __rpow__(self, o): return self._rop("pow", o)
    def __gt__(self, o): return self._op("gt", o)
    def __ge__(self, o): return self._op("ge", o)
    def __lt__(self, o): return self._op("lt", o)
    def __le__(self, o): return self._op("le", o)
    def __eq__(self, o): return self._op("eq", o)  # type: ignore[override]
    def __ne__(self, o): return self._op("ne", o)  # type: ignore[override]
    def __and__(self, o): return self._op("and", o)
    def __rand__(self, o): return self._rop("and", o)
    def __or__(self, o): return self._op("or", o)
    def __ror__(self, o): return self._rop("or", o)

    def __neg__(self):
        return self.tracer.const(0.0)._op("sub", self)

    def __pos__(self):
        return self

    def __abs__(self):
        return self._op("abs")

    def __invert__(self):
        if self.kind != "b":
            raise TraceError("'~' of a non-boolean value")
        return self._op("not")

    __hash__ = object.__hash__

    def __bool__(self):
        raise TraceError("a formula that branches on a value")

    def __getattr__(self, name):
        raise TraceError(f"a formula that reads .{name}")

    def __getitem__(self, key):
        raise TraceError("a formula that indexes")


class SymNS:
    """The backward namespace ``F`` while tracing: the elementwise subset of the array API."""
    fast = False   # the differentiable formulas, not the hand-fused kernels

    def __init__(self, tracer: Tracer):
        self.tracer = tracer

    def __getattr__(self, name):
        if name in _UNARY:
            return lambda x: self.tracer.lift(x)._op(name)
        raise TraceError(f"F.{name} in an elementwise formula")

    def where(self, cond, a, b):
        t = self.tracer
        return t.lift(cond)._op("where", a, b)

    def maximum(self, a, b):
        return self.tracer.lift(a)._op("max", b)

    def minimum(self, a, b):
        return self.tracer.lift(a)._op("min", b)

    def ones_like(self, x):
        return self.tracer.const(1.0)

    def zeros_like(self, x):
        return self.tracer.const(0.0)


# -- CUDA --------------------------------------------------------------------------------------
def live(nodes, outputs) -> list[bool]:
    """Which nodes the outputs depend on (a formula may compute what no edge needs)."""
    live = [False] * len(nodes)
    stack = list(outputs)
    while stack:
        i = stack.pop()
        if live[i]:
            continue
        live[i] = True
        op, args, _ = nodes[i]
        if op not in ("in", "param", "const"):
            stack.extend(args)
    return live


def _c_const(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if math.isnan(v):
        return "gg_nan<T>()"
    if math.isinf(v):
        return "(T(1) / T(0))" if v > 0 else "(T(-1) / T(0))"
    return f"T({v!r})"


def _c_expr(nodes, i, names) -> str:
    op, args, kind = nodes[i]

    def f(j):   # operand j as a floating value
        return names[j] if nodes[j][2] == "f" else f"T({names[j]})"

    if op in _ARITH:
        return f"{f(args[0])} {_ARITH[op]} {f(args[1])}"
    if op in _COMPARE:
        a, b = args
        if nodes[a][2] == "b" and nodes[b][2] == "b":
            return f"{names[a]} {_COMPARE[op]} {names[b]}"
        return f"{f(a)} {_COMPARE[op]} {f(b)}"
    if op in _LOGIC:
        return f"{names[args[0]]} {_LOGIC[op]} {names[args[1]]}"
    if op == "not":
        return f"!{names[args[0]]}"
    if op == "where":
        c, a, b = args
        cond = names[c] if nodes[c][2] == "b" else f"({names[c]} != T(0))"
        if kind == "b":
            return f"{cond} ? {names[a]} : {names[b]}"
        return f"{cond} ? {f(a)} : {f(b)}"
    if op == "pow":
        a, b = args
        e = nodes[b]
        if e[0] == "const" and not isinstance(e[1], bool) and e[1] in (0.0, 1.0, 2.0, 3.0, -1.0):
            x = f(a)
            return {0.0: "T(1)", 1.0: x, 2.0: f"{x} * {x}", 3.0: f"{x} * {x} * {x}",
                    -1.0: f"T(1) / {x}"}[e[1]]
        return f"pow({f(a)}, {f(b)})"
    if op in _MINMAX:
        return f"{_MINMAX[op][0]}({f(args[0])}, {f(args[1])})"
    if op in _UNARY:
        return f"{_UNARY[op][0]}({f(args[0])})"
    raise TraceError(f"no CUDA spelling for {op}")   # pragma: no cover - every op has one


def cuda_source(frame: str, nodes, outputs, n_inputs, n_params, ctype, entry) -> str:
    """A translation unit: the frame's helpers, then one entry computing ``outputs``."""
    needed = live(nodes, outputs)
    names, body = {}, []
    for i, (op, args, kind) in enumerate(nodes):
        if not needed[i]:
            continue
        if op == "const":
            names[i] = _c_const(args)
            continue
        if op == "param":
            names[i] = f"p{args}"
            continue
        names[i] = f"v{i}"
        ctype_i = "T" if kind == "f" else "bool"
        expr = f"in{args}[i * in{args}_stride]" if op == "in" else _c_expr(nodes, i, names)
        body.append(f"    const {ctype_i} v{i} = {expr};")
    for k, o in enumerate(outputs):
        value = names[o] if nodes[o][2] == "f" else f"T({names[o]})"
        body.append(f"    out{k}[i] = {value};")
    params = [f"const T* __restrict__ in{k}, long long in{k}_stride" for k in range(n_inputs)]
    params += [f"T p{k}" for k in range(n_params)]
    params += [f"T* __restrict__ out{k}" for k in range(len(outputs))]
    params.append("long long n")
    helpers = frame.split("// -- example region", 1)[0]
    return (f"{helpers}\ntypedef {ctype} T;\n\n"
            f'extern "C" __global__ void {entry}({", ".join(params)}) {{\n'
            f"  const long long stride = (long long)gridDim.x * blockDim.x;\n"
            f"  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
            f" i += stride) {{\n" + "\n".join(body) + "\n  }\n}\n")


# -- numpy (and any array module) ---------------------------------------------------------------
def evaluate(nodes, needed, outputs, inputs, params, dtype, shape, xp) -> list:
    """Compute ``outputs`` with array-module calls, one op at a time: the CPU path of a fused
    region and the reference its CUDA kernel is tested against."""
    from .. import kernels
    vals: list = [None] * len(nodes)

    def f(j):   # truth values take part in arithmetic as 0 and 1 of the region's dtype, as in C
        v = vals[j]
        return v if nodes[j][2] == "f" else xp.asarray(v, dtype=dtype)

    for i, (op, args, kind) in enumerate(nodes):
        if not needed[i]:
            continue
        if op == "in":
            v = inputs[args]
        elif op == "param":
            v = params[args]
        elif op == "const":
            v = args
        elif op in _ARITH:
            a, b = f(args[0]), f(args[1])
            v = a + b if op == "add" else a - b if op == "sub" else a * b if op == "mul" \
                else a / b
        elif op in _COMPARE:
            v = getattr(xp, _NP_COMPARE[op])(vals[args[0]], vals[args[1]])
        elif op in _LOGIC:
            v = (xp.logical_and if op == "and" else xp.logical_or)(vals[args[0]], vals[args[1]])
        elif op == "not":
            v = xp.logical_not(vals[args[0]])
        elif op == "where":
            c, a, b = args
            v = xp.where(vals[c], vals[a] if kind == "b" else f(a), vals[b] if kind == "b"
                         else f(b))
        elif op == "pow":
            v = f(args[0]) ** f(args[1])
        elif op in _MINMAX:
            v = getattr(xp, _MINMAX[op][1])(f(args[0]), f(args[1]))
        elif op == "erf":
            v = kernels.erf(xp.asarray(f(args[0]), dtype=dtype))
        elif op == "sigmoid":
            v = 0.5 * xp.tanh(0.5 * f(args[0])) + 0.5
        else:
            v = getattr(xp, _UNARY[op][1])(f(args[0]))
        vals[i] = v
    out = []
    for o in outputs:
        v = xp.asarray(vals[o]).astype(dtype, copy=False)
        out.append(v if v.shape == shape else xp.broadcast_to(v, shape))
    return out
