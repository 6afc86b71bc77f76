"""The backward graph as an indented tree (seed 000's ``print_autograd_graph``, made iterative).

Example: ``print_graph(x * y + x, params={"x": x, "y": y})`` for leaves ``x`` and ``y``::

    AddBackward0
    ├── MulBackward0
    │   ├── AccumulateGrad  x (1,) float32
    │   └── AccumulateGrad  y (1,) float32
    └── AccumulateGrad  x (1,) float32

The tree view repeats a shared node under every consumer (the leaf ``x`` above: its gradient
is accumulated twice). ``dag=True`` prints each node once and marks later uses as references
(``AccumulateGrad #2 (see above)``).
"""
from __future__ import annotations

import sys

from . import _graph as G

INDENT_CAP = 32   # deeper levels keep this indentation and print their depth instead

_UNICODE = ("├── ", "└── ", "│   ", "    ")
_ASCII = ("|-- ", "`-- ", "|   ", "    ")


def _human(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


def _label(node, nr, names, show_saved) -> str:
    text = G.node_label(node)
    if nr:
        text += f" (output {nr})"
    if G.is_accumulator(node):
        v = node.variable
        name = names.get(id(v), "")
        text += f"  {name + ' ' if name else ''}{G.describe(v)}"
    module = G.metadata(node).get("module")
    if module:
        text += f"  [{module}]"
    if show_saved:
        saved = G.saved_values(node)
        if saved is None:
            if G.saves_anything(node):
                text += "  saved: freed"
        elif saved:
            text += "  saved: " + ", ".join(f"{k} {G.describe(v)}" for k, v in saved)
    return text


def _summary(roots) -> str:
    nodes = values = freed = size = 0
    arrays = set()
    for node, _ in G.walk(roots):
        nodes += 1
        saved = G.saved_values(node)
        if saved is None:
            freed += G.saves_anything(node)
            continue
        for _, v in saved:
            values += 1
            if id(v) not in arrays:
                arrays.add(id(v))
                size += G.nbytes(v)
    text = f"{nodes} nodes, {values} saved values, {_human(size)} saved"
    return text + (f", {freed} nodes' saved values freed by backward" if freed else "")


def format_graph(var, *, dag: bool = False, show_saved: bool = False, params=None,
                 max_depth: int | None = None, max_lines: int | None = 200_000,
                 ascii: bool = False) -> str:
    """The backward graph of ``var`` (a tensor, a ``grad_fn`` node, or a tuple of them) as an
    indented tree, one node per line, inputs below their consumer.

    dag:        print each node once; a node reached again prints as ``Name #k (see above)``.
    show_saved: add the shapes/dtypes of the values each node saved for backward (``freed``
                after a backward without ``retain_graph``), and a total at the end.
    params:     ``dict(model.named_parameters())`` (or any name -> tensor map): leaves print by
                name.
    max_depth:  do not expand nodes deeper than this (``...`` marks the cut).
    max_lines:  stop after this many lines (the tree view of a graph with much sharing grows
                exponentially; ``dag=True`` does not). None: no limit.
    ascii:      draw the tree with ASCII characters only.
    """
    tee, last, pipe, blank = _ASCII if ascii else _UNICODE
    names = G.param_map(params)
    roots = G.root_nodes(var)
    if not roots:
        return "(no graph: the tensor does not require grad)"
    lines: list = []
    ids: dict = {}
    truncated = False
    # stack entries: node, output index, depth, prefix of its line, prefix of its inputs' lines
    stack = [(r, 0, 0, "", "") for r in reversed(roots)]
    while stack:
        if max_lines is not None and len(lines) >= max_lines:
            truncated = True
            break
        node, nr, depth, prefix, child_prefix = stack.pop()
        if node is None:   # a "..." line for inputs cut by max_depth
            lines.append(prefix + f"... ({nr} more)")
            continue
        deep = f"[depth {depth}] " if depth > INDENT_CAP else ""
        if dag and id(node) in ids:
            lines.append(f"{prefix}{deep}{G.node_label(node)} #{ids[id(node)]} (see above)")
            continue
        label = _label(node, nr, names, show_saved)
        if dag:
            ids[id(node)] = len(ids) + 1
            label = label.replace(G.node_label(node), f"{G.node_label(node)} #{ids[id(node)]}", 1)
        lines.append(prefix + deep + label)
        children = [(n, k) for n, k in G.inputs(node) if n is not None]
        if not children:
            continue
        grow = depth < INDENT_CAP
        if max_depth is not None and depth >= max_depth:
            stack.append((None, len(children), depth + 1, child_prefix + last, ""))
            continue
        for i in range(len(children) - 1, -1, -1):
            n, k = children[i]
            is_last = i == len(children) - 1
            line_prefix = child_prefix + (last if is_last else tee)
            sub = child_prefix + (blank if is_last else pipe) if grow else child_prefix
            stack.append((n, k, depth + 1, line_prefix, sub))
    if truncated:
        lines.append(f"... output cut at {max_lines} lines (dag=True prints each node once; "
                     "max_lines=None prints everything)")
    if show_saved:
        lines.append("-- " + _summary(roots))
    return "\n".join(lines)


def print_graph(var, *, file=None, **kwargs) -> None:
    """Print :func:`format_graph` (same options) to ``file`` (default stdout)."""
    print(format_graph(var, **kwargs), file=file if file is not None else sys.stdout)
