"""User-defined differentiable functions: subclass ``Function`` with static ``forward(ctx, ...)``
and ``backward(ctx, *grads)``, call ``apply``. The node recorded is ``<ClassName>Backward``."""
from __future__ import annotations

import functools

from . import anomaly, saved_hooks
from .grad_mode import no_grad
from .grad_mode import state as grad_state
from .graph import SECOND_BACKWARD, Node, _seq


class FunctionCtx:
    """The ``ctx`` passed to forward and backward."""

    def save_for_backward(self, *tensors):
        from ..tensor import Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self._to_save = tensors

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

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<gpugrad.autograd.function.{self.name()} object at {hex(id(self))}>"

    @property
    def needs_input_grad(self) -> tuple:
        return self._needs

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise RuntimeError(f"{SECOND_BACKWARD} (node: {self.name()}{self._creation()})")
        self._check_saved()
        saved = self._saved
        return saved.tensors() if saved.__class__ is not tuple else saved

    def _run(self, grads, create_graph):
        from ..tensor import Tensor
        gs = []
        for g, meta in zip(grads, self._out_meta):
            if g is None and self.materialize_grads:
                g = meta[2].zeros(meta[0], dtype=meta[1])
            gs.append(None if g is None else g if isinstance(g, Tensor) else Tensor._make(g))
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

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

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
        node = cls._backward_cls.__new__(cls._backward_cls)
        node._extra = None
        node._in_meta = None
        node._versions = None
        node._saved = ()
        tensors = [a for a in args if isinstance(a, Tensor)]
        record = grad_state.enabled and any(t._rg for t in tensors)
        node._needs = tuple(isinstance(a, Tensor) and a._rg and record for a in args)
        with no_grad():
            out = cls.forward(node, *args, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
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
                               if isinstance(o, Tensor) else ((), None, None) for o in outs)
        dirty = {id(t) for t in node._dirty}
        non_diff = {id(t) for t in node._non_diff}
        inputs = {id(a) for a in args if isinstance(a, Tensor)}
        results = []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                results.append(o)
                continue
            if id(o) in dirty:
                from ..tensor_inplace import check
                check(o)
            elif id(o) in inputs:  # returned an input unchanged: a new tensor viewing it
                o = Tensor._make(o._data)
            if id(o) in non_diff or o._data.dtype.kind not in "fc":
                o._rg = False
                o.grad_fn = None
            else:
                o._rg, o.grad_fn, o._out_nr = True, node, i
            results.append(o)
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
