"""Forward-mode automatic differentiation: PyTorch's ``torch.autograd.forward_ad``.

Inside ``with dual_level():`` a *dual tensor* ``make_dual(x, t)`` carries a tangent ``t`` next
to its primal value ``x``, and every op applied to dual tensors also returns the directional
derivative ``J(x) @ t`` of its output, read back with ``unpack_dual(y).tangent``.

Each op's tangent comes from its own backward, by the double-vjp identity: the vjp
``g(u) = J^T u`` is linear in ``u``, so its own vjp with cotangent ``t`` is ``J t``. For one
op ``y = f(x1, ..., xn)`` with tangents ``t_i`` on some inputs::

    g_i(u) = d<y, u>/d x_i         (autograd.grad, create_graph=True, u requiring grad)
    tangent(y) = sum_i d<g_i(u), t_i>/d u

So every op whose backward is differentiable (double backward works) has forward mode for
free; an op whose backward is not raises, naming the op. The cost is one extra forward and two
backward passes of that one op, paid only by ops that read a dual tensor. A custom ``Function``
that defines ``jvp(ctx, *tangents)`` gets its tangents from it instead, as in PyTorch.

Zero cost outside a level: entering the first level swaps a wrapper in for ``Op.apply``,
``Function.apply``, the code of the specialised direct functions (``Tensor.__mul__``,
``gpugrad.exp`` ...) and of ``tensor_inplace.inplace``; leaving it puts every original back,
also when the block raised. Tangents live in a per-level mapping that holds its tensors weakly,
and are dropped when the level exits.
"""
from __future__ import annotations

import functools
import sys
import threading
import types
import weakref
from collections import namedtuple

from .grad_mode import enable_grad, forward_ad_state
from .grad_mode import state as grad_state
from .graph import _seq

__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]

NESTED = "Nested forward mode AD is not supported at the moment"
NOT_LAST = ("Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported.")
NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.")

_current_level = -1   # PyTorch's module attribute: the open level's index, -1 when none


class _Level:
    """The tangents of one dual level: ``id(tensor) -> (weakref(tensor), tangent)``. The weak
    reference both drops the entry when the tensor dies and guards against a reused id."""

    def __init__(self, index: int):
        self.index = index
        self.tangents: dict = {}
        # id(node) -> (node, {input index or -1 for the output: tangent}) for nodes recorded
        # from dual inputs: a differentiable backward unpacks their saved values with these
        self.saved: dict = {}

    def get(self, t):
        entry = self.tangents.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        return None

    def set(self, t, tangent) -> None:
        key = id(t)
        tangents = self.tangents

        def forget(ref, key=key):
            e = tangents.get(key)
            if e is not None and e[0] is ref:
                del tangents[key]
        tangents[key] = (weakref.ref(t, forget), tangent)

    def drop(self, t) -> None:
        if self.get(t) is not None:
            del self.tangents[id(t)]


_level: _Level | None = None


class _Local(threading.local):
    depth = 0   # > 0 while a wrapper computes a tangent: the ops it runs propagate none


_local = _Local()


class _Busy:
    """``with _Busy():`` ops inside run their originals (no tangent of their own)."""

    def __enter__(self):
        _local.depth += 1

    def __exit__(self, *exc):
        _local.depth -= 1
        return False


# -- public API -----------------------------------------------------------------------------
_UnpackedDualTensor = namedtuple("_UnpackedDualTensor", ["primal", "tangent"])


class UnpackedDualTensor(_UnpackedDualTensor):
    """Namedtuple returned by :func:`unpack_dual`: the primal and the tangent (None when the
    tensor carries no tangent at this level)."""


def enter_dual_level() -> int:
    """Open a forward-AD level (only one at a time, as in PyTorch) and return its index."""
    global _level, _current_level
    if _level is not None:
        raise RuntimeError(NESTED)
    _install()
    _level = forward_ad_state.level = _Level(0)
    _current_level = 0
    return 0


def exit_dual_level(*, level=None) -> None:
    """Close the current level: its tangents are dropped and the originals are put back."""
    global _level, _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError(NOT_LAST)
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    try:
        _uninstall()
    finally:
        _level.tangents.clear()
        _level.saved.clear()
        _level = forward_ad_state.level = None
        _current_level = -1


