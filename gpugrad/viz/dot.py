"""``make_dot``: the backward graph as Graphviz DOT, with torchviz's call and output conventions.

Backward nodes are grey boxes labelled by class name (``MulBackward0``, ``AccumulateGrad``);
leaves that require grad are light blue, labelled ``"<param name>\\n (<shape>)"``; outputs are
darkolivegreen1 (a view's base darkolivegreen3, dotted edge); saved values are orange on
request. Edges run from inputs toward the output. Node ids are ``id()`` of the objects.

Beyond torchviz: iterative traversal (any depth), ``max_depth``, ``rankdir="LR"`` and
``collapse`` (group or fold the nodes of each module).

Returns a ``graphviz.Digraph`` when the ``graphviz`` package is installed; otherwise a small
:class:`Digraph` with the same ``.source``/``.save()``/``.render()``/``.pipe()``. Rendering
needs the Graphviz ``dot`` program (Debian/Ubuntu: ``apt-get install graphviz``).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

from . import _graph as G

try:
    import graphviz as _graphviz
except ImportError:  # pragma: no cover - depends on the environment
    _graphviz = None

NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1",
                 height="0.2", fontname="monospace")
CLUSTER_ATTR = dict(style="dashed", color="grey40", fontname="monospace", fontsize="10")
_RANKDIRS = ("TB", "LR", "BT", "RL")


class ExecutableNotFound(RuntimeError):
    """The Graphviz ``dot`` program is not on PATH."""


_NO_DOT = ("rendering needs the Graphviz 'dot' program, which was not found on PATH "
           "(Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz; conda: "
           "conda install graphviz). The DOT text is available without it: .source, .save().")

_ID = re.compile(r"([a-zA-Z_][a-zA-Z0-9_]*|-?(\.[0-9]+|[0-9]+(\.[0-9]*)?))$")
_KEYWORDS = {"node", "edge", "graph", "digraph", "subgraph", "strict"}


def _quote(s) -> str:
    s = str(s)
    if _ID.match(s) and s.lower() not in _KEYWORDS:
        return s
    return '"' + re.sub(r'(?<!\\)"', r'\\"', s) + '"'


def _attr_list(label=None, attrs=None) -> str:
    items = ([f"label={_quote(label)}"] if label is not None else []) + [
        f"{k}={_quote(v)}" for k, v in sorted((attrs or {}).items()) if v is not None]
    return f" [{' '.join(items)}]" if items else ""


class Digraph:
    """The part of ``graphviz.Digraph`` that ``make_dot`` needs, for when the ``graphviz``
    package is not installed: build with ``node``/``edge``/``subgraph``, read ``.source``,
    ``save()`` the DOT text, ``render()``/``pipe()`` through the ``dot`` program."""

    def __init__(self, name=None, filename=None, directory="", format="pdf", graph_attr=None,
                 node_attr=None, edge_attr=None):
        self.name = name
        self.filename = filename or f"{name or 'Digraph'}.gv"
        self.directory = directory
        self.format = format
        self.graph_attr = dict(graph_attr or {})
        self.node_attr = dict(node_attr or {})
        self.edge_attr = dict(edge_attr or {})
        self.body: list = []
        self._sub = False

    def node(self, name, label=None, **attrs) -> None:
        self.body.append(("\t" + _quote(name) + _attr_list(label, attrs) + "\n"))

    def edge(self, tail_name, head_name, label=None, **attrs) -> None:
        self.body.append(f"\t{_quote(tail_name)} -> {_quote(head_name)}"
                         f"{_attr_list(label, attrs)}\n")

    def subgraph(self, graph) -> None:
        graph._sub = True
        self.body.extend("\t" + line for line in graph._lines())

    def _lines(self) -> list:
        head = "subgraph" if self._sub else "digraph"
        lines = [f"{head} {_quote(self.name) + ' ' if self.name else ''}{{\n"]
        for kw, attrs in (("graph", self.graph_attr), ("node", self.node_attr),
                          ("edge", self.edge_attr)):
            if attrs:
                lines.append(f"\t{kw}{_attr_list(None, attrs)}\n")
        lines.extend(self.body)
        lines.append("}\n")
        return lines

    @property
    def source(self) -> str:
        return "".join(self._lines())

    def __str__(self):
        return self.source

    def save(self, filename=None, directory=None) -> str:
        """Write the DOT text; returns the file's path."""
        if filename is not None:
            self.filename = filename
        if directory is not None:
            self.directory = directory
        path = os.path.join(self.directory or "", self.filename)
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.source)
        return path

    def pipe(self, format=None) -> bytes:
        """The graph rendered by ``dot`` (``format``: svg, png, pdf, ...) as bytes."""
        return subprocess.run([_dot(), f"-T{format or self.format}"], input=self.source.encode(),
                              capture_output=True, check=True).stdout

    def render(self, filename=None, directory=None, view=False, cleanup=False, format=None,
               outfile=None) -> str:
        """Save the DOT text and run ``dot`` on it; returns the rendered file's path
        (``<filename>.<format>``, or ``outfile``)."""
        if view:
            raise NotImplementedError("view=True needs the graphviz package (pip install "
                                      "graphviz)")
        if format is None and outfile is not None:
            format = os.path.splitext(str(outfile))[1].lstrip(".") or None
        format = format or self.format
        dot = _dot()
        src = self.save(filename, directory)
        out = str(outfile) if outfile is not None else f"{src}.{format}"
        subprocess.run([dot, f"-T{format}", "-o", out, src], check=True, capture_output=True)
        if cleanup:
            os.remove(src)
        return out

    def _repr_svg_(self):
        try:
            return self.pipe("svg").decode()
        except (ExecutableNotFound, subprocess.CalledProcessError):
            return None


