"""``Op``: the one base of every differentiable operation.

An op is a ``Node`` subclass holding its forward and its backward side by side. ``apply`` runs
the forward on arrays (numpy or CuPy, taken from the data), and, when grad mode is on and an
input requires grad, records the node: its edges, the values ``backward`` declared it reads
(``saves``, ``saves_output``) with their version counters, and what is needed to sum broadcast
gradients back to each input's shape. Backward formulas are written against a namespace ``F``:
on plain backward it is the array module (fast, fused kernels allowed); under
``create_graph=True`` it is a namespace of differentiable gpugrad ops, so the same formula builds
the graph of the backward (double backward).
"""
from __future__ import annotations

import functools
import math
import numbers

import numpy as np

from .. import _backend, _parallel
from .._arguments import not_tensor, type_name
from .._bfloat16 import BF16, COMPUTE
from .._promotion import _promote, result_type
from ..autograd import anomaly
from ..autograd import saved_hooks as _saved_hooks
from ..autograd.grad_mode import forward_ad_state
from ..autograd.grad_mode import state as grad_state
from ..autograd.graph import Node, _seq, accumulator_of
from ..tensor import Tensor, Version, _wrap_grad
from . import _specialize

NO_EDGE = (None, 0)
INFERENCE_SAVED = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `gpugrad.no_grad()` instead of "
    "`gpugrad.inference_mode()`.")


def edge(a):
    """The edge a new node keeps to its input ``a``."""
    if a.__class__ is not Tensor and not isinstance(a, Tensor) or not a._rg:
        return NO_EDGE
    if a._meta is not None and "base" in a._meta:
        _refresh_view(a)
    fn = a.grad_fn
    return (fn, a._out_nr) if fn is not None else (accumulator_of(a), 0)


def _refresh_view(v):
    """A view whose storage changed in place since its grad_fn was recorded (through its base
    or a sibling view) is re-derived from its base, so its gradient reflects the new values."""
    m = v._meta
    if m.get("vver", 0) == v._vbox.v:
        return
    m["vver"] = v._vbox.v
    base = m["base"]
    if base._rg and base.grad_fn is not None:
        from .indexing.getitem import AsStridedBackward0
        fresh = AsStridedBackward0.apply(base, view_fn=m["view_fn"])
        v.grad_fn, v._out_nr, v._rg = fresh.grad_fn, 0, True


def unbroadcast(F, g, shape):
    """Sum ``g`` down to ``shape`` (the inverse of broadcasting)."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        if (F.fast and axes[-1] == len(axes) - 1 and g.__class__ is not np.ndarray
                and g.size and g.dtype in _SUM_ROWS_DTYPES and g.flags.c_contiguous):
            # the leading axes only (a bias's gradient over a batch): one kernel on the GPU,
            # where CuPy's reduction costs several launches' worth of host time; each of its
            # threads sums rows / 8 values, so long thin sums stay with CuPy
            cols = math.prod(g.shape[len(axes):])
            if g.size <= _SUM_ROWS_MAX * cols:
                from .. import kernels
                return kernels.sum_rows(g.reshape(-1, cols)).reshape(shape)
        g = F.sum(g, axis=axes, keepdims=True)
    return F.reshape(g, shape) if g.shape != tuple(shape) else g


_SUM_ROWS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_SUM_ROWS_MAX = 8192   # rows


class ArrayNS:
    """The array module seen as a backward namespace (``F.fast`` allows fused kernels)."""
    fast = True

    def __init__(self, xp):
        self.xp = xp
        from .. import kernels
        self.erf = kernels.erf
        if xp is not np:   # CuPy: products that still run while a CUDA graph is captured
            self.matmul = functools.partial(kernels.matmul, xp)

    def __getattr__(self, name):
        # first use of F.<name>: take it from the array module and keep it on the instance
        value = getattr(self.xp, name)
        setattr(self, name, value)
        return value

    @staticmethod
    def astype(a, dtype):
        return a.astype(dtype, copy=False)

    def index_add(self, shape, index, g):
        """zeros(shape) with ``g`` added at ``index`` (repeated indices add up)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        if self.xp is np:
            rows = index[0] if len(index) == 1 and len(shape) > 1 else None
            if (rows.__class__ is np.ndarray and rows.dtype.kind in "iu" and rows.size
                    and rows.min() >= 0 and rows.max() < shape[0]):
                # NOTE: whole rows (an embedding's gradient): numpy's add.at is ~3x faster on
                # flat element indices than on rows, and adds in the same order
                inner = out[0].size
                flat = (rows.reshape(-1, 1) * inner + np.arange(inner)).reshape(-1)
                np.add.at(out.reshape(-1), flat,
                          np.broadcast_to(g, rows.shape + shape[1:]).reshape(-1))
                return out
            np.add.at(out, index, g)
        else:
            self.xp.add.at(out, index, g)
        return out