class dual_level:
    """Context manager (and decorator) for a forward-AD level::

        with dual_level():
            y = f(make_dual(x, t))
            jvp = unpack_dual(y).tangent
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def make_dual(tensor, tangent, *, level=None):
    """A new tensor sharing ``tensor``'s data (a view of it when it requires grad) that carries
    ``tangent`` at the current level."""
    if level is None:
        level = _current_level
    if level < 0 or _level is None:
        raise RuntimeError(NO_LEVEL)
    if level != _current_level:
        raise RuntimeError("Invalid level given to _make_dual")
    for what, t in (("primal", tensor), ("tangent", tangent)):
        if t._data.dtype.kind not in "fc":
            raise ValueError(f"Expected {what} to be floating point or complex, but got: "
                             f"gpugrad.{t._data.dtype.name}")
    if _level.get(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a forward "
                           f"gradient at the same level {level} is not supported.")
    if _level.get(tangent) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(_size_message(tensor, tangent))
    if tangent.device != tensor.device:
        raise RuntimeError(f"Trying to set a forward gradient that is on a different device "
                           f"than the original Tensor, this is not supported. Tensor is on "
                           f"{tensor.device} while the given forward gradient is on "
                           f"{tangent.device}.")
    dual = _alias(tensor)
    _level.set(dual, tangent)
    return dual


def _size_message(tensor, tangent) -> str:
    return (f"Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}.")


def unpack_dual(tensor, *, level=None) -> UnpackedDualTensor:
    """``(primal, tangent)`` of ``tensor`` at the current level: the primal shares the data
    (a view when the tensor requires grad) without the tangent; the tangent is None when the
    tensor carries none."""
    if level is None:
        level = _current_level
    if level < 0 or _level is None:
        return UnpackedDualTensor(tensor, None)
    if level != _current_level:
        raise RuntimeError("Invalid level given to _fw_primal")
    tangent = _level.get(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_alias(tensor), tangent)


def _alias(t):
    """A new tensor on ``t``'s data: a recorded view when ``t`` requires grad (gradients flow
    back to ``t``), else a detached alias sharing its version counter."""
    if t._rg and grad_state.enabled:
        with _Busy():
            return t.view_as(t)
    return t.detach()


# -- the tangent of one op ------------------------------------------------------------------
def _op_name(cls) -> str:
    fn_name = getattr(cls, "fn_name", None)
    return fn_name() if fn_name is not None else cls.__name__


def _dual_inputs(level, args):
    from ..tensor import Tensor
    found = None
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            t = level.get(a)
            if t is not None:
                if found is None:
                    found = []
                found.append((i, t))
    return found


def _wrap_apply(orig, function=None):
    """``Op.apply`` / ``Function.apply`` (``function``: that base class) that also gives the
    output(s) their tangent."""
    def apply(cls, *args, **kw):
        level = _level
        if level is None or _local.depth:
            return orig(cls, *args, **kw)
        own_jvp = function is not None and cls.jvp is not function.jvp
        if function is not None and (kw or own_jvp):   # a Function's inputs, kwargs bound
            from .function import bind_inputs
            args, kw = bind_inputs(cls, args, kw), {}
        duals = _dual_inputs(level, args)
        if duals is None:
            return orig(cls, *args, **kw)
        with _Busy():
            if own_jvp:
                out = _custom_jvp(level, cls, orig, args, duals)
            else:
                out = orig(cls, *args, **kw)
                _propagate(level, cls, orig, args, kw, duals, out)
        _remember_saved(level, out, duals)
        return out
    apply.__wrapped__ = orig
    return classmethod(apply)


def _custom_jvp(level, cls, orig, args, duals):
    """``cls.apply(*args)`` with tangents from the Function's own ``jvp(ctx, *tangents)``: one
    tangent per input (zeros for a tensor without one, None for a non-tensor), one back per
    output (None for none); inside it ``ctx.saved_tensors`` is what ``save_for_forward`` kept."""
    from ..tensor import Tensor
    from .function import transforms
    prev, transforms.capture = transforms.capture, []
    try:
        out = orig(cls, *args)
        ctx = transforms.capture[0]
    finally:
        transforms.capture = prev
    given = dict(duals)
    tangents = [None if not isinstance(a, Tensor) else given[i] if i in given else _zeros(a)
                for i, a in enumerate(args)]
    ctx._in_jvp = True
    try:
        res = cls.jvp(ctx, *tangents)
    finally:
        del ctx._in_jvp
        ctx.__dict__.pop("_for_forward", None)
    outs = out if out.__class__ is tuple else (out,)
    res = res if res.__class__ is tuple else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(res)})")
    # the tangent keeps its graph (forward-over-reverse) when anything it depends on needs grad
    create = grad_state.enabled and (
        any(t._rg for _, t in duals) or any(isinstance(a, Tensor) and a._rg for a in args))
    non_diff = {id(o) for o in ctx._non_diff}
    for k, (o, tan) in enumerate(zip(outs, res)):
        if tan is None:
            continue
        if not isinstance(tan, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(tan).__name__}) for grad "
                               f"output {k}.")
        if (not isinstance(o, Tensor) or o._data.dtype.kind not in "fc"
                or id(o) in non_diff):
            raise RuntimeError(f"Function's jvp returned a gradient at position {k}, but  the "
                               f"corresponding forward output is not a differentiable Tensor."
                               f"You should return None at that position instead.")
        if tan._data.shape != o._data.shape:
            raise RuntimeError(_size_message(o, tan))
        level.set(o, tan if create else tan.detach())
    return out


def _propagate(level, cls, orig, args, kw, duals, out):
    """Give each floating output of ``out = cls.apply(*args, **kw)`` its tangent."""
    from ..tensor import Tensor
    from . import grad as autograd_grad
    outs = out if out.__class__ is tuple else (out,)
    if not any(isinstance(o, Tensor) and o._data.dtype.kind in "fc" for o in outs):
        return   # integer and boolean results carry no tangent
    # the tangent keeps a graph (forward-over-reverse) when anything it depends on needs grad
    create = grad_state.enabled and (
        any(t._rg for _, t in duals) or any(isinstance(a, Tensor) and a._rg for a in args))
    try:
        with enable_grad():
            subst, xs = list(args), []
            for i, _ in duals:
                a = args[i]
                # a view keeps the input's own graph, so the tangent's graph reaches it
                x = a.view_as(a) if create and a._rg else a.detach().requires_grad_(True)
                subst[i] = x
                xs.append(x)
            ys = orig(cls, *subst, **kw)
            ys = ys if ys.__class__ is tuple else (ys,)
            pick = [k for k, y in enumerate(ys)
                    if isinstance(y, Tensor) and y._rg and y._data.dtype.kind in "fc"]
            if not pick:
                return
            # g(u) is linear, so any u gives the same tangent; ones rather than zeros, as a few
            # backward formulas branch on the sign of their incoming gradient
            us = [_ones(ys[k]).requires_grad_(True) for k in pick]
            first = next(_seq)
            gs = autograd_grad([ys[k] for k in pick], xs, us, create_graph=True,
                               allow_unused=True)
            live = [(g, t) for g, (_, t) in zip(gs, duals) if g is not None and g._rg]
            _refuse_marked([g for g, _ in live], first)
            res = (autograd_grad([g for g, _ in live], us, [t for _, t in live],
                                 create_graph=create, allow_unused=True)
                   if live else (None,) * len(us))
    except (RuntimeError, AttributeError) as e:
        raise NotImplementedError(
            f"forward-mode AD through {_op_name(cls)} is not supported: its backward is not "
            f"differentiable ({type(e).__name__}: {e})") from e
    for k, r in zip(pick, res):
        o = outs[k]
        if not (isinstance(o, Tensor) and o._data.dtype.kind in "fc"):
            continue
        # no path from the tangents to this output: its derivative is zero
        tan = _zeros(o) if r is None else r if create else r.detach()
        level.set(o, tan)


def _remember_saved(level, out, duals) -> None:
    first = out[0] if out.__class__ is tuple else out
    node = getattr(first, "grad_fn", None)
    if node is not None and hasattr(node, "_unpack"):
        tangents = dict(duals)
        own = level.get(first)
        if own is not None:
            tangents[-1] = own
        level.saved[id(node)] = (node, tangents)


def saved_with_tangents(node, saved, versions):
    """Forward-over-reverse: inside a level, a differentiable backward of a node recorded from
    dual inputs sees its saved inputs (and saved output) with their tangents, so the gradient
    it builds carries one (``autograd.grad(..., create_graph=True)`` of a dual function)."""
    level = _level
    rec = level.saved.get(id(node)) if level is not None and not _local.depth else None
    if rec is None or rec[0] is not node:
        return saved
    tangents = rec[1]
    for t, entry in zip(saved, versions or ()):
        if entry is not None and level.get(t) is None:
            tan = tangents.get(entry[2] if entry[2] >= 0 else -1)
            if tan is not None:
                level.set(t, tan)
    return saved


def _refuse_marked(gs, first) -> None:
    """Raise if the graph the backward just built (its nodes numbered from ``first`` on) holds
    a node that refuses differentiation (``@once_differentiable``): it has no edges, so the
    second grad would never reach it and would report a zero tangent instead."""
    from .function import _NotDifferentiable
    stack, seen = [g.grad_fn for g in gs], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or getattr(n, "_seq", -1) < first:
            continue
        seen.add(id(n))
        if n.__class__ is _NotDifferentiable:
            n._run((), False)   # raises its own message
        stack.extend(f for f, _ in n.next_functions)


def _ones(t):
    from .._backend import xp_of
    from ..tensor import Tensor
    a = t._data
    return Tensor._make(xp_of(a).ones(a.shape, dtype=a.dtype))


def _zeros(t):
    from .._backend import xp_of
    from ..tensor import Tensor
    a = t._data
    return Tensor._make(xp_of(a).zeros(a.shape, dtype=a.dtype))


# -- in-place ops ---------------------------------------------------------------------------
def _inplace(orig, t, compute, args, raw):
    """``tensor_inplace.inplace`` during a level: the tangent follows the tensor written to."""
    from ..tensor import Tensor
    level = _level
    if level is None or _local.depth:
        return orig(t, compute, *args, raw=raw)
    involved = level.get(t) is not None or any(
        isinstance(a, Tensor) and level.get(a) is not None for a in args)
    if not involved:
        return orig(t, compute, *args, raw=raw)
    if t._base is not None:
        raise NotImplementedError(
            "forward-mode AD: in-place operations on a view involving dual tensors are not "
            "supported (the tangent of the view's base would not follow); clone() the view "
            "first, or use the out-of-place op")
    results = []

    def tracked(*a):
        r = compute(*a)
        results.append(r)
        return r
    # raw=None: the op itself runs (not a bare array write), so its tangent is computed
    done = orig(t, tracked, *args, raw=None)
    tangent = level.get(results[-1]) if results else None
    if tangent is None:
        level.drop(t)
    else:
        level.set(t, tangent)
    return done


# -- swapping the wrappers in and out -------------------------------------------------------
_TRAMPOLINES: dict = {}
exec(compile("def direct(*args):\n    return _cls.apply(*args)\n"
             "def inplace(t, compute, *args, raw=None):\n"
             "    return _forward_ad_inplace(_forward_ad_original, t, compute, args, raw)\n",
             "<gpugrad forward_ad>", "exec"), _TRAMPOLINES)
_DIRECT = _TRAMPOLINES["direct"].__code__
_INPLACE = _TRAMPOLINES["inplace"].__code__
_saved: list | None = None
_direct_cache: list = [None, None]   # (number of gpugrad modules, functions found)


def _direct_functions() -> list:
    """The generated direct functions (``_specialize.direct``) bound anywhere in gpugrad's
    modules or classes; they run ``cls.apply``'s work without calling it. Found by their
    globals, so also while another wrapper has swapped their code."""
    mods = [(n, m) for n, m in list(sys.modules.items())
            if (n == "gpugrad" or n.startswith("gpugrad.")) and m is not None]
    if _direct_cache[0] == len(mods):
        return _direct_cache[1]
    found, seen = [], set()
    for _, mod in mods:
        for v in list(vars(mod).values()):
            space = list(vars(v).values()) if isinstance(v, type) else ()
            for f in (v, *space):
                if (f.__class__ is types.FunctionType and "_cls" in f.__globals__
                        and "_no_kw" in f.__globals__ and id(f) not in seen):
                    seen.add(id(f))
                    found.append(f)
    _direct_cache[:] = [len(mods), found]
    return found


def _install() -> None:
    global _saved
    from .. import tensor_inplace
    from ..ops._op import Op
    from .function import Function
    saved: list = []
    try:
        for owner in (Op, Function):
            old = owner.__dict__["apply"]
            saved.append((owner, "apply", old))
            owner.apply = _wrap_apply(old.__func__, Function if owner is Function else None)
        for f in _direct_functions():
            saved.append((f, "__code__", f.__code__))
            f.__code__ = _DIRECT
        f = tensor_inplace.inplace
        f.__globals__["_forward_ad_inplace"] = _inplace
        f.__globals__["_forward_ad_original"] = types.FunctionType(
            f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
        f.__globals__["_forward_ad_original"].__kwdefaults__ = f.__kwdefaults__
        saved.append((f, "__code__", f.__code__))
        f.__code__ = _INPLACE
    except BaseException:
        _restore(saved)
        raise
    _saved = saved


def _restore(saved) -> None:
    for owner, attr, old in reversed(saved):
        setattr(owner, attr, old)
    from .. import tensor_inplace
    for name in ("_forward_ad_inplace", "_forward_ad_original"):
        vars(tensor_inplace).pop(name, None)


def _uninstall() -> None:
    global _saved
    saved, _saved = _saved, None
    if saved is not None:
        _restore(saved)
