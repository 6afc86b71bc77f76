"""User-defined differentiable functions: subclass ``Function``, call ``apply``. The node
recorded is ``<ClassName>Backward``; ``backward(ctx, *grads)`` returns one gradient per input.

Two styles, told apart as PyTorch does (is ``setup_context`` overridden?):

- ``forward(ctx, *args)`` sets ``ctx`` up itself;
- ``forward(*args)`` is a plain function of its inputs, and
  ``setup_context(ctx, inputs, output)`` saves what backward needs.

An optional ``jvp(ctx, *tangents)`` gives forward-mode AD its tangents (see forward_ad.py).
"""
from __future__ import annotations

import functools
import inspect
import threading
import weakref

from .._bfloat16 import is_inexact
from . import anomaly, saved_hooks
from .grad_mode import no_grad
from .grad_mode import state as grad_state
from .graph import SECOND_BACKWARD, Node, _seq, new_node

DIRTY_LEAF = "a leaf Variable that requires grad has been used in an in-place operation."
DIRTY_VIEW_OF_LEAF = ("a view of a leaf Variable that requires grad is being used in an "
                      "in-place operation.")
DIRTY_NOT_RETURNED = ("Some elements marked as dirty during the forward method were not "
                      "returned as output. The inputs that are modified inplace must all be "
                      "outputs of the Function.")
DIRTY_VIEW_OUTPUTS = (
    "If your Function modifies inplace an input that is a view of another Tensor, your "
    "Function cannot return more than one Tensor. This is not supported by the current "
    "autograd engine. You should either make sure the input is not a view (using .clone() for "
    "example) or make your Function only return one Tensor (potentially splitting it into two "
    "Functions: one doing the inplace that returns a single Tensor and a second one that does "
    "the other operations). You can ask on the forum https://discuss.pytorch.org/ if you need "
    "help to do this change.")
_FUNC_DOCS = ("For more details, please see "
              "https://pytorch.org/docs/main/notes/extending.func.html")


class _Transforms(threading.local):
    """Set by the transforms that need to see inside ``apply`` (per thread, as grad mode)."""
    vmap_depth = 0     # gpugrad.func.vmap calls being evaluated
    capture = None     # a list from forward_ad: each ctx (node) ``apply`` creates joins it


transforms = _Transforms()


class FunctionCtx:
    """The ``ctx`` passed to forward and backward."""

    def save_for_backward(self, *tensors):
        from ..tensor import Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Tensors ``jvp`` reads back as ``ctx.saved_tensors``."""
        from ..tensor import Tensor
        if any(t is not None and not isinstance(t, Tensor) for t in tensors):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                 "should save non-tensors as attributes on ctx.")
        self._for_forward = tensors

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = bool(value)


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call; also the ``ctx`` its methods receive."""
    _forward_cls = None
    materialize_grads = True
    _to_save = ()
    _dirty = ()
    _non_diff = ()
    _for_forward = ()
    _in_jvp = False

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<gpugrad.autograd.function.{self.name()} object at {hex(id(self))}>"

    @property
    def needs_input_grad(self) -> tuple:
        return self._needs

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:   # as PyTorch: inside jvp, what save_for_forward kept
            return self._for_forward
        if self._saved is None:
            raise RuntimeError(f"{SECOND_BACKWARD} (node: {self.name()}{self._creation()})")
        self._check_saved()
        saved = self._saved
        return saved.tensors() if saved.__class__ is not tuple else saved

    def _run(self, grads, create_graph):
        from ..tensor import Tensor, _wrap_grad
        gs = []
        for g, meta in zip(grads, self._out_meta):
            if g is None and self.materialize_grads and meta is not None:  # None: not a tensor
                g = meta[2].zeros(meta[0], dtype=meta[1])
            gs.append(_wrap_grad(g))   # (a 0-d gradient may come as a numpy scalar)
        out = self._forward_cls.backward(self, *gs)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._in_shapes)   # one gradient per forward input, tensor or not
        if len(out) != n:
            if len(out) > n and all(o is None for o in out[n:]):
                out = out[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(out)})")
        for i, g in enumerate(out):
            if g is not None and i not in self._tensor_at:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   f"input was not a Variable")
        res = []
        for i, (node, _) in zip(self._tensor_at, self.next_functions):
            g = out[i]
            if g is None or node is None:
                res.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient of type "
                                f"{type(g).__name__} at index {i}; expected a Tensor or None")
            shape = self._in_shapes[i]
            if tuple(g._data.shape) != shape:
                from ..ops._op import unbroadcast
                try:
                    import numpy as np
                    np.broadcast_shapes(shape, g._data.shape)
                    if len(g._data.shape) < len(shape):
                        raise ValueError
                    g = unbroadcast(_TensorF, g, shape) if create_graph else Tensor._make(
                        unbroadcast(_array_F(g), g._data, shape))
                except ValueError:
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {i} - got "
                        f"{list(g._data.shape)} but expected shape compatible with "
                        f"{list(shape)}") from None
            res.append(g if create_graph else g._data)
        return tuple(res)

    def _release(self):
        self._saved = None