_array_ns: dict = {}   # array type -> namespace


def array_ns(a) -> ArrayNS:
    ns = _array_ns.get(a.__class__)
    if ns is None:
        xp = _backend.xp_of(a)
        ns = next((v for v in _array_ns.values() if v.xp is xp), None) or ArrayNS(xp)
        _array_ns[a.__class__] = ns
    return ns


def broadcast_error(e, arrays):
    """PyTorch's message for shapes that do not broadcast (or operands of the wrong type)."""
    odd = [a for a in arrays if not hasattr(a, "dtype") and not isinstance(a, (int, float, bool,
                                                                                complex))]
    if odd or isinstance(e, TypeError):
        kinds = ", ".join(sorted({type(a).__name__ for a in arrays if not hasattr(a, "shape")}
                                 | {str(a.dtype) for a in arrays if hasattr(a, "dtype")}))
        return TypeError(f"unsupported operand type(s) for this op: {kinds}")
    shapes = [tuple(a.shape) for a in arrays if hasattr(a, "shape")]
    for i, a in enumerate(shapes):   # the first pair that does not broadcast, as PyTorch names it
        for b in shapes[i + 1:]:
            n = max(len(a), len(b))
            pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
            for d in range(n - 1, -1, -1):
                if pa[d] != pb[d] and 1 not in (pa[d], pb[d]):
                    return RuntimeError(
                        f"The size of tensor a ({pa[d]}) must match the size of tensor b "
                        f"({pb[d]}) at non-singleton dimension {d}")
    return RuntimeError(str(e))


def out_of_memory(e, where):
    """CuPy's (or numpy's) allocation failure as gpugrad's error naming the size asked for."""
    import re

    from .._backend import OutOfMemoryError
    m = re.search(r"allocating ([\d,]+) bytes", str(e))
    size = f"{int(m.group(1).replace(',', '')) / 2**20:.2f} MiB" if m else "memory"
    device = "CUDA" if "cupy" in type(e).__module__ else "CPU"
    return OutOfMemoryError(f"{device} out of memory. Tried to allocate {size} (in {where}); no "
                            f"tensor was modified. Free tensors you no longer need, use a smaller "
                            f"batch, or call gpugrad.cuda.empty_cache(). ({e})")


_tnew = object.__new__
_NUMBERS = frozenset((int, float, bool))   # the usual non-Tensor inputs, passed at no cost
_OPERATORS = {"__add__": "+", "__sub__": "-", "__mul__": "*", "__truediv__": "/",
              "__matmul__": "@", "__pow__": "**", "__mod__": "%", "__floordiv__": "//"}


def check_operand(cls, i, a, name=None):
    """An op's input ``i`` that is not a Tensor. A number is taken, None where the input is
    optional, and an array (the ops pass their own); anything else (a list, a string) is
    PyTorch's TypeError naming the argument, before numpy makes an array of it."""
    if a is None:
        if i in cls.optional_inputs:
            return
    elif isinstance(a, numbers.Number) or _backend.is_array(a):
        return
    if name in _OPERATORS:
        raise TypeError(f"unsupported operand type(s) for {_OPERATORS[name]}: 'Tensor' and "
                        f"'{type_name(a)}'")
    names = cls.operand_names
    raise not_tensor(name or cls.fn_name(), names[i] if i < len(names) else f"input {i}", a)


def _first_tensor(args):
    return next(a for a in args if isinstance(a, Tensor))


def _device_error(op_name, a, b):
    return RuntimeError(
        f"Expected all tensors to be on the same device, but found at least two devices, "
        f"{a.device} and {b.device}! (in {op_name})")


def _cpu_scalar(a) -> bool:
    return isinstance(a, Tensor) and _backend.cpu_scalar(a._data)


