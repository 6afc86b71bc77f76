"""One recorded forward of a module, as the graph writers need it (``SummaryWriter.add_graph``):
the backward nodes reachable from the outputs, the module scope of each node, the shape of each
node's outputs, and the names of inputs and parameters."""
from __future__ import annotations

import inspect

from . import _graph as G
from ._graph import module_scopes


def _output_shapes(outputs, ops, leaves) -> dict:
    """``{(id(node), output_nr): shape}`` for every op node: graph nodes do not keep their
    outputs' shapes, but the gradients flowing into a node have them. One ``autograd.grad``
    with a pre-hook on each node reads them (public API only; ``.grad`` is left untouched).
    Best effort: if the backward fails (an op without a derivative), fewer shapes are known."""
    from .._creation import ones_like
    from ..autograd import grad
    shapes: dict = {}
    for t in outputs:
        if t.grad_fn is not None:
            shapes[(id(t.grad_fn), t.output_nr)] = tuple(t.shape)
    roots = [t for t in outputs if t.grad_fn is not None]
    if not roots or not leaves:
        return shapes
    handles = []
    for n in ops:
        def hook(grads, key=id(n)):
            for k, g in enumerate(grads):
                if g is not None:
                    shapes[(key, k)] = tuple(g.shape)
        handles.append(n.register_prehook(hook))
    try:
        grad(roots, leaves, grad_outputs=[ones_like(t) for t in roots], allow_unused=True)
    except Exception:   # noqa: BLE001 - shapes are decoration; the graph is still written
        pass
    finally:
        for h in handles:
            h.remove()
    return shapes


def _arg_names(model, n) -> list:
    names = []
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names.extend(f"{p.name}.{i}" for i in range(n - len(names)))
    names = names[:n]
    return names + [f"input.{i}" for i in range(len(names), n)]


class Recording:
    """One forward of ``model`` with what the graph writers need: the nodes reachable from
    the outputs, each node's module scope, output shapes, and names of inputs/parameters."""

    def __init__(self, model, input_to_model):
        from ..autograd import enable_grad
        if input_to_model is None:
            args = ()
        elif isinstance(input_to_model, (tuple, list)):
            args = tuple(input_to_model)
        else:
            args = (input_to_model,)
        self.inputs: dict = {}        # id(leaf) -> "input/x"
        self.input_tensors: list = []
        rec_args = []
        for name, a in zip(_arg_names(model, len(args)), args):
            if G.is_tensor(a):
                t = a.detach()
                if t.is_floating_point():
                    t.requires_grad_(True)   # so that ops on the input are recorded too
                self.inputs[id(t)] = "input/" + name
                self.input_tensors.append(t)
                a = t
            rec_args.append(a)
        modes = [(m, m.training) for m in model.modules()]
        model.eval()
        try:
            with module_scopes(model) as scopes, enable_grad():
                out = model(*rec_args)
        finally:
            for m, mode in modes:
                m.training = mode
        self.scopes = scopes.scopes
        self.root = scopes.scopes[""]
        self.outputs = [t for t in G.as_list(out) if G.is_tensor(t)]
        self.params = {id(p): name for name, p in model.named_parameters()}
        nodes = [n for n, _ in G.walk(G.root_nodes([t for t in self.outputs if t.requires_grad]))]
        self.accumulators = [n for n in nodes if G.is_accumulator(n)]
        self.ops = sorted((n for n in nodes if not G.is_accumulator(n)), key=lambda n: n._seq)
        self.shapes = _output_shapes(self.outputs, self.ops,
                                     [a.variable for a in self.accumulators])

    def shape(self, node, nr):
        if G.is_accumulator(node):
            return tuple(node.variable.shape)
        s = self.shapes.get((id(node), nr))
        if s is None and G.is_custom(node):   # custom Function outputs
            meta = node._out_meta
            s = tuple(meta[nr][0]) if nr < len(meta) and meta[nr][1] is not None else None
        return s

    def n_outputs(self, node) -> int:
        return len(node._out_meta) if G.is_custom(node) else node.n_outputs

    def param_scope(self, leaf):
        """(scope, attribute) of a parameter: ``("SimpleNet/Linear[fc1]", "weight")``."""
        name = self.params[id(leaf)]
        module, _, attr = name.rpartition(".")
        return self.scopes.get(module, self.root), attr

    def scope(self, node) -> str:
        return G.metadata(node).get("scope") or self.root
