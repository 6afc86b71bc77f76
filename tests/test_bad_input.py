"""Bad input to the public API, made of gpugrad and of PyTorch alike.

Each case is one malformed call (a wrong type, shape, dtype, device, a negative or fractional
size, a value out of range) written once against a module ``m``, then run as ``m = torch`` and
as ``m = gpugrad``. PyTorch is the oracle:

- when PyTorch raises, gpugrad raises the same kind of error (the same built-in exception class
  PyTorch's derives from, or a subclass of it), and its message is gpugrad's own: never numpy's
  or Python's internals (``operands could not be broadcast``, ``'list' object has no attribute``);
- when PyTorch returns, gpugrad returns the same: equal values (exact for integers and bools,
  close for floats), the same dtype and shape;
- gpugrad never raises anything but ``TypeError``, ``ValueError``, ``RuntimeError`` or
  ``IndexError`` (and their subclasses).

The cases are generated from small tables (bad arguments crossed with the calls that take
them, plus a seeded sample of shape pairs), so every failure is one test id. Where gpugrad
differs on purpose, ``ALLOWED`` says how and why.
"""
from __future__ import annotations

import builtins
import fnmatch
import itertools
import math
import random
import warnings

import numpy as np
import pytest

import gpugrad

torch = pytest.importorskip("torch")

CASES: list = []
_IDS: set = set()


def case(family, label, call, check="values"):
    """Add ``call(m)``; ``check`` is what is compared when both return: "values", "shape"
    (random or uninitialised data) or "none" (only that both return)."""
    cid = f"{family}:{label}"
    assert cid not in _IDS, cid
    _IDS.add(cid)
    CASES.append(pytest.param(call, check, id=cid))


def X(m, *shape, dtype="float32"):
    """A deterministic tensor of ``shape`` (0, 1, 2, ... in ``dtype``)."""
    n = math.prod(shape)
    return m.arange(n).to(getattr(m, dtype)).reshape(shape)


def _r(v):
    """A short, id-safe spelling of an argument."""
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, (list, tuple)):
        inner = ",".join(_r(x) for x in v)
        return f"[{inner}]" if isinstance(v, list) else f"({inner}{',' * (len(v) == 1)})"
    if isinstance(v, type):
        return v.__name__
    if isinstance(v, np.ndarray):
        return f"ndarray{list(v.shape)}"
    return repr(v).replace(" ", "")


def _args(args, kw=None):
    parts = [_r(a) for a in args] + [f"{k}={_r(v)}" for k, v in (kw or {}).items()]
    return ",".join(parts)