def _mixed_devices(cls, args, kw):
    """Inputs on two devices. As in PyTorch, a 0-d CPU tensor may join tensors of another
    device (it is a scalar there): it moves, differentiably, and the op runs again. Any other
    mix is an error naming both devices and the op."""
    devices = {a.device for a in args if isinstance(a, Tensor) and not _cpu_scalar(a)}
    if len(devices) != 1:
        first = _first_tensor(args)
        raise _device_error(cls.__name__, first, next(
            a for a in args if isinstance(a, Tensor) and a.device != first.device))
    dev = devices.pop()
    return cls.apply(*(a.to(dev) if _cpu_scalar(a) else a for a in args), **kw)


class Op(Node):
    """Base of every recorded operation. Subclasses set the node name as the class name."""
    __slots__ = ()
    saves: tuple = ()          # positions of the inputs whose values backward reads
    saves_output = False       # backward reads the output
    reads_for = None           # per entry of ``saves``: the inputs whose gradients read it
                               # (unneeded ones are saved as None, as PyTorch saves them)
    broadcasts = False         # inputs may broadcast against each other
    temps: tuple = ()          # extra slots holding arrays to free with the saved values
    operand_names = ("input", "other")   # the inputs' names in PyTorch's argument errors
    cpu_ufunc = None           # elementwise: the numpy ufunc the forward is on float inputs of
                               # one dtype and no keywords (large ones then run on threads)
    splits_itself = False      # elementwise: the forward's kernel threads itself (a compiled
                               # CPU loop decides on the whole array; blocks would mix paths)
    optional_inputs: tuple = ()  # inputs that may be None
    upcasts = True             # bfloat16 inputs compute in float32 (see lowp_apply); False for
                               # the ops that only move values (views, copies, indexing)

    # -- forward ------------------------------------------------------------------------------
    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        cls._fast = {}   # number of positional args -> specialised apply (see _specialize.py)

    @classmethod
    def apply(cls, *args, **kw):
        """Run the forward on the inputs' arrays; record the node when grad mode is on and an
        input requires grad. Returns the output tensor(s)."""
        fast = cls._fast.get(len(args), _MISSING)
        if fast is _MISSING:
            fast = cls._fast[len(args)] = _specialize.build(cls, len(args), _NAMESPACE)
        if fast is not None:
            return fast(cls, args, kw)
        return cls._apply_generic(args, kw)

    @classmethod
    def _apply_generic(cls, args, kw, lowp=False):
        rec = grad_state.enabled
        need = False
        first = None
        arrays = []
        edges = [] if rec else None
        for a in args:
            if isinstance(a, Tensor):
                d = a._data
                if first is None:
                    first = d
                elif d.__class__ is not first.__class__ or (
                        d.__class__ is not np.ndarray and d.device != first.device):
                    return _mixed_devices(cls, args, kw)
                arrays.append(d)
                if a._rg:
                    need = True
                    if rec:
                        m = a._meta
                        if m is not None and "base" in m:
                            _refresh_view(a)
                        fn = a.grad_fn
                        if fn is not None:
                            edges.append((fn, a._out_nr))
                        else:
                            ref = a._acc
                            acc = ref() if ref is not None else None
                            edges.append((acc if acc is not None else accumulator_of(a), 0))
                elif rec:
                    edges.append(NO_EDGE)
            else:
                if a.__class__ not in _NUMBERS:
                    check_operand(cls, len(arrays), a)
                arrays.append(a)
                if rec:
                    edges.append(NO_EDGE)
        if lowp:
            originals = arrays
            arrays = [a.astype(COMPUTE) if getattr(a, "dtype", None) == BF16 else a
                      for a in arrays]
        elif cls.upcasts and BF16 is not None and any(
                getattr(a, "dtype", None) is BF16 for a in arrays if a.__class__ is np.ndarray):
            return lowp_apply(cls, args, kw)
        op = cls.__new__(cls)
        try:
            if not cls.elementwise or cls.splits_itself or not _parallel.worth_it(first) or (
                    y := _threaded_forward(op, arrays, kw)) is None:
                y = op.forward(np if first is None or first.__class__ is np.ndarray
                               else _backend.xp_of(first), *arrays, **kw)
        except (ValueError, TypeError, IndexError) as e:
            raise op.bad_input(e, arrays, kw) from None
        except MemoryError as e:
            raise out_of_memory(e, cls.__name__) from None
        if cls.broadcasts and first is not None and y.__class__ is not tuple:
            yd = y.dtype
            if yd is not first.dtype and yd != first.dtype:
                y = _promote(y, arrays)
        if lowp and kw.get("dtype") is None and result_type(originals) == BF16:
            y = tuple(map(_round, y)) if y.__class__ is tuple else _round(y)
        if not (need and rec):
            if y.__class__ is tuple:
                return tuple(Tensor._make(_as_array(v)) for v in y)
            out = _tnew(Tensor)
            out._data = y if y.__class__ is np.ndarray else _as_array(y)
            out._rg = False
            out.grad_fn = None
            out._out_nr = 0
            out._vbox = out._grad = out._acc = out._meta = None
            if not rec and grad_state.inference:
                out._m()["inference"] = True
            return out
        # record the node
        op.next_functions = tuple(edges)
        op._seq = next(_seq)
        op._extra = op._in_meta = None
        if y.__class__ is tuple:
            outs = tuple(Tensor._make_result(_as_array(v), op, i) for i, v in enumerate(y))
        else:
            if y.__class__ is not np.ndarray:
                y = _as_array(y)
            if cls.broadcasts:
                ys, yd = y.shape, y.dtype
                for a in arrays:
                    if hasattr(a, "shape") and (a.shape != ys or a.dtype != yd):
                        op._in_meta = _in_meta(arrays, y)
                        break
            outs = _tnew(Tensor)
            outs._data = y
            outs._rg = True
            outs.grad_fn = op
            outs._out_nr = 0
            outs._vbox = outs._grad = outs._acc = outs._meta = None
        saves = cls.saves
        if saves:
            if len(saves) == 1:
                i = saves[0]
                a = args[i]
                if isinstance(a, Tensor):
                    if a._meta is not None and "inference" in a._meta:
                        raise RuntimeError(INFERENCE_SAVED)
                    vb = a._vbox or a._version_box()
                    versions = [(vb, vb.v, i)]
                else:
                    versions = [None]
                saved = [arrays[i]]
            else:
                saved, versions = [], []
                reads = cls.reads_for
                for k, i in enumerate(saves):
                    a = args[i]
                    if reads is not None:
                        r = reads[k]
                        if edges[r[0]] is NO_EDGE and (len(r) == 1 or edges[r[1]] is NO_EDGE):
                            # read only for gradients nobody needs: not kept, not version-checked
                            saved.append(None)
                            versions.append(None)
                            continue
                    saved.append(arrays[i])
                    if isinstance(a, Tensor):
                        if a._meta is not None and "inference" in a._meta:
                            raise RuntimeError(INFERENCE_SAVED)
                        vb = a._vbox or a._version_box()
                        versions.append((vb, vb.v, i))
                    else:
                        versions.append(None)
            if cls.saves_output:
                saved.append(y)
                vb = outs._vbox = Version()
                versions.append((vb, 0, -1))
            op._saved = tuple(saved)
            op._versions = tuple(versions)
        elif cls.saves_output:
            op._saved = (y,)
            vb = outs._vbox = Version()
            op._versions = ((vb, 0, -1),)
        else:
            op._saved = ()
            op._versions = None
        if lowp:
            # backward reads float32 (a saved output is the rounded one, as in PyTorch) and
            # rounds each input's gradient to its dtype (``_fit``)
            op._saved = tuple(_up(v) for v in op._saved)
            op._in_meta = tuple((a.shape, a.dtype) if hasattr(a, "shape") else None
                                for a in originals)
        if _saved_hooks.stack and op._versions:
            _saved_hooks.pack(op, args, outs)
        if anomaly._state.enabled:
            anomaly.record(op)
        return outs

    def forward(self, xp, *arrays, **kw):  # pragma: no cover - every op defines it
        raise NotImplementedError

    def bad_input(self, e, arrays, kw):
        """Turn an array-library error into a gpugrad error naming the op (ops refine it)."""
        if self.broadcasts and "broadcast" in str(e):
            return broadcast_error(e, arrays)
        shapes = ", ".join(str(list(a.shape)) for a in arrays if hasattr(a, "shape"))
        return RuntimeError(f"{self.fn_name()}: invalid input ({shapes}): {e}")

    @classmethod
    def fn_name(cls) -> str:
        n = cls.__name__
        return n[:n.index("Backward")].lower() if "Backward" in n else n

    # -- backward -----------------------------------------------------------------------------
    def backward(self, F, gy, *saved):  # pragma: no cover - every op defines it
        raise NotImplementedError

    @property
    def needs_input_grad(self) -> tuple:
        return tuple(n is not None for n, _ in self.next_functions)

    def _run(self, grads, create_graph):
        saved = self._saved
        if saved is None:
            self._check_saved()
        if saved.__class__ is not tuple:
            saved = saved.arrays()   # packed by saved-tensor hooks
        versions = self._versions
        if versions is not None:
            for e in versions:
                if e is not None and e[0].v != e[1]:
                    self._check_saved()
        if create_graph:
            from . import tensor_ns as F
            grads = [_wrap_grad(g) for g in grads]
            saved = self._unpack(saved)
        else:
            g0 = grads[0]
            if g0 is None:
                g0 = next(g for g in grads if g is not None)
            F = _array_ns.get(g0.__class__) or array_ns(g0)
        # by the class: an op whose output count varies (split) takes a list even for one
        gy = grads[0] if type(self).n_outputs == 1 else grads
        gxs = self.backward(F, gy, *saved) if saved else self.backward(F, gy)
        if gxs.__class__ is not tuple:
            gxs = (gxs,)
        meta = self._in_meta
        if meta is not None:
            gxs = _fit_all(F, gxs, meta)
        return gxs

    def _unpack(self, saved):
        """Saved arrays as tensors tied back into the graph (for a differentiable backward)."""
        out = []
        for value, entry in zip(saved, self._versions or ()):
            if entry is None:
                out.append(value)
            elif entry[2] < 0:
                out.append(Tensor._make_result(value, self, 0))
            else:
                node, nr = self.next_functions[entry[2]]
                if node is None:
                    out.append(Tensor._make(value))
                elif hasattr(node, "variable"):
                    out.append(node.variable)
                else:
                    out.append(Tensor._make_result(value, node, nr))
        if forward_ad_state.level is not None:
            # layering: forward AD runs the ops' derivative rules, from above the ops
            from ..autograd.forward_ad import saved_with_tangents
            return saved_with_tangents(self, tuple(out), self._versions)
        return tuple(out)

    def _release(self):
        self._saved = None
        self._versions = None
        for t in self.temps:
            setattr(self, t, None)


