"""What every graph view shares: finding the roots, walking the backward graph without
recursion, describing leaves and saved values, and the module each node was created in.

The views read the graph the engine runs, through the attributes nodes document
(``next_functions``, ``variable``, ``saved_names`` with ``_saved``, ``metadata``) plus ``_seq``
(creation order); nothing is copied or rebuilt.
"""
from __future__ import annotations

from collections import deque

from ..autograd.graph import _seq


def is_tensor(obj) -> bool:
    from ..tensor import Tensor
    return isinstance(obj, Tensor)


def as_list(var) -> list:
    """``var`` (a tensor, a node, or a tuple/list/dict of them) as a flat list."""
    if isinstance(var, dict):
        var = list(var.values())
    if isinstance(var, (tuple, list)):
        out = []
        stack = list(reversed(var))
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                stack.extend(reversed(list(v.values())))
            elif isinstance(v, (tuple, list)):
                stack.extend(reversed(v))
            else:
                out.append(v)
        return out
    return [var]


def root_nodes(var) -> list:
    """The backward nodes the views start from: each tensor's ``grad_fn`` (the accumulator of
    a leaf that requires grad), or the nodes themselves."""
    from ..autograd.graph import accumulator_of
    roots = []
    for v in as_list(var):
        if is_tensor(v):
            if v.grad_fn is not None:
                roots.append(v.grad_fn)
            elif v.requires_grad:
                roots.append(accumulator_of(v))
        elif v is not None and hasattr(v, "next_functions"):
            roots.append(v)
        elif v is not None:
            raise TypeError(f"expected a Tensor or a graph node, got {type(v).__name__}")
    return roots


def inputs(node) -> tuple:
    """``node.next_functions`` (a node without that attribute has no inputs)."""
    return getattr(node, "next_functions", ()) or ()


def walk(roots, max_depth=None):
    """Every node reachable from ``roots`` once, breadth first, with its (smallest) depth.

    Iterative, so a graph of any depth is fine. Nodes at ``max_depth`` are yielded but not
    expanded."""
    seen = set()
    queue = deque()
    for r in roots:
        if id(r) not in seen:
            seen.add(id(r))
            queue.append((r, 0))
    while queue:
        node, depth = queue.popleft()
        yield node, depth
        if max_depth is not None and depth >= max_depth:
            continue
        for nxt, _ in inputs(node):
            if nxt is not None and id(nxt) not in seen:
                seen.add(id(nxt))
                queue.append((nxt, depth + 1))


def node_label(node) -> str:
    """The class name: ``MulBackward0``, ``AccumulateGrad``, ``MyFnBackward``."""
    return type(node).__name__


def is_accumulator(node) -> bool:
    """An ``AccumulateGrad`` (it has ``.variable``; looked up on the class: a failed lookup on
    a node is slow)."""
    return hasattr(type(node), "variable")


def is_custom(node) -> bool:
    """The node of a custom ``autograd.Function`` (it has ``saved_tensors``)."""
    return hasattr(type(node), "saved_tensors")


def param_map(params) -> dict:
    """``{id(tensor): name}`` from a dict name -> tensor or an iterable of (name, tensor)."""
    if params is None:
        return {}
    items = params.items() if hasattr(params, "items") else params
    out = {}
    for name, t in items:
        if not is_tensor(t):
            raise TypeError(f"params[{name!r}] is a {type(t).__name__}, expected a Tensor")
        out.setdefault(id(t), name)
    return out


def shape_str(value) -> str:
    """``(2, 3)`` as torchviz writes sizes."""
    return "(" + ", ".join(str(int(s)) for s in value.shape) + ")"


_DTYPES: dict = {}


def describe(value) -> str:
    """``(2, 3) float32``, ``(1,) float64`` for an array or tensor, the repr of anything else."""
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        dtype = _DTYPES.get(value.dtype)
        if dtype is None:
            dtype = _DTYPES[value.dtype] = str(value.dtype)
        return f"{tuple(int(s) for s in value.shape)} {dtype}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def nbytes(value) -> int:
    if is_tensor(value):
        return value.nbytes
    return int(getattr(value, "nbytes", 0))


def saves_anything(node) -> bool:
    """Whether the node's class keeps values for backward at all (ops declare it)."""
    cls = type(node)
    if cls.__name__ == "AccumulateGrad":
        return False
    return bool(getattr(cls, "saves", True) or getattr(cls, "saves_output", False)
                or getattr(cls, "saved_names", ()))