def _dot() -> str:
    path = shutil.which("dot")
    if path is None:
        raise ExecutableNotFound(_NO_DOT)
    return path


def _new_digraph(**kw):
    return (_graphviz.Digraph if _graphviz is not None else Digraph)(**kw)


def _fn_label(node, show_attrs, max_attr_chars) -> str:
    """torchviz's ``get_fn_name``: the class name, with a table of attributes on request."""
    name = G.node_label(node)
    if not show_attrs:
        return name
    attrs = {}
    saved = G.saved_values(node)
    for key, value in saved or ():
        attrs[key] = "[saved tensor]" if hasattr(value, "shape") else str(value)
    if saved is None:
        attrs["saved"] = "[freed]"
    for key, value in G.node_attrs(node).items():
        attrs[key] = str(value)
    if not attrs:
        return name
    max_attr_chars = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(v) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1 + col2 + 2, len(name))
    rows = "\n".join(f"{k:<{col1}}: {(v[:col2 - 3] + '...' if len(v) > col2 else v):>{col2}}"
                     for k, v in attrs.items())
    return f"{name}\n{sep}\n{rows}"


class _Graph:
    """Nodes (id -> label, attrs, module) and edges collected before they are emitted."""

    def __init__(self, names):
        self.names = names
        self.nodes: dict = {}
        self.edges: list = []
        self.classes: dict = {}   # module name -> class name, from recorded scopes

    def var_label(self, t, name=None) -> str:
        if not name:
            name = self.names.get(id(t), "")
        return f"{name}\n {G.shape_str(t)}"

    def node(self, key, label, module=None, **attrs):
        if key in self.nodes:   # torchviz re-declares; the last attributes win
            self.nodes[key][1].update(attrs)
            return
        self.nodes[key] = [label, attrs, module]

    def edge(self, tail, head, **attrs):
        self.edges.append((tail, head, attrs))


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50, *,
             max_depth=None, rankdir="TB", collapse=None):
    """Graphviz picture of the backward graph behind ``var`` (a tensor, a node, or a tuple).

    params:      ``dict(model.named_parameters())``: leaves are labelled with these names.
    show_attrs:  label each node with the attributes its backward keeps (torchviz table).
    show_saved:  draw the values saved for backward as orange nodes.
    max_depth:   draw nodes up to this many edges from the output; cut inputs become ``...``.
    rankdir:     "TB" (top to bottom, default) or "LR" (left to right), also "BT", "RL".
    collapse:    True: draw each module's nodes inside a box (cluster); a module name or a
                 list of names: fold each of those modules into a single node; an int n: fold
                 every module n levels below the model (1 = each top-level child). A node's
                 module comes from :func:`gpugrad.viz.module_scopes` (every op) or, without
                 it, from the parameter names in ``params`` (parameters only).
    """
    if rankdir not in _RANKDIRS:
        raise ValueError(f"rankdir must be one of {_RANKDIRS}, got {rankdir!r}")
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth}")
    g = _Graph(G.param_map(params))
    roots = []
    seen_tensors = set()
    for v in G.as_list(var):
        if G.is_tensor(v):
            _add_output(g, v, roots, seen_tensors)
        else:
            roots.extend(G.root_nodes(v))
    _add_backward(g, roots, max_depth, show_attrs, show_saved, max_attr_chars)
    dot = _emit(g, rankdir, collapse)
    _resize(dot)
    return dot


def _add_output(g, t, roots, seen):
    color = "darkolivegreen1"
    while t is not None and id(t) not in seen:   # an output, then its chain of view bases
        seen.add(id(t))
        g.node(str(id(t)), g.var_label(t), fillcolor=color)
        if t.grad_fn is not None:
            roots.append(t.grad_fn)
            g.edge(str(id(t.grad_fn)), str(id(t)))
        base = t._base
        if base is not None:
            g.edge(str(id(base)), str(id(t)), style="dotted")
        t, color = base, "darkolivegreen3"