def _as_array(y):
    return np.asarray(y) if isinstance(y, np.generic) else y


# -- bfloat16: computed in float32, rounded at the op's output -----------------------------------
def lowp_apply(cls, args, kw):
    """``cls.apply`` of inputs whose first tensor is bfloat16 (numpy's bfloat16 reductions and
    products do not accumulate in float, PyTorch's CPU kernels do): the bfloat16 arrays are
    read as float32, the forward runs on them, and its float32 outputs are rounded to bfloat16
    when PyTorch's promotion of the inputs gives bfloat16. The node is of a subclass (same name)
    whose backward also computes in float32; each input's gradient is rounded to its dtype."""
    sub = _LOWP.get(cls)
    if sub is None:
        base_run = cls._run

        def _run(self, grads, create_graph):
            if create_graph:   # tensors: the backward's own ops compute them in float32
                return base_run(self, grads, True)
            return base_run(self, [_up(g) for g in grads], False)
        sub = _LOWP[cls] = type(cls)(cls.__name__, (cls,), {
            "__slots__": (), "_run": _run, "__doc__": cls.__doc__,
            "__module__": cls.__module__, "__qualname__": cls.__qualname__})
    return sub._apply_generic(args, kw, lowp=True)


_LOWP: dict = {}   # op class -> its bfloat16 subclass