def _array_F(g):
    from ..ops._op import array_ns
    return array_ns(g._data)


class _TensorFProxy:
    def __getattr__(self, name):
        from ..ops import tensor_ns
        return getattr(tensor_ns, name)


_TensorF = _TensorFProxy()


class FunctionMeta(type):
    """Makes a node class ``<Name>Backward`` for every ``Function`` subclass."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": "gpugrad.autograd.function"})


class Function(metaclass=FunctionMeta):
    """Base of custom differentiable functions (see module docstring)."""

    # Under gpugrad.func.vmap a Function must allow a generated rule (or bring its own vmap),
    # as in PyTorch; gpugrad's vmap runs it once per sample either way.
    generate_vmap_rule = False

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method.")

    @classmethod
    def apply(cls, *args, **kwargs):
        from ..ops._op import edge
        from ..tensor import Tensor
        new_style = cls.setup_context is not _BASE_SETUP
        if new_style or kwargs:
            args = bind_inputs(cls, args, kwargs, new_style)
        tr = transforms
        if tr.vmap_depth:
            _refuse_vmap(cls, new_style)
        node = cls._backward_cls.__new__(cls._backward_cls)
        node._extra = None
        node._in_meta = None
        node._versions = None
        node._saved = ()
        if tr.capture is not None:
            tr.capture.append(node)
        tensors = [a for a in args if isinstance(a, Tensor)]
        record = grad_state.enabled and any(t._rg for t in tensors)
        node._needs = tuple(isinstance(a, Tensor) and a._rg and record for a in args)
        with no_grad():
            if new_style:
                out = cls.forward(*args)
                cls.setup_context(node, args, out)
            else:
                out = cls.forward(node, *args)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        dirty = node._dirty
        if dirty:
            _mark_dirty(dirty, outs)
        if node._for_forward and tr.capture is None:
            del node._for_forward   # only a jvp reads it
        if not record:
            return out
        # edges to the tensor inputs only, as PyTorch (backward still returns one per input)
        node._tensor_at = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        node.next_functions = tuple(edge(args[i]) for i in node._tensor_at)
        node._seq = next(_seq)
        if len(outs) != 1:
            node.n_outputs = len(outs)  # one gradient slot per output, as backward receives them
        node._in_shapes = tuple(tuple(a._data.shape) if isinstance(a, Tensor) else ()
                                for a in args)
        from .. import _backend
        node._out_meta = tuple((o._data.shape, o._data.dtype, _backend.xp_of(o._data))
                               if isinstance(o, Tensor) else None for o in outs)
        dirty = {id(t) for t in dirty}
        non_diff = {id(t) for t in node._non_diff}
        inputs = {id(a) for a in tensors}
        results, views = [], []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                results.append(o)
                continue
            if id(o) in dirty:
                _check_dirty(o)
                if o._base is not None:
                    views.append((i, o))
            elif id(o) in inputs:  # returned an input unchanged: a new tensor viewing it
                o = Tensor._make(o._data)
            if id(o) in non_diff or not is_inexact(o._data.dtype):
                o._rg = False
                o.grad_fn = None
            else:
                o._rg, o.grad_fn, o._out_nr = True, node, i
            results.append(o)
        if views:
            _rebase_views(node, args, outs, views)
        saved, versions = [], []
        for t in node._to_save:
            saved.append(t)
            if t is None:
                versions.append(None)
            else:
                vb = t._version_box()
                versions.append((vb, vb.v, -2))
        node._saved = tuple(saved)
        node._versions = tuple(versions)
        node._to_save = ()
        if saved_hooks.stack and saved:
            saved_hooks.pack(node, None, None)
        if anomaly._state.enabled:
            anomaly.record(node)
        return results[0] if single else tuple(results)


_BASE_SETUP = Function.setup_context
_BASE_VMAP = Function.vmap
_MISSING = object()
_params: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _forward_params(forward):
    """``(signature, names of the leading positional parameters, whether they are all of
    them)`` of a forward, computed once per function."""
    got = _params.get(forward)
    if got is None:
        sig = inspect.signature(forward)
        params = list(sig.parameters.values())
        names = []
        for p in params:
            if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                break
            names.append(p.name)
        got = _params[forward] = (sig, tuple(names), len(names) == len(params))
    return got


def bind_inputs(cls, args, kwargs, new_style=None) -> tuple:
    """``cls.apply``'s arguments as the tuple of forward inputs, bound as PyTorch binds them: a
    new-style forward gets its defaults filled in; a keyword takes its parameter's position (a
    keyword-only parameter is refused, and a gap before it is an error)."""
    if new_style is None:
        new_style = cls.setup_context is not _BASE_SETUP
    sig, names, plain = _forward_params(cls.forward)
    if new_style:
        if not kwargs and plain and len(args) == len(names):
            return args
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        args, kwargs = bound.args, bound.kwargs
        if not kwargs:
            return args
    else:
        names = names[1:]   # after ctx
    slots = list(args)
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{k}'")
        i = names.index(k)
        if i < len(args):
            raise TypeError(f"forward() got multiple values for argument '{k}'")
        slots.extend([_MISSING] * (i + 1 - len(slots)))
        slots[i] = v
    for i, v in enumerate(slots):
        if v is _MISSING:
            raise TypeError(f"forward() missing required argument: '{names[i]}' (position {i})")
    return tuple(slots)


def _mark_dirty(dirty, outs) -> None:
    """As PyTorch: each tensor marked dirty moves on one version (also when nothing is
    recorded), and all of them must be among the outputs."""
    for t in dirty:
        t._version_box().v += 1
    returned = {id(o) for o in outs}
    if any(id(t) not in returned for t in dirty):
        raise RuntimeError(DIRTY_NOT_RETURNED)


def _check_dirty(t) -> None:
    if t._rg and t.grad_fn is None:
        raise RuntimeError(DIRTY_LEAF)
    base = t._base
    if base is not None and base._rg and base.grad_fn is None:
        raise RuntimeError(DIRTY_VIEW_OF_LEAF)


def _rebase_views(node, args, outs, views) -> None:
    """A view modified in place (marked dirty) changed its base too: as for an in-place op on a
    view, the base's history goes through a CopySlices wrapping this node, and the view is
    re-derived from the base."""
    from ..ops.indexing.getitem import AsStridedBackward0, CopySlicesOver
    from ..tensor import Tensor
    if sum(isinstance(o, Tensor) for o in outs) > 1:
        raise RuntimeError(DIRTY_VIEW_OUTPUTS)
    (k, v), = views
    at = [j for j, i in enumerate(node._tensor_at) if args[i] is v]
    if not at:   # not an input: nothing earlier to rebase
        return
    base, view_fn = v._base, v._meta["view_fn"]
    base.grad_fn = CopySlicesOver.make(base, _ViewFirst.make(node, at[0], k), view_fn)
    base._out_nr, base._rg = 0, True
    refreshed = AsStridedBackward0.apply(base, view_fn=view_fn)
    v.grad_fn, v._out_nr, v._rg = refreshed.grad_fn, 0, True
    v._meta["vver"] = v._vbox.v


class _ViewFirst(Node):
    """A Function's node as CopySlices expects its wrapped node: one gradient in (the view's
    output), the modified view's edge first (PyTorch assumes it is the first input)."""
    __slots__ = ("fn", "at", "k")
    temps = ("fn",)

    @classmethod
    def make(cls, fn, at, k):
        n = new_node(cls)
        n.fn, n.at, n.k = fn, at, k
        nf = fn.next_functions
        n.next_functions = (nf[at],) + nf[:at] + nf[at + 1:]
        return n

    def name(self):
        return self.fn.name()

    def _run(self, grads, create_graph):
        gs = [None] * len(self.fn._out_meta)
        gs[self.k] = grads[0]
        res = self.fn._run(gs, create_graph)
        at = self.at
        return (res[at],) + tuple(res[:at]) + tuple(res[at + 1:])

    def _release(self):
        self._saved = None
        self.fn._release()


