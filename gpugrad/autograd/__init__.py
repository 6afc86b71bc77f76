"""gpugrad.autograd: the backward engine's public API (``backward``, ``grad``), custom
``Function``, grad modes, anomaly detection, gradient checking and forward-mode AD
(``forward_ad``)."""
from __future__ import annotations

from .._bfloat16 import is_inexact
from . import forward_ad, functional, graph
from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, set_detect_anomaly
from .anomaly import is_enabled as is_anomaly_enabled
from .engine import execute
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad",
           "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "gradcheck", "gradgradcheck",
           "GradcheckError", "graph", "functional", "forward_ad", "Variable"]


def _seq_of(x):
    from ..tensor import Tensor
    if x is None:
        return []
    return [x] if isinstance(x, (Tensor, graph.GradientEdge)) else list(x)


def _roots(outputs, grad_outputs, create_graph):
    """Edges and seed gradients of the outputs, with PyTorch's checks."""
    from ..ops._op import edge
    from ..tensor import Tensor
    grads = _seq_of(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad_tensors has {len(grads)} tensors but tensors has "
                           f"{len(outputs)} tensors")
    edges, seeds = [], []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, graph.GradientEdge):
            edges.append(out[:2])
            seeds.append(_edge_seed(out, g, create_graph))
            continue
        if not out._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               "have a grad_fn")
        if g is None:
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not is_inexact(out._data.dtype):
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            a = out._data
            seed = Tensor._make(_ones(a)) if create_graph else _ones(a)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradient must be a Tensor or None, got {type(g).__name__}")
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}.")
            if g.device != out.device:
                raise RuntimeError(f"invalid gradient at index {i} - expected device "
                                   f"{out.device} but got {g.device}")
            if g._data.dtype != out._data.dtype:   # as PyTorch: in the output's dtype
                g = g.to(out.dtype)
            seed = g if create_graph else g._data
        edges.append(edge(out))
        seeds.append(seed)
    return edges, seeds


def _edge_seed(e, g, create_graph):
    """The seed gradient of a GradientEdge output: ``g``, or ones when the edge is a leaf's
    (a non-leaf node does not record its output's shape, so it needs ``g``)."""
    from ..tensor import Tensor
    if g is None:
        var = getattr(e.node, "variable", None)
        if var is None:
            raise RuntimeError("gpugrad: a GradientEdge output that is not a leaf's needs its "
                               "grad_outputs entry (the shape of its gradient is not recorded)")
        if var._data.size != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        return Tensor._make(_ones(var._data)) if create_graph else _ones(var._data)
    if not isinstance(g, Tensor):
        raise TypeError(f"gradient must be a Tensor or None, got {type(g).__name__}")
    return g if create_graph else g._data


def _ones(a):
    from .._backend import xp_of
    return xp_of(a).ones(a.shape, dtype=a.dtype)


CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using autograd.grad "
    "when creating the graph to avoid this. If you have to use this function, make sure to "
    "reset the .grad fields of your parameters to None after use to break the cycle and avoid "
    "the leak.")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves (or of
    ``inputs`` only)."""
    tensors = _seq_of(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _seq_of(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    edges, seeds = _roots(tensors, grad_tensors, create_graph)
    if inputs is None:
        if create_graph:
            import warnings
            warnings.warn(CREATE_GRAPH_CYCLE, UserWarning, stacklevel=3)
        execute(edges, seeds, retain_graph, create_graph)
        return
    targets = _targets(inputs, allow_unused=True)
    captured = execute(edges, seeds, retain_graph, create_graph, targets)
    for i, t in enumerate(inputs):
        g = captured.get(i)
        if g is None:
            continue
        if isinstance(t, graph.GradientEdge):
            raise RuntimeError("gpugrad: backward(inputs=...) takes tensors; pass a "
                               "GradientEdge to autograd.grad instead")
        if t.grad_fn is None:
            with graph.accumulator_of(t).lock:
                t._accumulate(g, create_graph)
            if t._post_acc_hooks:
                for fn in list(t._post_acc_hooks):
                    fn(t)
        elif create_graph:
            t._grad = g if t._grad is None else t._grad + g
        else:
            t._store_grad(g)


def _targets(inputs, allow_unused):
    from ..ops._op import edge
    from ..tensor import Tensor
    targets = {}
    for i, t in enumerate(inputs):
        if isinstance(t, graph.GradientEdge):
            targets.setdefault(t.node, []).append((i, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if not t._rg:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        node, nr = edge(t)
        targets.setdefault(node, []).append((i, nr))
    return targets


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).
    ``is_grads_batched``: the first dimension of each ``grad_outputs`` entry is a batch of
    vectors, and each result has the same leading dimension (one backward per vector)."""
    from ..tensor import _wrap_grad
    outputs, inputs = _seq_of(outputs), _seq_of(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    edges, seeds = _roots(outputs, grad_outputs, create_graph)
    captured = execute(edges, seeds, retain_graph, create_graph, _targets(inputs, allow_unused))
    result = []
    for i, t in enumerate(inputs):
        g = captured.get(i)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in "
                    "the graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                if isinstance(t, graph.GradientEdge):
                    raise RuntimeError("materialize_grads cannot be used when the given input "
                                       "is a GradientEdge")
                from .._creation import zeros_like
                g = zeros_like(t)
            result.append(g)
            continue
        result.append(_wrap_grad(g))
    return tuple(result)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    from ..ops.shape.joining import stack
    batches = _seq_of(grad_outputs) if grad_outputs is not None else [None] * len(outputs)
    for i, (g, out) in enumerate(zip(batches, outputs)):
        if g is not None and tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {g[0].shape if g.ndim else g.shape} "
                f"and output[{i}] has a shape of {out.shape}. If you only want some tensors in "
                "`grad_output` to be considered batched, consider using vmap.")
    n = next((g.shape[0] for g in batches if g is not None), 1)
    rows = [grad(outputs, inputs, [None if g is None else g[b] for g in batches],
                 retain_graph=retain_graph or b < n - 1, create_graph=create_graph,
                 allow_unused=allow_unused) for b in range(n)]
    result = []
    for t, column in zip(inputs, zip(*rows)):
        if column[0] is None:   # unused: materialised unbatched, as PyTorch does
            from .._creation import zeros_like
            result.append(zeros_like(t) if materialize_grads else None)
        else:
            result.append(stack(column))
    return tuple(result)


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from ..tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: ``Variable(t, requires_grad=False)`` is a new tensor sharing ``t``'s data, cut
    from its graph, with ``requires_grad`` set; every tensor is an instance of ``Variable``."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        from ..tensor import Tensor
        if volatile:
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        if data is None:
            from .._creation import tensor
            data = tensor([])
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


def __getattr__(name):
    # the profiler loads on first use (``gpugrad.autograd.profiler.profile()``)
    if name == "profiler":
        import importlib
        return importlib.import_module("gpugrad.autograd.profiler")
    raise AttributeError(f"module 'gpugrad.autograd' has no attribute '{name}'")