def _up(a):
    return a.astype(COMPUTE) if a is not None and getattr(a, "dtype", None) == BF16 else a


def _round(y):
    """A floating output as bfloat16 (float64 too: a 0-d float64 tensor times bfloat16 is
    bfloat16, as in PyTorch); integer and bool outputs (argmax, comparisons) stay."""
    return y.astype(BF16) if getattr(y, "dtype", None) is not None and y.dtype.kind == "f" \
        else y


def _in_meta(arrays, y):
    """Per input (shape, dtype) when it differs from the output's, else None for all."""
    shape, dtype = y.shape, y.dtype
    meta, differs = [], False
    for a in arrays:
        s = getattr(a, "shape", None)
        if s is None:
            meta.append(None)
            continue
        meta.append((s, a.dtype))
        if s != shape or a.dtype != dtype:
            differs = True
    return tuple(meta) if differs else None


def _fit_all(F, gxs, meta):
    """Each input's gradient summed back to its shape and cast to its dtype."""
    return tuple(g if g is None or m is None else _fit(F, g, m) for g, m in zip(gxs, meta))


def _fit(F, g, meta):
    shape, dtype = meta
    if g.shape != shape:
        g = unbroadcast(F, g, shape)
    if g.dtype != dtype:
        g = F.astype(g, dtype)
    return g