def _add_backward(g, roots, max_depth, show_attrs, show_saved, max_attr_chars):
    visited = [n for n, _ in G.walk(roots, max_depth)]
    kept = {id(n) for n in visited}
    for node in visited:
        key = str(id(node))
        module = G.module_of(node, g.names)
        scope = G.metadata(node).get("scope")
        if scope and module and module not in g.classes:
            _note_classes(g.classes, module, scope)
        if show_saved and not G.is_custom(node):
            for name, value in G.saved_values(node) or ():
                if hasattr(value, "shape"):
                    g.edge(key, str(id(value)), dir="none")
                    g.node(str(id(value)), g.var_label(value, name), module, fillcolor="orange")
        if G.is_accumulator(node):
            v = node.variable
            g.node(str(id(v)), g.var_label(v), module, fillcolor="lightblue")
            g.edge(str(id(v)), key)
        g.node(key, _fn_label(node, show_attrs, max_attr_chars), module)
        cut = 0
        for nxt, _ in G.inputs(node):
            if nxt is None:
                continue
            if id(nxt) in kept:
                g.edge(str(id(nxt)), key)
            else:
                cut += 1
        if cut:
            g.node(key + "_more", f"... ({cut} more)", module, style="dashed")
            g.edge(key + "_more", key, style="dashed")
        if G.is_custom(node):   # custom Function: always shown, as torchviz does
            for t in G.saved_values(node) or ():
                t = t[1]
                if G.is_tensor(t):
                    g.node(str(id(t)), g.var_label(t), module, fillcolor="orange")
                    g.edge(str(id(t)), key, dir="none")


def _note_classes(classes, module, scope):
    """Class names of ``module`` and its parents from a recorded scope:
    ``("1.0", "Sequential/Sequential[1]/Linear[0]")`` -> 1: Sequential, 1.0: Linear."""
    parts = module.split(".")
    for i, comp in enumerate(scope.split("/")[1:len(parts) + 1]):
        classes.setdefault(".".join(parts[:i + 1]), comp.partition("[")[0])


def _is_flag(collapse) -> bool:
    return collapse is None or isinstance(collapse, bool)


def _fold_target(module, collapse):
    """The folded group a node of ``module`` goes into, or None."""
    if module is None or _is_flag(collapse):
        return None
    if isinstance(collapse, int):
        parts = module.split(".") if module else []
        return ".".join(parts[:collapse]) if collapse > 0 and len(parts) >= collapse else None
    prefixes = [collapse] if isinstance(collapse, str) else list(collapse)
    best = None
    for p in prefixes:
        if module == p or module.startswith(p + ".") or p == "":
            if best is None or len(p) < len(best):
                best = p
    return best


def _emit(g, rankdir, collapse):
    graph_attr = {"size": "12,12"}
    if rankdir != "TB":
        graph_attr["rankdir"] = rankdir
    dot = _new_digraph(node_attr=NODE_ATTR, graph_attr=graph_attr)
    # fold: nodes of a collapsed module become one node
    rename: dict = {}
    folded: dict = {}
    if not _is_flag(collapse):
        for key, (_, _, module) in g.nodes.items():
            target = _fold_target(module, collapse)
            if target is not None:
                rename[key] = "module " + target
                folded.setdefault(target, []).append(key)
    clusters: dict = {}    # module -> [(key, label, attrs)]
    top = []
    for key, (label, attrs, module) in g.nodes.items():
        if key in rename:
            continue
        if collapse is True and module:
            clusters.setdefault(module, []).append((key, label, attrs))
        else:
            top.append((key, label, attrs))
    for target, keys in folded.items():
        cls = g.classes.get(target)
        title = f"{target or 'model'}{f' ({cls})' if cls else ''}"
        top.append(("module " + target, f"{title}\n{len(keys)} nodes",
                    dict(fillcolor="lightgrey", shape="box3d")))
    for key, label, attrs in top:
        dot.node(key, label, **attrs)
    if clusters:
        _emit_clusters(dot, g, clusters)
    done = set()
    for tail, head, attrs in g.edges:
        tail, head = rename.get(tail, tail), rename.get(head, head)
        if tail == head:   # an edge inside a folded module
            continue
        sig = (tail, head, tuple(sorted(attrs.items())))
        if sig in done:
            continue
        done.add(sig)
        dot.edge(tail, head, **attrs)
    return dot


def _emit_clusters(dot, g, clusters):
    """Nested ``subgraph cluster_<module>`` blocks: fc1 inside block inside ... (built deepest
    first, since a subgraph is copied into its parent when added)."""
    modules = set(clusters)
    for m in list(modules):
        parts = m.split(".")
        modules.update(".".join(parts[:i]) for i in range(1, len(parts)))
    subs = {}
    for m in sorted(modules, key=lambda m: (-m.count("."), m)):
        cls = g.classes.get(m)
        attrs = dict(CLUSTER_ATTR, label=f"{m}{f' ({cls})' if cls else ''}")
        sub = subs.get(m)
        if sub is None:
            sub = subs[m] = _new_digraph(name="cluster_" + m, graph_attr=attrs)
        for key, label, nattrs in clusters.get(m, ()):
            sub.node(key, label, **nattrs)
    for m in sorted(modules, key=lambda m: (-m.count("."), m)):
        parent = m.rpartition(".")[0] if "." in m else None
        (subs[parent] if parent is not None else dot).subgraph(subs[m])


def _resize(dot, size_per_element=0.15, min_size=12):
    """torchviz's ``resize_graph``: scale the drawing with the number of statements."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
