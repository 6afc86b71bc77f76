"""Backward graph objects: ``Node`` (one per recorded op) and ``AccumulateGrad`` (one per leaf).

A node keeps only what its backward reads (``_saved``), the edges to the nodes of its inputs
(``next_functions``) and, lazily, hooks and metadata (``_extra``). The engine frees ``_saved``
as soon as the node has run, unless the graph is retained.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import weakref
from typing import NamedTuple

from ..utils.hooks import RemovableHandle
from . import anomaly
from .saved_hooks import (  # noqa: F401  (PyTorch keeps them in torch.autograd.graph)
    disable_saved_tensors_hooks,
    save_on_cpu,
    saved_tensors_hooks,
)

_seq = itertools.count()
_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OWN_CODE = (_PKG_DIR, "<gpugrad ")   # gpugrad's files and the code it generates

SECOND_BACKWARD = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


def creation_site() -> str | None:
    """'file:line' of the first frame outside gpugrad (the user's line that built a node; the
    code gpugrad generates, named '<gpugrad ...>', is gpugrad's)."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_OWN_CODE):
        f = f.f_back
    return None if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def _count(hook, out, n):
    """A node hook returns one value per gradient, as PyTorch checks."""
    if len(out) != n:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got "
                           f"{len(out)}, but expected {n})")


def _op_name(node) -> str:
    """The op a node records, as PyTorch 2.13 names it in errors: 'Sigmoid' for SigmoidBackward0."""
    name = node.name()
    i = name.rfind("Backward")
    suffix = name[i + len("Backward"):]
    return name[:i] if i > 0 and (suffix.isdigit() or not suffix) else name