def _refuse_vmap(cls, new_style) -> None:
    """PyTorch's refusals for a Function applied under ``vmap`` (also to unbatched inputs)."""
    if not new_style:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod. " + _FUNC_DOCS)
    own = cls.vmap is not _BASE_VMAP
    if cls.generate_vmap_rule and own:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both "
                           f"generate_vmap_rule=True and an overridden vmap staticmethod. Please "
                           f"set generate_vmap_rule=False or delete the overridden vmap "
                           f"staticmethod to avoid ambiguity. " + _FUNC_DOCS)
    if not (cls.generate_vmap_rule or own):
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           f"support. Please override and implement the vmap staticmethod or set "
                           f"generate_vmap_rule=True. " + _FUNC_DOCS)


def once_differentiable(fn):
    """Mark a ``backward`` as not differentiable: it runs without building a graph, and a
    double backward through it raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            out = fn(ctx, *args)
        if grad_state.enabled and any(getattr(a, "_rg", False) for a in args):
            from ..tensor import Tensor
            outs = out if isinstance(out, tuple) else (out,)
            marked = []
            for o in outs:
                if isinstance(o, Tensor):
                    o = Tensor._make(o._data)
                    o._rg = True
                    o.grad_fn = _NotDifferentiable.make(ctx.name())
                marked.append(o)
            return tuple(marked) if isinstance(out, tuple) else marked[0]
        return out
    return wrapper


class _NotDifferentiable(Node):
    __slots__ = ("_fname",)

    @classmethod
    def make(cls, fname):
        n = cls.__new__(cls)
        n._fname = fname
        n.next_functions = ()
        n._seq = next(_seq)
        n._saved, n._versions, n._extra, n._in_meta = (), None, None, None
        return n

    def name(self):
        return "DelayedError"

    def _run(self, grads, create_graph):
        raise RuntimeError(f"trying to differentiate twice a function that was marked with "
                           f"@once_differentiable ({self._fname})")