class D:
    """A dtype named by its attribute on the module (``D("int8")`` is ``m.int8``)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"m.{self.name}"


def _resolve(m, v):
    if isinstance(v, D):
        return getattr(m, v.name)
    if isinstance(v, dict):
        return {k: _resolve(m, x) for k, x in v.items()}
    return v


# -- tensor creation -----------------------------------------------------------------------------
BAD_SIZES = [(-1,), (2, -3), ((2, -3),), (2.5,), ((2, 2.5),), ("3",), (None,), ([2, None],),
             (2, "a"), ((2,), 3), ([],), (True,), (np.int64(2), 3), ((0, 3),), ()]
for fn, size in itertools.product(["zeros", "ones", "empty", "rand", "randn"], BAD_SIZES):
    check = "values" if fn in ("zeros", "ones") else "shape"
    case("creation", f"{fn}({_args(size)})", lambda m, fn=fn, size=size: getattr(m, fn)(*size),
         check)

BAD_DTYPES = ["float32", float, builtins.int, builtins.bool, np.float32, 5, None, D("int8"),
              D("bool")]
for fn, dt in itertools.product(["zeros", "ones", "tensor_list", "arange", "full"], BAD_DTYPES):
    def call(m, fn=fn, dt=dt):
        dt = _resolve(m, dt)
        if fn == "tensor_list":
            return m.tensor([1, 2], dtype=dt)
        if fn == "arange":
            return m.arange(3, dtype=dt)
        if fn == "full":
            return m.full((2,), 1, dtype=dt)
        return getattr(m, fn)(2, dtype=dt)
    case("creation", f"{fn}(dtype={_r(dt)})", call)

# values that do not fit the dtype asked for, and data that is no tensor
TENSOR_DATA = [
    ([300], "int8"), ([-129], "int8"), ([127, -128], "int8"), ([256], "uint8"), ([-1], "uint8"),
    ([255], "uint8"), ([40000], "int16"), ([-32769], "int16"), ([2 ** 31], "int32"),
    ([2 ** 31 - 1], "int32"), ([-(2 ** 31) - 1], "int32"), ([2 ** 63], "int64"),
    ([2 ** 64], None), ([2], "bool"), ([-3, 0], "bool"), ([1.5], "int64"), ([-1.5], "int32"),
    ([300.0], "uint8"), ([float("inf")], "int32"), ([1e40], "float32"), ([[1, 2], 3], "int8"),
    ([1, 2], "float16"), ([70000], "float16"), ([True, 2], None), ([1, 2.5], None),
    ([[1, 2], [3]], None), ([[1], [2, 3]], None), ([1, [2]], None), ([1, "a"], None), (["a"], None),
    ([None], None), (None, None), ([1, None], None), ({1: 2}, None), ("abc", None),
    ([], None), ([[], []], None), ([[]], "int8"), (3, "int8"), (300, "int8"), (-1, "uint8"),
    (2.5, "int32"), (True, "float32"), ((1, 2), None), ([(1, 2), [3, 4]], None),
]
for data, dt in TENSOR_DATA:
    def call(m, data=data, dt=dt):
        return m.tensor(data, dtype=None if dt is None else getattr(m, dt))
    case("creation", f"tensor({_args([data], {'dtype': dt} if dt else {})})", call)

FULL = [((2,), 300, "int8"), ((2,), -1, "uint8"), ((2,), 2 ** 40, "int32"), ((2,), 1.5, "int32"),
        ((2,), "a", None), ((2,), None, None), ((2,), [1, 2], None), ((2,), True, None),
        ((2,), 1.5, "bool"), (2, 1.0, None), ((-2,), 1.0, None), ((2.5,), 1.0, None),
        ([2, 2], 7, None), ((2,), float("nan"), "int64"), ((2,), 255, "uint8")]
for size, value, dt in FULL:
    def call(m, size=size, value=value, dt=dt):
        return m.full(size, value, dtype=None if dt is None else getattr(m, dt))
    case("creation", f"full({_args([size, value], {'dtype': dt} if dt else {})})", call)

RANGES = [
    ("arange", (0, 10, 0), {}), ("arange", (10, 0, 1), {}), ("arange", (0, 5, -1), {}),
    ("arange", ("a",), {}), ("arange", (None,), {}), ("arange", (float("inf"),), {}),
    ("arange", (float("nan"),), {}), ("arange", (-3,), {}), ("arange", (3.5,), {}),
    ("arange", (1, 2, 0.3), {}), ("arange", (300,), {"dtype": D("int8")}),
    ("arange", (0, 1, 0.25), {"dtype": D("int64")}), ("arange", ([3],), {}),
    ("linspace", (0, 1, -1), {}), ("linspace", (0, 1, 2.5), {}), ("linspace", (0, 1, "a"), {}),
    ("linspace", (0, 1, 0), {}), ("linspace", (0, 1, 1), {}), ("linspace", (0, 1), {}),
    ("linspace", (0, 10, 5), {"dtype": D("int64")}), ("linspace", ("a", 1, 3), {}),
    ("linspace", (0, 1, None), {}),
    ("eye", (-1,), {}), ("eye", (2.5,), {}), ("eye", (2, -1), {}), ("eye", ("a",), {}),
    ("eye", (0,), {}), ("eye", (2, 3), {}), ("eye", (None,), {}), ("eye", (2, 2.0), {}),
    ("eye", (2,), {"dtype": D("bool")}),
    ("randint", (5, 2), {}), ("randint", (5, 0, (2,)), {}), ("randint", (0, (2,)), {}),
    ("randint", (5, (-1,)), {}), ("randint", (2.5, (2,)), {}), ("randint", ("a", (2,)), {}),
    ("randint", (0, 300, (2,)), {"dtype": D("int8")}), ("randint", (5,), {}),
    ("randint", (5, (2, 2.5)), {}), ("randint", (3, 3, (2,)), {}),
]
for fn, args, kw in RANGES:
    check = "shape" if fn == "randint" else "values"
    case("creation", f"{fn}({_args(args, kw)})",
         lambda m, fn=fn, args=args, kw=kw: getattr(m, fn)(*args, **_resolve(m, kw)), check)

for fn in ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]:
    for arg in ([1.0, 2.0], 3, None, "a"):
        case("creation", f"{fn}({_r(arg)})", lambda m, fn=fn, arg=arg: getattr(m, fn)(arg),
             "shape")
for device in ["nope", 3.5, "cpu:x", "cuda:x", None, "cpu"]:
    case("creation", f"zeros(2,device={_r(device)})",
         lambda m, device=device: m.zeros(2, device=device))
    case("creation", f"tensor([1],device={_r(device)})",
         lambda m, device=device: m.tensor([1], device=device))

# -- reshape and views ---------------------------------------------------------------------------
SHAPE_ARGS = [(4,), (-1, -1), (7, -1), (2.5, 3), ("a",), (None,), ((2, 3),), (-2, 3), (0, -1),
              (3, 2), (6,), ((6,),), ([2, 3],), (1, 2, 3), ((2, 3), 1), (-1,), (6, 0), ()]
for fn, args in itertools.product(["reshape", "view"], SHAPE_ARGS):
    case("shape", f"{fn}({_args(args)})",
         lambda m, fn=fn, args=args: getattr(X(m, 2, 3), fn)(*args))
case("shape", "view(non-contiguous)", lambda m: X(m, 2, 3).t().view(6))
case("shape", "view(dtype)", lambda m: X(m, 2, 3).view(m.int32))
case("shape", "reshape(function)", lambda m: m.reshape(X(m, 2, 3), (3, -1)))
case("shape", "reshape(list input)", lambda m: m.reshape([1, 2, 3, 4], (2, 2)))

EXPAND = [(4, 3), (-1, 3), (2, -1), (3,), (1, 2, 3), (2.5, 3), (-2, 3), ("a", 3), ((4, 2, 3),),
          (0, 3), (-1, -1, 3)]
for args in EXPAND:
    case("shape", f"expand({_args(args)})", lambda m, args=args: X(m, 2, 3).expand(*args))
    case("shape", f"expand_1x3({_args(args)})", lambda m, args=args: X(m, 1, 3).expand(*args))
case("shape", "expand_as(list)", lambda m: X(m, 1, 3).expand_as([[1, 2, 3]]))

DIMS = [-4, -3, -2, -1, 0, 1, 2, 3, 1.0, "a", None, (0, 1), True]
ONE_DIM = {
    "squeeze": lambda x, d: x.squeeze(d), "unsqueeze": lambda x, d: x.unsqueeze(d),
    "flatten_start": lambda x, d: x.flatten(d), "flatten_end": lambda x, d: x.flatten(0, d),
    "transpose": lambda x, d: x.transpose(0, d), "sum": lambda x, d: x.sum(d),
    "softmax": lambda x, d: x.softmax(d), "cumsum": lambda x, d: x.cumsum(d),
    "select0": lambda x, d: x.select(d, 0), "size": lambda x, d: x.size(d),
    "movedim": lambda x, d: x.movedim(0, d), "argmax": lambda x, d: x.argmax(d),
}
for (name, f), d in itertools.product(ONE_DIM.items(), DIMS):
    case("shape", f"{name}(dim={_r(d)})", lambda m, f=f, d=d: f(X(m, 2, 1, 3), d))

PERMUTES = [(0,), (0, 0, 1), (0, 3, 1), (2, 1, 0), (0, 1, 2, 3), (-1, 0, 1), (2.0, 1, 0),
            ((2, 1, 0),), ("a", 1, 0), (-4, 1, 0), (), (0, 1, -1)]
for args in PERMUTES:
    case("shape", f"permute({_args(args)})", lambda m, args=args: X(m, 2, 1, 3).permute(*args))
case("shape", "flatten(1,0)", lambda m: X(m, 2, 1, 3).flatten(1, 0))
case("shape", "transpose(one dim)", lambda m: X(m, 2, 3).transpose(0))
case("shape", "t(3-d)", lambda m: X(m, 2, 1, 3).t())
case("shape", "unflatten(1,(2,2))", lambda m: X(m, 2, 3).unflatten(1, (2, 2)))
case("shape", "narrow(0,1,5)", lambda m: X(m, 2, 3).narrow(0, 1, 5))
case("shape", "narrow(0,-1,1)", lambda m: X(m, 2, 3).narrow(0, -1, 1))
case("shape", "narrow(0,1,-1)", lambda m: X(m, 2, 3).narrow(0, 1, -1))

# -- matrix products -----------------------------------------------------------------------------
SHAPES = [(), (3,), (4,), (2, 3), (3, 4), (4, 3), (3, 3), (2, 2, 3), (2, 3, 4), (3, 3, 4),
          (0, 3), (3, 0)]
_rng = random.Random(17)
PAIRS = sorted({(a, b) for a, b in itertools.product(SHAPES, SHAPES) if _rng.random() < 0.35})
for (a, b), fn in itertools.product(PAIRS, ["matmul", "mm", "bmm", "dot", "mv"]):
    if fn != "matmul" and _rng.random() < 0.6:
        continue   # a sample of the other products; matmul gets every pair
    case("matmul", f"{fn}({_r(a)},{_r(b)})",
         lambda m, fn=fn, a=a, b=b: getattr(m, fn)(X(m, *a), X(m, *b)))
DTYPE_MIXES = [("float32", "float64"), ("float32", "int64"), ("int64", "int64"),
               ("int32", "int64"), ("float64", "float64"), ("bool", "bool"),
               ("float16", "float32"), ("int64", "float32")]
for (da, db), fn in itertools.product(DTYPE_MIXES, ["matmul", "mm", "dot"]):
    sa, sb = {"matmul": ((2, 3), (3, 2)), "mm": ((2, 3), (3, 2)), "dot": ((3,), (3,))}[fn]
    case("matmul", f"{fn}({da},{db})",
         lambda m, fn=fn, sa=sa, sb=sb, da=da, db=db: getattr(m, fn)(X(m, *sa, dtype=da),
                                                                      X(m, *sb, dtype=db)))
for other in ([[1.0], [2.0], [3.0]], (1.0, 2.0, 3.0), 2.0, None, "a", np.ones((3, 2))):
    case("matmul", f"matmul(other={_r(other)})",
         lambda m, other=other: X(m, 2, 3).matmul(other))
    case("matmul", f"@(other={_r(other)})", lambda m, other=other: X(m, 2, 3) @ other)
    case("matmul", f"mm(other={_r(other)})", lambda m, other=other: m.mm(X(m, 2, 3), other))
case("matmul", "matmul(list,tensor)", lambda m: m.matmul([[1.0, 2.0]], X(m, 2, 2)))
case("matmul", "rmatmul(list)", lambda m: [[1.0, 2.0]] @ X(m, 2, 2))

# -- joining and splitting -----------------------------------------------------------------------
JOIN = {
    "empty list": lambda m: [], "mismatched": lambda m: [X(m, 2, 3), X(m, 3, 2)],
    "one tensor": lambda m: X(m, 2, 3), "with int": lambda m: [X(m, 2, 3), 5],
    "with None": lambda m: [X(m, 2, 3), None], "tuple": lambda m: (X(m, 2, 3), X(m, 2, 3)),
    "float+int": lambda m: [X(m, 2, 3), X(m, 2, 3, dtype="int64")],
    "int+bool": lambda m: [X(m, 2, 3, dtype="int64"), X(m, 2, 3, dtype="bool")],
    "0-d": lambda m: [X(m), X(m)], "1-d+2-d": lambda m: [X(m, 3), X(m, 2, 3)],
    "with list": lambda m: [X(m, 2, 3), [[1.0, 2.0, 3.0]]],
    "generator": lambda m: (t for t in [X(m, 2, 3), X(m, 2, 3)]),
    "strings": lambda m: ["a", "b"],
}
for (label, make), fn, dim in itertools.product(JOIN.items(), ["cat", "stack"], [0, 1, 3, 1.5]):
    if dim in (3, 1.5) and label not in ("tuple", "mismatched"):
        continue
    case("joining", f"{fn}({label},dim={dim})",
         lambda m, make=make, fn=fn, dim=dim: getattr(m, fn)(make(m), dim=dim))
SPLITS = [("split", (0,)), ("split", (-1,)), ("split", ([1, 1],)), ("split", (2.5,)),
          ("split", (1, 5)), ("split", ([1, -1, 3],)), ("split", ([2, 1],)), ("split", ("a",)),
          ("split", (None,)), ("split", ((1, 2), 1)),
          ("chunk", (0,)), ("chunk", (-1,)), ("chunk", (2.5,)), ("chunk", (2, 3)),
          ("chunk", (5,)), ("chunk", (2, -3)), ("chunk", ("a",)),
          ("tensor_split", (0,)), ("tensor_split", ([1, 5],)), ("tensor_split", (2.5,)),
          ("unbind", (2,)), ("unbind", (-3,)), ("unbind", (0.5,))]
for fn, args in SPLITS:
    case("joining", f"{fn}({_args(args)})",
         lambda m, fn=fn, args=args: getattr(m, fn)(X(m, 2, 3), *args))
case("joining", "split(list input)", lambda m: m.split([1.0, 2.0], 1))

# -- indexing ------------------------------------------------------------------------------------
KEYS = {
    "2": lambda m: 2, "-3": lambda m: -3, "5": lambda m: 5, "(0,3)": lambda m: (0, 3),
    "(0,0,0)": lambda m: (0, 0, 0), "1.0": lambda m: 1.0, "(0,1.0)": lambda m: (0, 1.0),
    "'a'": lambda m: "a", "None": lambda m: None, "mask(3)": lambda m: m.ones(3, dtype=m.bool),
    "mask(2,3)": lambda m: X(m, 2, 3) > 2, "mask(3,2)": lambda m: m.ones(3, 2, dtype=m.bool),
    "long[0,5]": lambda m: m.tensor([0, 5]), "long[-3]": lambda m: m.tensor([-3]),
    "float[1.]": lambda m: m.tensor([1.0]), "[0,1]": lambda m: [0, 1], "[[0,1],[0,5]]":
    lambda m: ([0, 1], [0, 5]), "(...,...)": lambda m: (..., ...), "::0": lambda m: slice(
        None, None, 0), "::-1": lambda m: slice(None, None, -1), "0:1.5": lambda m: slice(0, 1.5),
    "(...,5)": lambda m: (..., 5), "int32[1]": lambda m: m.tensor([1], dtype=m.int32),
    "uint8 mask": lambda m: m.tensor([1, 0], dtype=m.uint8), "[True]": lambda m: [True],
    "[]": lambda m: [], "0-d long": lambda m: m.tensor(1), "0-d float": lambda m: m.tensor(1.0),
    "(0,[5])": lambda m: (0, [5]), "1:2:0.5": lambda m: slice(1, 2, 0.5),
}
for label, key in KEYS.items():
    case("indexing", f"get[{label}]", lambda m, key=key: X(m, 2, 3)[key(m)])

    def put(m, key=key):
        x = X(m, 2, 3)
        x[key(m)] = 7.0
        return x
    case("indexing", f"set[{label}]", put)
def _set(x, k, v):
    x[k] = v
    return x


SET_VALUES = {"list of 2": lambda m: [1.0, 2.0], "'a'": lambda m: "a", "None": lambda m: None,
              "ones(4)": lambda m: m.ones(4), "int": lambda m: 3, "bool": lambda m: True,
              "ones(2,3)": lambda m: m.ones(2, 3), "nested": lambda m: [[1.0, 2.0, 3.0]],
              "int16 tensor": lambda m: m.tensor([300], dtype=m.int16)}
for label, value in SET_VALUES.items():
    case("indexing", f"set[0]={label}", lambda m, value=value: _set(X(m, 2, 3), 0, value(m)))
case("indexing", "set[mask]=wrong length", lambda m: X(m, 2, 3).__setitem__(
    X(m, 2, 3) > 2, m.ones(5)))
case("indexing", "set int tensor[0]=2.7", lambda m: _set(X(m, 3, dtype="int64"), 0, 2.7))
case("indexing", "set int8 tensor[0]=300", lambda m: _set(X(m, 3, dtype="int8"), 0, 300))
case("indexing", "set uint8 tensor[0]=-1", lambda m: _set(X(m, 3, dtype="uint8"), 0, -1))
case("indexing", "set bool tensor[0]=2", lambda m: _set(X(m, 3, dtype="bool"), 0, 2))


GATHERS = {
    "index_select(0,list)": lambda m, x: x.index_select(0, [0, 1]),
    "index_select(0,float)": lambda m, x: x.index_select(0, m.tensor([0.0])),
    "index_select(0,[5])": lambda m, x: x.index_select(0, m.tensor([5])),
    "index_select(2,[0])": lambda m, x: x.index_select(2, m.tensor([0])),
    "index_select(0,2-d)": lambda m, x: x.index_select(0, m.tensor([[0]])),
    "index_select(0,int32)": lambda m, x: x.index_select(0, m.tensor([1], dtype=m.int32)),
    "gather(1,list)": lambda m, x: x.gather(1, [[0], [1]]),
    "gather(1,[[5]])": lambda m, x: x.gather(1, m.tensor([[5], [0]])),
    "gather(1,float)": lambda m, x: x.gather(1, m.tensor([[0.0], [1.0]])),
    "gather(1,1-d)": lambda m, x: x.gather(1, m.tensor([0, 1])),
    "gather(3,ok)": lambda m, x: x.gather(3, m.tensor([[0], [1]])),
    "gather(1,[[-1]])": lambda m, x: x.gather(1, m.tensor([[-1], [0]])),
    "gather(0,bigger)": lambda m, x: x.gather(0, m.zeros(3, 4, dtype=m.int64)),
    "take([6])": lambda m, x: x.take(m.tensor([6])),
    "take(list)": lambda m, x: x.take([0]),
    "masked_fill(list)": lambda m, x: x.masked_fill([True, False, True], 0.0),
    "masked_fill(float mask)": lambda m, x: x.masked_fill(m.ones(2, 3), 0.0),
    "masked_fill(mask(4))": lambda m, x: x.masked_fill(m.ones(4, dtype=m.bool), 0.0),
    "masked_fill(value tensor 1-d)": lambda m, x: x.masked_fill(x > 2, m.ones(2)),
    "masked_fill(value 'a')": lambda m, x: x.masked_fill(x > 2, "a"),
    "masked_select(list)": lambda m, x: x.masked_select([True, False, True]),
    "masked_select(mask(4))": lambda m, x: x.masked_select(m.ones(4, dtype=m.bool)),
    "index_add(0,[5])": lambda m, x: x.index_add(0, m.tensor([5]), m.ones(1, 3)),
    "index_add(0,list)": lambda m, x: x.index_add(0, [0], m.ones(1, 3)),
    "index_add(0,bad source)": lambda m, x: x.index_add(0, m.tensor([0]), m.ones(1, 4)),
    "scatter(1,[[5]])": lambda m, x: x.scatter(1, m.tensor([[5], [0]]), 1.0),
    "scatter(1,list)": lambda m, x: x.scatter(1, [[0], [1]], 1.0),
    "scatter(1,float)": lambda m, x: x.scatter(1, m.tensor([[0.0], [1.0]]), 1.0),
    "index_fill(0,[5])": lambda m, x: x.index_fill(0, m.tensor([5]), 1.0),
    "index_put_(list)": lambda m, x: x.index_put_([0], m.tensor(1.0)),
    "nonzero(float arg)": lambda m, x: x.nonzero(1.5),
}
for label, f in GATHERS.items():
    case("indexing", label, lambda m, f=f: f(m, X(m, 2, 3)))

# -- nn.Linear -----------------------------------------------------------------------------------
for fi, fo in [(-1, 2), (2, -1), (2.5, 2), (2, 2.5), ("a", 2), (None, 2), (0, 2), (2, 0),
               (True, 2), ([2], 2), (np.int64(2), 3)]:
    case("nn", f"Linear({_r(fi)},{_r(fo)})", lambda m, fi=fi, fo=fo: m.nn.Linear(fi, fo),
         "none")
for label, make in {"last dim 4": lambda m: X(m, 2, 4), "list": lambda m: [[1.0, 2.0, 3.0]],
                    "int64": lambda m: X(m, 2, 3, dtype="int64"),
                    "float64": lambda m: X(m, 2, 3, dtype="float64"), "0-d": lambda m: X(m),
                    "1-d": lambda m: X(m, 3), "empty batch": lambda m: X(m, 0, 3),
                    "None": lambda m: None, "3-d": lambda m: X(m, 2, 2, 3),
                    "bool": lambda m: X(m, 2, 3, dtype="bool")}.items():
    case("nn", f"Linear(3,2)({label})", lambda m, make=make: m.nn.Linear(3, 2)(make(m)), "shape")
case("nn", "Linear(3,2,bias='yes')", lambda m: m.nn.Linear(3, 2, bias="yes"), "none")
case("nn", "linear(list weight)", lambda m: m.nn.functional.linear(X(m, 2, 3), [[1.0] * 3]))
case("nn", "linear(bad bias)", lambda m: m.nn.functional.linear(X(m, 2, 3), X(m, 2, 3), X(m, 3)))

# -- losses --------------------------------------------------------------------------------------
TARGETS = {
    "long": lambda m: m.tensor([0, 2]), "float(2)": lambda m: m.tensor([0.0, 2.0]),
    "int32": lambda m: m.tensor([0, 2], dtype=m.int32), "out of range": lambda m: m.tensor([0, 5]),
    "-1": lambda m: m.tensor([-1, 0]), "-100": lambda m: m.tensor([-100, 1]),
    "length 3": lambda m: m.tensor([0, 1, 2]), "(2,1)": lambda m: m.tensor([[0], [1]]),
    "list": lambda m: [0, 2], "probs(2,3)": lambda m: m.softmax(X(m, 2, 3), 1),
    "probs(2,4)": lambda m: m.ones(2, 4) / 4, "0-d": lambda m: m.tensor(1),
    "bool": lambda m: m.tensor([True, False]), "None": lambda m: None,
    "uint8": lambda m: m.tensor([0, 2], dtype=m.uint8),
}
INPUTS = {"(2,3)": lambda m: X(m, 2, 3) / 6, "(3,)": lambda m: X(m, 3) / 3,
          "int(2,3)": lambda m: X(m, 2, 3, dtype="int64"), "list": lambda m: [[0.1, 0.2, 0.3]] * 2}
for (tl, tgt), fn in itertools.product(TARGETS.items(), ["cross_entropy", "nll_loss"]):
    case("loss", f"{fn}((2,3),{tl})",
         lambda m, tgt=tgt, fn=fn: getattr(m.nn.functional, fn)(X(m, 2, 3) / 6, tgt(m)))
for il, inp in INPUTS.items():
    for fn in ["cross_entropy", "nll_loss"]:
        case("loss", f"{fn}(input {il},long)",
             lambda m, inp=inp, fn=fn: getattr(m.nn.functional, fn)(inp(m), m.tensor([0, 2])))
for kw in [{"reduction": "avg"}, {"reduction": None}, {"ignore_index": 1.5},
           {"label_smoothing": 1.5}, {"label_smoothing": -0.1}, {"weight": [1.0, 1.0, 1.0]},
           {"weight": "w2"}]:
    def call(m, kw=kw):
        kw = dict(kw)
        if kw.get("weight") == "w2":
            kw["weight"] = m.ones(2)
        return m.nn.functional.cross_entropy(X(m, 2, 3) / 6, m.tensor([0, 2]), **kw)
    case("loss", f"cross_entropy({_args([], kw)})", call)
MSE_TARGETS = {"(2,3)": lambda m: m.ones(2, 3), "(3,)": lambda m: m.ones(3),
               "(4,)": lambda m: m.ones(4), "long": lambda m: m.ones(2, 3, dtype=m.int64),
               "list": lambda m: [[1.0] * 3] * 2, "float64": lambda m: m.ones(2, 3,
                                                                               dtype=m.float64),
               "0-d": lambda m: m.tensor(1.0), "None": lambda m: None,
               "bool": lambda m: m.ones(2, 3, dtype=m.bool)}
for (tl, tgt), fn in itertools.product(MSE_TARGETS.items(), ["mse_loss", "l1_loss",
                                                             "smooth_l1_loss"]):
    case("loss", f"{fn}((2,3),{tl})",
         lambda m, tgt=tgt, fn=fn: getattr(m.nn.functional, fn)(X(m, 2, 3), tgt(m)))
case("loss", "mse_loss(reduction='avg')",
     lambda m: m.nn.functional.mse_loss(X(m, 2), m.ones(2), reduction="avg"))
case("loss", "binary_cross_entropy(out of [0,1])",
     lambda m: m.nn.functional.binary_cross_entropy(X(m, 3), m.ones(3)))
case("loss", "binary_cross_entropy(target (2,))",
     lambda m: m.nn.functional.binary_cross_entropy(m.ones(3) / 2, m.ones(2)))
case("loss", "CrossEntropyLoss()(list)", lambda m: m.nn.CrossEntropyLoss()(X(m, 2, 3), [0, 2]))
case("loss", "MSELoss(reduction='x')", lambda m: m.nn.MSELoss(reduction="x")(X(m, 2), X(m, 2)))


# -- optimizers ----------------------------------------------------------------------------------
def _params(m):
    return [m.nn.Parameter(m.ones(2)), m.nn.Parameter(m.zeros(3))]


OPTIM = [
    ("SGD", {"lr": -1.0}), ("SGD", {"lr": 0.1, "momentum": -1.0}),
    ("SGD", {"lr": 0.1, "weight_decay": -1.0}), ("SGD", {"lr": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "nesterov": True}),
    ("SGD", {"lr": "a"}), ("SGD", {"lr": None}), ("SGD", {"lr": 0.0}), ("SGD", {}),
    ("Adam", {"lr": -1.0}), ("Adam", {"betas": (1.0, 0.9)}), ("Adam", {"betas": (0.9, -0.1)}),
    ("Adam", {"betas": (0.9, 1.5)}), ("Adam", {"eps": -1.0}), ("Adam", {"weight_decay": -1.0}),
    ("Adam", {"betas": (0.9,)}), ("Adam", {"betas": 0.9}), ("Adam", {"lr": float("nan")}),
    ("AdamW", {"lr": -1.0}), ("AdamW", {"betas": (1.0, 0.9)}), ("AdamW", {"eps": -1e-8}),
    ("AdamW", {"weight_decay": -0.1}),
    ("RMSprop", {"lr": -1.0}), ("RMSprop", {"alpha": -1.0}), ("RMSprop", {"eps": -1.0}),
    ("RMSprop", {"momentum": -1.0}), ("Adagrad", {"lr": -1.0}), ("Adagrad", {"lr_decay": -1.0}),
    ("Adagrad", {"initial_accumulator_value": -1.0}), ("Adagrad", {"eps": -1.0}),
    ("Adadelta", {"rho": 1.5}), ("Adadelta", {"lr": -1.0}), ("Adamax", {"betas": (1.0, 0.9)}),
]
for name, kw in OPTIM:
    case("optim", f"{name}({_args([], kw)})",
         lambda m, name=name, kw=kw: getattr(m.optim, name)(_params(m), **kw), "none")
BAD_PARAMS = {
    "ints": lambda m: [1, 2], "tensor": lambda m: m.ones(2, requires_grad=True),
    "empty": lambda m: [], "None": lambda m: None, "dict": lambda m: {"params": _params(m)},
    "strings": lambda m: ["a"], "groups without params": lambda m: [{"lr": 0.1}],
    "empty group": lambda m: [{"params": []}], "group of ints": lambda m: [{"params": [1]}],
    "shared between groups": lambda m: (lambda p: [{"params": [p]}, {"params": [p]}])(
        m.nn.Parameter(m.ones(2))),
    "non-leaf": lambda m: [m.nn.Parameter(m.ones(2)) * 2], "int tensor": lambda m: [
        m.ones(2, dtype=m.int64)], "generator": lambda m: (p for p in _params(m)),
    "set": lambda m: set(_params(m)), "mixed group and tensor": lambda m: [
        {"params": _params(m)}, m.nn.Parameter(m.ones(1))],
}
for (label, make), name in itertools.product(BAD_PARAMS.items(), ["SGD", "Adam"]):
    case("optim", f"{name}(params={label})",
         lambda m, make=make, name=name: getattr(m.optim, name)(make(m), lr=0.1), "none")


def _opt_load(m, edit):
    p = _params(m)
    opt = m.optim.SGD(p, lr=0.1, momentum=0.9)
    sd = edit(m, opt.state_dict())
    opt.load_state_dict(sd)
    return [g["lr"] for g in opt.param_groups]


OPT_STATES = {
    "two groups": lambda m, sd: {**sd, "param_groups": sd["param_groups"] * 2},
    "group size": lambda m, sd: {**sd, "param_groups": [{**sd["param_groups"][0],
                                                         "params": [0]}]},
    "list": lambda m, sd: [sd], "no state key": lambda m, sd: {"param_groups":
                                                               sd["param_groups"]},
    "lr changed": lambda m, sd: {**sd, "param_groups": [{**sd["param_groups"][0], "lr": 0.5}]},
}
for label, edit in OPT_STATES.items():
    case("optim", f"load_state_dict({label})", lambda m, edit=edit: _opt_load(m, edit))


# -- load_state_dict -----------------------------------------------------------------------------
def _load(m, edit, strict=True):
    net = m.nn.Sequential(m.nn.Linear(3, 2), m.nn.ReLU(), m.nn.Linear(2, 1))
    sd = edit(m, {k: m.ones(v.shape) for k, v in net.state_dict().items()})
    out = net.load_state_dict(sd, strict=strict)
    loaded = net.state_dict()   # (what was not loaded keeps its random initial values)
    return (sorted(out.missing_keys), sorted(out.unexpected_keys),
            [loaded[k] for k in sorted(loaded) if k in sd])


def _drop(key):
    return lambda m, sd: {k: v for k, v in sd.items() if k != key}


STATES = {
    "ok": lambda m, sd: sd, "missing": _drop("0.bias"),
    "unexpected": lambda m, sd: {**sd, "3.weight": m.ones(1)},
    "wrong shape": lambda m, sd: {**sd, "0.weight": m.ones(3, 2)},
    "wrong shape 0-d": lambda m, sd: {**sd, "2.bias": m.tensor(1.0)},
    "list": lambda m, sd: list(sd.items()), "None": lambda m, sd: None,
    "tensor value list": lambda m, sd: {**sd, "0.bias": [1.0, 2.0]},
    "value int": lambda m, sd: {**sd, "0.bias": 3},
    "float64": lambda m, sd: {k: v.double() for k, v in sd.items()},
    "int64": lambda m, sd: {**sd, "0.bias": m.ones(2, dtype=m.int64)},
    "missing and unexpected": lambda m, sd: {**_drop("2.weight")(m, sd), "x": m.ones(1)},
    "prefixed": lambda m, sd: {f"module.{k}": v for k, v in sd.items()},
    "non-str key": lambda m, sd: {**sd, 3: m.ones(1)},
}
for (label, edit), strict in itertools.product(STATES.items(), [True, False]):
    case("state_dict", f"load_state_dict({label},strict={strict})",
         lambda m, edit=edit, strict=strict: _load(m, edit, strict))

# -- Tensor methods given a list (or another non-tensor) where a tensor is expected --------------
OTHERS = {"list": [1.0, 2.0, 3.0], "tuple": (1.0, 2.0, 3.0), "str": "a", "None": None,
          "int": 2, "float": 2.5, "bool": True}
BINARY = ["add", "sub", "mul", "div", "pow", "remainder", "fmod", "floor_divide", "eq", "lt",
          "maximum", "minimum", "fmax", "atan2", "hypot", "copysign", "xlogy", "logical_and",
          "bitwise_and", "lerp_half", "where", "clamp_min_t", "isclose", "allclose", "equal",
          "dist", "dot", "outer", "cross", "kron", "expand_as", "view_as", "type_as", "add_",
          "mul_", "copy_"]


def _binary(m, fn, x, other, function=False):
    if fn == "lerp_half":
        return m.lerp(x, other, 0.5) if function else x.lerp(other, 0.5)
    if fn == "where":
        return m.where(x > 1, x, other) if function else x.where(x > 1, other)
    if fn == "clamp_min_t":
        return m.clamp(x, min=other) if function else x.clamp(min=other)
    if fn == "bitwise_and":
        x = x.long()
    if function:
        return getattr(m, fn)(x, other)
    return getattr(x, fn)(other)


for fn, (label, other) in itertools.product(BINARY, OTHERS.items()):
    case("methods", f"Tensor.{fn}({label})",
         lambda m, fn=fn, other=other: _binary(m, fn, X(m, 3), other))
    if label in ("list", "None") and not fn.endswith("_") and fn not in (
            "expand_as", "view_as", "type_as", "clamp_min_t"):
        case("methods", f"{fn}(tensor,{label})",
             lambda m, fn=fn, other=other: _binary(m, fn, X(m, 3), other, function=True))
for fn, other in itertools.product(["add", "mul", "matmul", "where"], [np.arange(3.0),
                                                                       {"a": 1}]):
    case("methods", f"Tensor.{fn}({type(other).__name__})",
         lambda m, fn=fn, other=other: _binary(m, fn, X(m, 3), other))
OPERATORS = {"+": lambda x, o: x + o, "-": lambda x, o: x - o, "*": lambda x, o: x * o,
             "/": lambda x, o: x / o, "**": lambda x, o: x ** o, "==": lambda x, o: x == o,
             "<": lambda x, o: x < o, "r+": lambda x, o: o + x, "r*": lambda x, o: o * x,
             "+=": lambda x, o: _iadd(x, o), "&": lambda x, o: (x > 0) & o}


def _iadd(x, o):
    x += o
    return x


for (op, f), (label, other) in itertools.product(OPERATORS.items(), OTHERS.items()):
    if label in ("tuple", "bool"):
        continue
    case("methods", f"x{op}{label}", lambda m, f=f, other=other: f(X(m, 3), other))
for fn in ["exp", "sum", "abs", "neg", "relu", "sigmoid", "argmax", "sort", "max"]:
    case("methods", f"{fn}(list)", lambda m, fn=fn: getattr(m, fn)([1.0, 2.0]))
case("methods", "where(list cond)", lambda m: m.where([True, False, True], X(m, 3), X(m, 3)))
case("methods", "where(float cond)", lambda m: m.where(X(m, 3), X(m, 3), X(m, 3)))
case("methods", "where(bad shapes)", lambda m: m.where(X(m, 3) > 1, X(m, 3), X(m, 4)))
case("methods", "add(alpha='a')", lambda m: X(m, 3).add(X(m, 3), alpha="a"))
case("methods", "add(alpha=1.5 int)", lambda m: X(m, 3, dtype="int64").add(X(m, 3), alpha=1.5))
case("methods", "add(bad shapes)", lambda m: X(m, 3).add(X(m, 4)))
case("methods", "int add_(float)", lambda m: X(m, 3, dtype="int64").add_(1.5))
case("methods", "int mul_(float tensor)", lambda m: X(m, 3, dtype="int64").mul_(X(m, 3)))
case("methods", "bool add_(int)", lambda m: X(m, 3, dtype="bool").add_(2))
case("methods", "float bitwise_and", lambda m: X(m, 3).bitwise_and(X(m, 3)))
case("methods", "clamp(min>max)", lambda m: X(m, 3).clamp(2, 1))
case("methods", "clamp(no bounds)", lambda m: X(m, 3).clamp())
case("methods", "to('bad')", lambda m: X(m, 3).to("bad"))
case("methods", "to(5)", lambda m: X(m, 3).to(5.5))
case("methods", "item(3 values)", lambda m: X(m, 3).item())
case("methods", "requires_grad int", lambda m: X(m, 3, dtype="int64").requires_grad_())
case("methods", "backward(non-scalar)", lambda m: X(m, 3).requires_grad_().mul(2).backward())
case("methods", "backward(no grad)", lambda m: X(m, 3).sum().backward())

# -- complex numbers -----------------------------------------------------------------------------
COMPLEX = {
    "ones*1j": lambda m: m.ones(2) * 1j, "ones.add(1j)": lambda m: m.ones(2).add(1j),
    "full(1j)": lambda m: m.full((2,), 1j), "tensor(1j)": lambda m: m.tensor(1j),
    "tensor([1,2j])": lambda m: m.tensor([1, 2j]), "arange*1j": lambda m: m.arange(3) * 1j,
    "zeros+2j sum": lambda m: (m.zeros(2) + 2j).sum(), "1j-ones": lambda m: 1j - m.ones(2),
    "fill_(1j)": lambda m: m.zeros(2).fill_(1j), "ones[0]=1j": lambda m: _set(m.ones(2), 0, 1j),
    "full_like(1j)": lambda m: m.full_like(m.ones(2), 1j),
    "where(1j)": lambda m: m.where(m.ones(2) > 0, 1j, 0.0), "pow(1j)": lambda m: m.ones(2) ** 1j,
    "masked_fill(1j)": lambda m: m.ones(2).masked_fill(m.ones(2) > 0, 1j),
    "clamp(1j)": lambda m: m.ones(2).clamp(1j), "arange(1j)": lambda m: m.arange(1j),
    "linspace(1j)": lambda m: m.linspace(0, 1j, 3), "scalar_tensor(1j)":
    lambda m: m.scalar_tensor(1j), "abs(ones*1j)": lambda m: (m.ones(2) * 1j).abs(),
    "(ones*1j).real": lambda m: (m.ones(2) * 1j).real,
    "(ones*1j).imag": lambda m: (m.ones(2) * 1j).imag, "int*1j": lambda m: X(
        m, 2, dtype="int64") * 1j, "eq(1j)": lambda m: m.ones(2) == 1j,
    "lt(1j)": lambda m: m.ones(2) < 1j, "max(ones*1j)": lambda m: (m.ones(2) * 1j).max(),
    "mse(1j target)": lambda m: m.nn.functional.mse_loss(m.ones(2), m.ones(2) * 1j),
    "matmul 1j": lambda m: (m.ones(2, 2) * 1j) @ m.ones(2, 2),
}
for label, f in COMPLEX.items():
    case("complex", label, f)


# -- the run -------------------------------------------------------------------------------------
# numpy's and Python's internals, which a gpugrad message must never show
LEAKS = ["operands could not be broadcast", "ufunc", "cannot reshape array",
         "object has no attribute", "numpy", "ndarray", "array of dimension", "dtype(",
         "unhashable type", "is not subscriptable", "setting an array element",
         "not supported between instances", "Cannot cast", "casting rule",
         "object cannot be interpreted", "argument must be a string or a", "too many indices for",
         "invalid literal for", "np.", "float() argument", "int() argument"]
KINDS = (TypeError, ValueError, RuntimeError, IndexError)

# where gpugrad deliberately differs from PyTorch: case id pattern (fnmatch) -> (what gpugrad
# does: "returns" or the exception class it raises, why)
ARRAYS = ("returns", "gpugrad's tensors hold numpy/CuPy arrays, and its own functions pass them "
          "to the ops: an array operand is taken as a tensor of its values")
NUMPY_DTYPES = ("returns", "gpugrad's dtypes are numpy dtypes: a numpy scalar type or a dtype's "
                "name ('float32') names the same dtype, as numpy code passes them")
NO_SIZES = ("RuntimeError", "no sizes is the 0-d shape (code computing a shape unpacks a "
                           "possibly empty list), so the error is the one of a wrong shape")
ARRAY_PRODUCTS = ("RuntimeError", "an array operand is taken as a tensor of its dtype (as in "
                  "the elementwise ops), so float32 @ float64 is refused as between tensors")
ALLOWED = {
    "creation:*(dtype='float32')": NUMPY_DTYPES, "creation:*(dtype=float32)": NUMPY_DTYPES,
    "methods:Tensor.add(ndarray)": ARRAYS, "methods:Tensor.mul(ndarray)": ARRAYS,
    "methods:Tensor.where(ndarray)": ARRAYS,
    "shape:reshape()": NO_SIZES, "shape:view()": NO_SIZES, "shape:permute()": NO_SIZES,
    "shape:view(dtype)": ("RuntimeError", "view(dtype), a reinterpretation of the bits, is not "
                                          "implemented; the error points to .to(dtype)"),
    "shape:squeeze(dim=None)": ("returns", "None is squeeze's default (every size-1 dim), so "
                                           "squeeze(None) is squeeze()"),
    "matmul:*(other=ndarray*": ARRAY_PRODUCTS, "methods:Tensor.matmul(ndarray)": ARRAY_PRODUCTS,
    "methods:to(5)": ("TypeError", "PyTorch reads a number given to .to() as its dtype (5.5: "
                                   "float64); gpugrad takes a dtype, a device or a tensor"),
}
# where PyTorch raises an exception that is not one of KINDS (its code reads an attribute or a
# key the bad argument lacks), gpugrad raises one of these instead, with a message of its own
KIND_OF = {AttributeError: (TypeError,), KeyError: (TypeError, ValueError),
           AssertionError: (RuntimeError,)}


def _run(m, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return call(m), None
        except Exception as e:   # noqa: BLE001 - the exception is what is compared
            return None, e


def _builtin_kind(e):
    return next(c for c in type(e).__mro__ if c.__module__ == "builtins")


def _norm(r):
    """A result as comparable plain data."""
    if isinstance(r, (torch.Tensor, gpugrad.Tensor)):
        a = r.detach()
        a = a.cpu().numpy() if isinstance(a, gpugrad.Tensor) else a.numpy()
        return ("tensor", str(r.dtype).split(".")[-1], tuple(r.shape), a)
    if isinstance(r, (torch.dtype, np.dtype)):
        return ("dtype", str(r).split(".")[-1])
    if isinstance(r, (tuple, list)):
        return tuple(_norm(v) for v in r)
    if r is None or isinstance(r, (bool, int, float, complex, str)):
        return r
    return ("object", type(r).__name__)


def _same(want, got, check, path="result"):
    if isinstance(want, tuple) and want and want[0] == "tensor":
        assert isinstance(got, tuple) and got and got[0] == "tensor", f"{path}: {got!r}"
        assert got[1:3] == want[1:3], f"{path}: dtype/shape {got[1:3]} != PyTorch's {want[1:3]}"
        if check == "values":
            a, b = got[3], want[3]
            if b.dtype.kind in "fc":
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True,
                                           err_msg=path)
            else:
                np.testing.assert_array_equal(a, b, err_msg=path)
        return
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{path}: {got!r} != {want!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            _same(w, g, check, f"{path}[{i}]")
        return
    if isinstance(want, float) and isinstance(got, float) and check == "values":
        assert got == pytest.approx(want, nan_ok=True), path
        return
    if check != "none" or (isinstance(want, tuple) and want[:1] == ("object",)):
        assert got == want, f"{path}: {got!r} != PyTorch's {want!r}"


def _describe(r, e):
    return f"raised {type(e).__name__}: {e}" if e is not None else f"returned {r!r}"[:300]


@pytest.mark.parametrize("call, check", CASES)
def test_bad_input_matches_pytorch(call, check, request):
    want, t_err = _run(torch, call)
    got, g_err = _run(gpugrad, call)
    cid = request.node.callspec.id
    allowed = next((v for k, v in ALLOWED.items() if fnmatch.fnmatchcase(cid, k)), None)
    if g_err is not None:
        assert isinstance(g_err, KINDS), f"gpugrad {_describe(got, g_err)}"
        msg = str(g_err)
        assert msg.strip(), f"gpugrad raised {type(g_err).__name__} with no message"
        leaks = [w for w in LEAKS if w in msg and w not in str(t_err)]
        assert not leaks, f"gpugrad's message shows internals {leaks}: {msg}"
    if allowed is not None:
        outcome = "returns" if g_err is None else type(g_err).__name__
        assert outcome == allowed[0], f"allowance out of date: gpugrad {_describe(got, g_err)}"
        return
    if t_err is not None:
        assert g_err is not None, (f"PyTorch raises {type(t_err).__name__}: {t_err}; gpugrad "
                                   f"returned {got!r}"[:400])
        kind = _builtin_kind(t_err)
        kind = KIND_OF.get(kind, (kind,))
        ok = isinstance(g_err, kind) and (isinstance(t_err, NotImplementedError)
                                          or not isinstance(g_err, NotImplementedError))
        assert ok, (f"PyTorch raises {type(t_err).__name__}: {t_err}\ngpugrad raises "
                    f"{type(g_err).__name__}: {g_err}")
        return
    assert g_err is None, (f"PyTorch returns {want!r}"[:200]
                           + f"; gpugrad raises {type(g_err).__name__}: {g_err}")
    _same(_norm(want), _norm(got), check)


def test_the_fuzz_covers_every_family_with_over_a_thousand_cases():
    families = {p.id.split(":")[0] for p in CASES}
    assert families >= {"creation", "shape", "matmul", "joining", "indexing", "nn", "loss",
                        "optim", "state_dict", "methods", "complex"}
    assert len(CASES) >= 1000