class Node:
    """A recorded operation in the backward graph (``grad_fn``)."""
    __slots__ = ("next_functions", "_seq", "_saved", "_versions", "_extra", "_in_meta",
                 "__weakref__")
    n_outputs = 1
    temps: tuple = ()          # slots holding private arrays that _release also frees
    elementwise = False        # backward maps each element's gradient alone (see fusion.py)
    saved_names: tuple = ()   # names under which ``_saved_<name>`` exposes saved values

    # -- introspection ------------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def _sequence_nr(self) -> int:
        """The order nodes were created in (later nodes run first among ready ones)."""
        return self._seq

    def __call__(self, *grads):
        """This node's backward applied to ``grads`` (one per output), as PyTorch allows: the
        gradients for its ``next_functions``, differentiable when grad mode is on. Saved values
        are kept."""
        from ..tensor import _wrap_grad
        from .grad_mode import state
        if len(grads) != self.n_outputs:
            raise RuntimeError(f"{self.name()} expects {self.n_outputs} gradient(s) (one per "
                               f"output), got {len(grads)}")
        create = state.enabled
        out = self._run([g if g is None or create else g._data for g in grads], create)
        return tuple(None if o is None else _wrap_grad(o) for o in out)

    def _x(self) -> dict:
        if self._extra is None:
            self._extra = {}
        return self._extra

    @property
    def metadata(self) -> dict:
        return self._x().setdefault("metadata", {})

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs) -> None | grad_outputs``: runs before this node's backward."""
        hooks = self._x().setdefault("pre_hooks", [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs) -> None | grad_inputs``: runs after its backward."""
        hooks = self._x().setdefault("hooks", [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _creation(self) -> str:
        """', created at file:line' when known (always in anomaly mode)."""
        site = self._extra and self._extra.get("site")
        return f", created at {site}" if site else ""

    def __getattr__(self, attr):
        # ``_saved_self``, ``_saved_other``, ``_saved_result`` ... as PyTorch exposes them
        if attr.startswith("_saved_") and attr[7:] in type(self).saved_names:
            if self._saved is None:
                raise RuntimeError(f"{SECOND_BACKWARD} (node: {self.name()}{self._creation()})")
            from ..tensor import Tensor
            saved = self._saved
            value = saved[type(self).saved_names.index(attr[7:])]
            if saved.__class__ is not tuple and hasattr(value, "tensor"):
                return value.tensor()   # packed by saved-tensor hooks: unpacked on each read
            return Tensor._make(value) if hasattr(value, "shape") else value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        return sorted(set(super().__dir__()) | {f"_saved_{n}" for n in type(self).saved_names})

    # -- engine interface -----------------------------------------------------------------------
    def _check_saved(self):
        """Raise if backward would read values that were freed or modified in place."""
        if self._saved is None:
            raise RuntimeError(f"{SECOND_BACKWARD} (node: {self.name()}{self._creation()})")
        if self._versions is not None:
            for i, entry in enumerate(self._versions):
                if entry is not None and entry[0].v != entry[1]:
                    raise RuntimeError(self._modified_message(i, entry))

    def _modified_message(self, i, entry):
        from ..tensor import describe
        box, expected, pos = entry
        value = self._saved[i]
        which = ""
        if pos == -1:
            which = f", which is output 0 of {_op_name(self)},"
        elif pos >= 0 and box.last is not None and box.last[0]() is not None:
            node, written = box.last[0](), box.last[1]   # named after the last in-place write
            if written is value:
                name = _op_name(node)
            elif getattr(value, "base", None) is not None:   # a view of what was written
                name = "AsStrided"
            else:   # the base of the view that was written
                name = "torch::autograd::CopySlices"
            which = f", which is output 0 of {name},"
        elif pos >= 0:
            node, nr = self.next_functions[pos]
            if node is not None and not isinstance(node, AccumulateGrad):
                which = f", which is output {nr} of {_op_name(node)},"
        elif getattr(value, "grad_fn", None) is not None:
            which = f", which is output {value._out_nr} of {_op_name(value.grad_fn)},"
        hint = ("Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!" if anomaly.is_enabled() else
                "Hint: enable anomaly detection to find the operation that failed to compute its "
                "gradient, with gpugrad.autograd.set_detect_anomaly(True).")
        return (f"one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{describe(getattr(value, '_data', value))}]{which} is at "
                f"version {box.v}; expected version {expected} instead. {hint} (needed by "
                f"{self.name()}{self._creation()})")

    def _pre(self, grads):
        """Tensor hooks, retain_grad, then node pre-hooks (PyTorch's order)."""
        ex = self._extra
        if ex is None:
            return grads
        from ..tensor import _unwrap_grad, _wrap_grad
        th = ex.get("tensor_hooks")
        if th:
            for nr, hooks in th.items():
                if grads[nr] is None:
                    continue
                for fn in list(hooks):
                    out = fn(_wrap_grad(grads[nr]))
                    if out is not None:
                        grads[nr] = _unwrap_grad(out, grads[nr], fn)
        rg = ex.get("retain")
        if rg:
            for nr, ref in rg.items():
                t = ref()
                if t is not None and grads[nr] is not None:
                    t._store_grad(grads[nr])
        pre = ex.get("pre_hooks")
        if pre:
            for fn in list(pre):
                out = fn(tuple(_wrap_grad(g) for g in grads))
                if out is not None:
                    _count(fn, out, len(grads))
                    grads = [_unwrap_grad(o, g, fn) for o, g in zip(out, grads)]
        return grads

    def _post(self, grad_inputs, grad_outputs):
        """Node post-hooks: ``hook(grad_inputs, grad_outputs)`` may replace grad_inputs."""
        hooks = self._extra and self._extra.get("hooks")
        if not hooks:
            return grad_inputs
        from ..tensor import _unwrap_grad, _wrap_grad
        gi = tuple(_wrap_grad(g) for g in grad_inputs)
        go = tuple(_wrap_grad(g) for g in grad_outputs)
        for fn in list(hooks):
            out = fn(gi, go)
            if out is not None:
                _count(fn, out, len(gi))
                gi = tuple(_unwrap_grad(o, g, fn) for o, g in zip(out, gi))
        return tuple(_unwrap_grad(o, g) for o, g in zip(gi, grad_inputs))

    def _release(self):
        self._saved = None
        self._versions = None

    def _run(self, grads, create_graph):  # pragma: no cover - every subclass defines it
        raise NotImplementedError


def new_node(cls):
    """An empty node of ``cls`` with every slot set (subclasses add their own)."""
    n = cls.__new__(cls)
    n._seq = next(_seq)
    n._saved = ()
    n._versions = None
    n._extra = None
    n._in_meta = None
    return n


class AccumulateGrad(Node):
    """Sink of a leaf: adds the incoming gradient into ``variable.grad``.

    The addition holds the accumulator's lock, as PyTorch's does: threads running backward into
    one leaf each add their whole gradient (numpy lets go of the GIL inside a large in-place
    add, so two unlocked ``grad += g`` lose updates). One leaf has one accumulator at a time
    (``accumulator_of``), so one lock serves every graph that reaches it."""
    __slots__ = ("variable", "lock")

    def __init__(self, variable):
        self.variable = variable
        self.lock = threading.Lock()
        self.next_functions = ()
        self._seq = (1 << 62) + next(_seq)  # PyTorch runs accumulators as soon as they are ready
        self._saved = ()
        self._versions = None
        self._extra = None
        self._in_meta = None

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def _sequence_nr(self) -> int:
        return 2 ** 64 - 1   # PyTorch's: accumulators carry no creation order

    def __repr__(self):
        return f"<AccumulateGrad object at {hex(id(self))}>"

    def _pre(self, grads):
        grads = Node._pre(self, grads)
        hooks = self.variable._hooks
        if hooks:
            from ..tensor import _unwrap_grad, _wrap_grad
            g = grads[0]
            for fn in list(hooks):
                out = fn(_wrap_grad(g))
                if out is not None:
                    g = _unwrap_grad(out, g, fn)
            grads = [g]
        return grads

    def _run(self, grads, create_graph):
        v = self.variable
        with self.lock:
            v._accumulate(grads[0], create_graph)
        if v._post_acc_hooks:
            for fn in list(v._post_acc_hooks):
                fn(v)
        return ()

    def _release(self):
        pass  # a leaf's accumulator outlives any one graph


_creating = threading.Lock()


def accumulator_of(t) -> AccumulateGrad:
    """The one AccumulateGrad of leaf ``t`` while any graph references it (made under a lock, so
    two threads building graphs over one leaf get the same one, and so the same lock)."""
    ref = t._acc
    acc = ref() if ref is not None else None
    if acc is None:
        with _creating:
            ref = t._acc
            acc = ref() if ref is not None else None
            if acc is None:
                acc = AccumulateGrad(t)
                t._acc = weakref.ref(acc)
    return acc


def increment_version(tensor) -> None:
    """Bump ``tensor``'s version counter, as an in-place op would (for code that changes a
    tensor's values behind autograd's back and wants saved-value checks to notice)."""
    tensors = tensor if isinstance(tensor, (list, tuple)) else (tensor,)
    for t in tensors:
        t._version_box().v += 1


class _MultiHandle:
    __slots__ = ("_handles",)

    def __init__(self, handles):
        self._handles = handles

    def remove(self) -> None:
        for h in self._handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward over several tensors. ``mode="all"``: ``fn(grads)`` after
    the gradient of every tensor this backward reaches is computed (``None`` for the others);
    ``mode="any"``: ``fn(grad)`` with the first of them. Returns a handle with ``remove()``."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    from . import engine
    tensors = tuple(tensors)
    key = object()   # this registration's entry in each running backward's hook state

    def node_of(t):
        return t.grad_fn if t.grad_fn is not None else accumulator_of(t)

    def hook_for(i):
        def hook(grad):
            task = engine.current_task()
            state = task.hook_state
            if mode == "any":
                if key not in state:
                    state[key] = True
                    fn(grad)
                return None
            entry = state.get(key)
            if entry is None:
                if task.targets is not None and any(t.grad_fn is None for t in tensors):
                    raise RuntimeError(
                        "A leaf node was passed to _will_engine_execute_node but we are "
                        "currently running autograd.grad(). This is currently not supported.")
                expected = sum(task.will_execute(node_of(t)) for t in tensors)
                entry = state[key] = [[None] * len(tensors), expected]
            entry[0][i] = grad
            entry[1] -= 1
            if entry[1] == 0:
                fn(tuple(entry[0]))
            return None
        return hook
    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)])


class GradientEdge(NamedTuple):
    """Where the gradient of a tensor is computed in the backward graph: input ``output_nr`` of
    ``node`` (the tensor's grad_fn, or its AccumulateGrad for a leaf). ``autograd.grad``
    accepts one in place of a tensor among its inputs and outputs. ``ownership_token`` exists
    for PyTorch compatibility; gpugrad's nodes are Python objects the edge already keeps
    alive."""
    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The GradientEdge of ``tensor``: ``autograd.grad(loss, get_gradient_edge(x))`` equals
    ``autograd.grad(loss, x)``, and stays valid after ``x`` itself is gone."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    from ..ops._op import edge  # layering: a tensor's edge may re-derive a view through an op
    node, nr = edge(tensor)
    return GradientEdge(node, nr)