def _plain(y, rec):
    """Outputs of an op that records nothing (tuples, numpy scalars)."""
    if y.__class__ is tuple:
        return tuple(Tensor._make(_as_array(v)) for v in y)
    out = Tensor._make(_as_array(y))
    if not rec and grad_state.inference:
        out._m()["inference"] = True
    return out


_MISSING = object()
_PLAIN_NUMBERS = (float, int)
_own_slots: dict = {}   # class -> the slots its forward may set (those of Op's subclasses)


def _threaded_forward(op, arrays, kw):
    """An elementwise op's forward on large numpy arrays, over blocks on the CPU's threads
    (``_parallel.elementwise``); None when it must run whole: the inputs do not fit, or the
    forward keeps an array of its own, which must cover the whole input."""
    fn = functools.partial(op.forward, np, **kw) if kw else functools.partial(op.forward, np)
    cls = op.__class__
    ufunc = cls.cpu_ufunc
    if ufunc is not None:
        dtype = next(a.dtype for a in arrays if a.__class__ is np.ndarray)
        if kw or dtype.kind != "f" or not all(
                a.dtype == dtype if a.__class__ is np.ndarray else a.__class__ in _PLAIN_NUMBERS
                for a in arrays):
            ufunc = None
    y = _parallel.elementwise(fn, arrays, ufunc)
    if y is None:
        return None
    if ufunc is not None and y.dtype != dtype:   # not the ufunc's own result: computed whole
        return None
    names = _own_slots.get(cls)
    if names is None:
        names = _own_slots[cls] = tuple(
            n for c in cls.__mro__[:cls.__mro__.index(Op)]
            for n in ((c.__dict__.get("__slots__", ()),) if isinstance(
                c.__dict__.get("__slots__", ()), str) else c.__dict__.get("__slots__", ())))
    for n in names:
        if isinstance(getattr(op, n, None), np.ndarray):
            return None
    return y


_RUN_NAMESPACE = dict(_generic_run=Op._run, _ns_get=_array_ns.get, _array_ns=array_ns,
                      _fit_all=_fit_all)
_NAMESPACE = _specialize.namespace(
    _BF16=BF16, _lowp=lowp_apply, Tensor=Tensor, Version=Version, NO_EDGE=NO_EDGE,
    xp_of=_backend.xp_of, _state=grad_state,
    _mixed_devices=_mixed_devices, _first_tensor=_first_tensor, out_of_memory=out_of_memory,
    _promote=_promote, _refresh_view=_refresh_view, accumulator_of=accumulator_of, _seq=_seq,
    _as_array=_as_array, _in_meta=_in_meta, anomaly=anomaly, INFERENCE_SAVED=INFERENCE_SAVED,
    _plain=_plain, _make_result=Tensor._make_result, _saved_hooks=_saved_hooks,
    _NUMBERS=_NUMBERS, _check_operand=check_operand, _threaded_forward=_threaded_forward)


def specialise_run(cls):
    """Give a single-output op class its generated ``_run`` (see _specialize.build_run)."""
    if cls.__dict__.get("n_outputs", 1) == 1 and type(cls.n_outputs) is int \
            and cls.n_outputs == 1:
        cls._run = _specialize.build_run(cls, _RUN_NAMESPACE)


def direct(cls, n, name=None):
    """``cls.apply`` for ``n`` positional inputs as a plain function (see _specialize.direct)."""
    return _specialize.direct(cls, n, _NAMESPACE, name)