def saved_values(node):
    """``[(name, value), ...]`` that the node's backward reads, or None once freed.

    Names follow PyTorch's ``_saved_<name>`` (``self``, ``other``, ``result``); custom
    ``Function`` nodes list their ``ctx.saved_tensors`` as ``saved_tensors[i]``."""
    saved = getattr(node, "_saved", ())
    if saved is None:
        return None
    names = tuple(getattr(type(node), "saved_names", ()))
    custom = is_custom(node)
    out = []
    for i, value in enumerate(saved):
        if value is None:
            continue
        if i < len(names):
            name = names[i]
        else:
            name = f"saved_tensors[{i}]" if custom else f"saved[{i}]"
        out.append((name, value))
    return out


_NODE_SLOTS = frozenset({"next_functions", "_seq", "_saved", "_versions", "_extra", "_in_meta",
                         "__weakref__", "variable"})


def node_attrs(node) -> dict:
    """Non-array attributes an op kept from its forward (``axes``, ``keepdims``, ...)."""
    attrs = {}
    temps = set(getattr(type(node), "temps", ()))
    for cls in type(node).__mro__:
        for slot in cls.__dict__.get("__slots__", ()):
            if slot in _NODE_SLOTS or slot in temps or slot.startswith("__") or slot in attrs:
                continue
            value = getattr(node, slot, None)
            if value is None or hasattr(value, "shape") and hasattr(value, "dtype"):
                continue
            attrs[slot] = value
    return attrs


def metadata(node) -> dict:
    """``node.metadata`` without creating an empty dict on every node of a large graph."""
    extra = getattr(node, "_extra", None)
    return (extra.get("metadata") if extra else None) or {}


def module_of(node, params: dict):
    """Qualified module name a node belongs to, or None.

    Nodes created under :func:`module_scopes` carry it in ``metadata["module"]``; a parameter's
    accumulator belongs to the module prefix of the parameter's name (``fc1.weight`` -> fc1)."""
    if is_accumulator(node):
        name = params.get(id(node.variable))
        return name.rpartition(".")[0] if name else None
    return metadata(node).get("module")


class module_scopes:
    """Context manager recording which module's ``forward`` created each backward node.

    ``with module_scopes(model): out = model(x)`` sets ``node.metadata["module"]`` (the
    qualified name, ``"fc1"``; ``""`` for the model's own forward) and
    ``node.metadata["scope"]`` (``"SimpleNet/Linear[fc1]"``, TensorBoard's form) on every node
    created inside a module's forward, the innermost module winning. It uses forward pre-hooks
    and forward hooks on every submodule and removes them on exit.
    """

    def __init__(self, model):
        self.model = model
        self.scopes: dict = {}      # qualified name -> "SimpleNet/Linear[fc1]"
        self.classes: dict = {}     # qualified name -> class name
        self._handles: list = []
        self._starts: dict = {}

    def __enter__(self):
        for name, mod in self.model.named_modules():
            cls = type(mod).__name__
            self.classes[name] = cls
            if name == "":
                self.scopes[name] = cls
            else:
                parent, _, attr = name.rpartition(".")
                self.scopes[name] = f"{self.scopes.get(parent, parent)}/{cls}[{attr}]"
            self._handles.append(mod.register_forward_pre_hook(self._pre(name)))
            self._handles.append(mod.register_forward_hook(self._post(name)))
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return False

    def _pre(self, name):
        def hook(module, args):
            # a fresh sequence number: every node created after this has a larger ``_seq``
            self._starts.setdefault(name, []).append(next(_seq))
        return hook

    def _post(self, name):
        def hook(module, args, output):
            start = self._starts[name].pop()
            self.tag(output, start, name)
        return hook

    def tag(self, output, start, name):
        """Mark the nodes behind ``output`` created after ``start`` (and not yet marked by an
        inner module) as belonging to module ``name``."""
        scope = self.scopes.get(name, name)
        stack = [n for n in root_nodes([o for o in as_list(output) if is_tensor(o)])]
        seen = set()
        while stack:
            node = stack.pop()
            if id(node) in seen or is_accumulator(node) or getattr(node, "_seq", -1) <= start:
                continue
            seen.add(id(node))
            md = node.metadata
            if "module" not in md:
                md["module"] = name
                md["scope"] = scope
            stack.extend(n for n, _ in inputs(node) if n is not None)
