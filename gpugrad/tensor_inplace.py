"""In-place operations: run the op out of place, write the result into the tensor's storage,
bump the storage's version counter, and move the tensor (and the base of a view) onto the new
node, as PyTorch does."""
from __future__ import annotations

import weakref

from ._arguments import is_operand
from ._backend import cpu_scalar
from ._bfloat16 import is_inexact
from .autograd.grad_mode import no_grad
from .autograd.grad_mode import state as grad_state
from .autograd.graph import _seq
from .tensor import Tensor, Version, scalar_name

LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF = ("a view of a leaf Variable that requires grad is being used in an in-place "
                "operation.")
NO_GRAD_VIEW = (
    "{} created in no_grad mode and is being modified inplace with grad mode enabled. Given that "
    "this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
    "moving both the view and the inplace either both inside the no_grad block (if you don't "
    "want the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
INFERENCE_INPLACE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
HINT = (" Wrap the update in `with gpugrad.no_grad():` (as optimizers do), or use an "
        "out-of-place op.")
_UNCHANGING = Version()   # the version box of copies nothing else can write to


def check(t) -> bool:
    """Raise if ``t`` may not be modified in place now; return whether the graph must record it."""
    if t._meta is not None and not grad_state.inference and t._meta.get("inference"):
        raise RuntimeError(INFERENCE_INPLACE)   # even under no_grad, as in PyTorch
    if not grad_state.enabled:
        return False
    if t._rg and t.grad_fn is None:
        raise RuntimeError(LEAF + HINT)
    base = t._base
    if base is not None and base._rg and base.grad_fn is None:
        _no_grad_view(t)
        raise RuntimeError(VIEW_OF_LEAF + HINT)
    return True


def _no_grad_view(t):
    kind = t._meta.get("no_grad_view")
    if kind is not None:
        raise RuntimeError(NO_GRAD_VIEW.format("A view was" if kind == "view" else
                                               "A view of a view which was"))


def inplace(t, compute, *args, raw=None):
    """``t = compute(t, *args)`` in place. ``raw(array, *arrays)`` is the fast path used when
    nothing needs recording."""
    record = check(t) and (t._rg or (t._base is not None and t._base._rg)
                           or any(isinstance(a, Tensor) and a._rg for a in args))
    if record and t._base is not None:
        _no_grad_view(t)
    if not record:
        if raw is None or not _try_raw(t, raw, args):
            with no_grad():
                out = compute(t, *args)
            write(t, out._data)
        t._version_box().v += 1
        return t
    first = next(_seq)
    old_fn, old_nr = t.grad_fn, t._out_nr
    out = compute(t, *args)
    node = out.grad_fn
    _unalias(node, t._data, first)
    write(t, out._data)
    t._version_box().v += 1
    base = t._base
    if base is None:
        t.grad_fn, t._out_nr, t._rg = node, 0, True
        t._vbox.last = (weakref.ref(node), t._data)
        _move_retain(old_fn, old_nr, t)
        return t
    from .ops.indexing.getitem import AsStridedBackward0, CopySlicesOver, ViewCopySlices
    view_fn = t._meta["view_fn"]
    if node.next_functions and node.next_functions[0][0] is t.grad_fn:
        # the op read the view itself first: wrap it, as PyTorch's CopySlices does
        base.grad_fn = CopySlicesOver.make(base, node, view_fn)
    else:  # (fill_/copy_ build on t * 0): record the new value feeding a CopySlices
        base.grad_fn = ViewCopySlices.apply(base, out, view_fn=view_fn).grad_fn
    base._out_nr, base._rg = 0, True
    refreshed = AsStridedBackward0.apply(base, view_fn=view_fn)
    t.grad_fn, t._out_nr, t._rg = refreshed.grad_fn, 0, True
    t._meta["vver"] = t._vbox.v
    t._vbox.last = (weakref.ref(t.grad_fn), t._data)
    _move_retain(old_fn, old_nr, t)
    return t


def _move_retain(old_fn, old_nr, t):
    """``retain_grad()`` follows the tensor onto its new node, as in PyTorch (its tensor hooks
    stay with the old one: they see the gradient of the value they were registered on)."""
    retain = old_fn is not None and old_fn._extra is not None and old_fn._extra.get("retain")
    if retain and old_nr in retain and retain[old_nr]() is t:
        del retain[old_nr]
        t.retain_grad()


def _unalias(node, old, first):
    """Values that the nodes of this op saved from the storage about to be overwritten (the
    new node's, and for an op composed of several, each inner node's: every node numbered from
    ``first`` on) become one private copy. It needs no version check, but keeps its input
    position, so double backward ties it back to the node that produced the old value."""
    copy = None
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen or getattr(n, "_seq", -1) < first:
            continue
        seen.add(id(n))
        saved = getattr(n, "_saved", None)
        if saved:
            alias = [v is old for v in saved]
            if any(alias):
                copy = old.copy() if copy is None else copy
                n._saved = tuple(copy if a else v for v, a in zip(saved, alias))
                n._versions = tuple((_UNCHANGING, 0, v[2]) if a and v is not None else v
                                    for v, a in zip(n._versions, alias))
        stack.extend(f for f, _ in n.next_functions)


def _try_raw(t, raw, args) -> bool:
    """Run the bare array update; False when the array library refused it (a result it will
    not cast, shapes that do not broadcast, an index out of range), so that the op runs out of
    place and raises PyTorch's error for it."""
    try:
        vals = [_raw_value(a, t._data) for a in args]
        _guard(t, lambda: raw(t._data, *vals))
    except (TypeError, IndexError, _RawError):
        return False
    return True


class _RawError(RuntimeError):
    pass


def write(t, y):
    """Copy ``y`` into ``t``'s storage, with PyTorch's errors for what cannot be written."""
    a = t._data
    if y.shape != a.shape:
        raise RuntimeError(f"output with shape {list(a.shape)} doesn't match the broadcast shape "
                           f"{list(y.shape)}")
    if (is_inexact(y.dtype) and a.dtype.kind in "iub" or y.dtype.kind == "c" and a.dtype.kind
            == "f" or y.dtype.kind in "iu" and a.dtype.kind == "b"):
        raise RuntimeError(f"result type {scalar_name(y.dtype).capitalize()} can't be cast to "
                           f"the desired output type {scalar_name(a.dtype).capitalize()}")
    _guard(t, lambda: a.__setitem__(Ellipsis, y))


def _guard(t, fn):
    try:
        fn()
    except ValueError as e:
        if "read-only" not in str(e) and "not writeable" not in str(e):
            raise _RawError(str(e)) from None
        if 0 in t._data.strides:   # an expanded view: its elements share memory
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to "
                "a single memory location. Please clone() the tensor before performing the "
                "operation.") from None
        raise RuntimeError(
            "a tensor sharing memory with a read-only array cannot be written in place "
            "(from_numpy of a non-writeable numpy array?). Please clone() the tensor "
            "before performing the operation.") from None


def _raw_value(v, like):
    if v.__class__ is int or v.__class__ is float:
        return v
    if not isinstance(v, Tensor) and not is_operand(v):   # the op gives PyTorch's error for it
        raise _RawError
    if isinstance(v, Tensor):
        v = v._data
        if type(v) is not type(like):
            if cpu_scalar(v):   # a 0-d CPU tensor joins any device, as in PyTorch
                return v[()]
            from .ops._op import _device_error
            raise _device_error("in-place op", Tensor._make(like), Tensor._make(v))
    return v
