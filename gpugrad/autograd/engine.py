"""The backward engine: iterative, dependency-counted, frees saved values as it goes.

Nodes run in PyTorch's order: a node runs once every edge into it has delivered its gradient,
and among ready nodes the most recently created runs first (so hooks fire in PyTorch's order).
"""
from __future__ import annotations

import threading
from heapq import heapify, heappop, heappush

import numpy as np

from .. import _parallel
from . import anomaly, fusion
from .grad_mode import state as grad_state
from .graph import AccumulateGrad


def _graph(roots, targets):
    """Dependency counts of the nodes that must run (all of them, or those reaching a target)."""
    deps, stack, rootset = {}, list(roots), set(roots)
    if targets is None:
        while stack:
            for c, _ in stack.pop().next_functions:
                if c is None:
                    continue
                if c in deps:
                    deps[c] += 1
                else:
                    deps[c] = 1
                    if c not in rootset:
                        stack.append(c)
        return deps, None
    parents, seen = {}, set(roots)
    while stack:
        n = stack.pop()
        for c, _ in n.next_functions:
            if c is None:
                continue
            parents.setdefault(c, []).append(n)
            if c not in seen:
                seen.add(c)
                stack.append(c)
    needed = {n for n in targets if n in seen}
    stack = list(needed)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    for n in needed:
        for c, _ in n.next_functions:
            if c in needed:
                deps[c] = deps.get(c, 0) + 1
    return deps, needed


class Task:
    """One running ``execute`` (they nest: a backward inside a custom backward): what hooks
    may ask about it (``will_execute``) and state they keep for its duration."""
    __slots__ = ("roots", "deps", "needed", "targets", "hook_state")

    def __init__(self, roots, deps, needed, targets):
        self.roots, self.deps, self.needed, self.targets = roots, deps, needed, targets
        self.hook_state = {}

    def will_execute(self, node) -> bool:
        if self.needed is not None:
            return node in self.needed
        return node in self.deps or node in self.roots


class _Running(threading.local):
    """This thread's running executes, innermost last: each thread runs its own backward, and a
    hook asks about the one it runs in."""
    def __init__(self):
        self.tasks = []


_running = _Running()


def current_task():
    """The innermost ``execute`` running on this thread, or None."""
    tasks = _running.tasks
    return tasks[-1] if tasks else None


def execute(roots, root_grads, retain_graph, create_graph, targets=None):
    """Run backward from ``roots`` (edges ``(node, output_nr)``) seeded with ``root_grads``.

    ``targets`` maps nodes to the ``(slot, output_nr)`` pairs whose gradients are to be
    captured and returned instead of accumulated into ``.grad`` (``autograd.grad``).
    """
    nodes = [n for n, _ in roots]
    deps, needed = _graph(nodes, targets)
    captured = {} if targets is not None else None
    buffers = {}
    for (n, nr), g in zip(roots, root_grads):
        if needed is not None and n not in needed:
            continue
        buf = buffers.setdefault(n, [None] * n.n_outputs)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    heap = [(-n._seq, n) for n in buffers if not deps.get(n)]
    heapify(heap)
    check_nan = anomaly.is_anomaly_check_nan_enabled()
    # None: no fusion; else the least number of elements a region's gradient must have
    fuse = (None if create_graph or anomaly.is_enabled() or not root_grads
            else fusion.min_size(root_grads[0]))
    prev_mode = grad_state.enabled
    grad_state.enabled = create_graph and not grad_state.inference
    tasks = _running.tasks
    tasks.append(Task(nodes, deps, needed, targets))
    # a node that became ready while nothing else was runs next, off the heap; when its gradient
    # came whole from one edge it is handed over directly (``handed``), not through ``buffers``
    nxt = handed = None
    pop, get, AG = buffers.pop, buffers.get, AccumulateGrad
    try:
        while nxt is not None or heap:
            if nxt is not None:
                n, nxt = nxt, None
            else:
                n = heappop(heap)[1]
            if handed is not None:
                grads, handed = handed, None
            else:
                grads = pop(n, None)
            if grads is None:
                grads = [None] * n.n_outputs
            if n._extra is not None or n.__class__ is AG:
                grads = n._pre(grads)
            if targets is not None and n in targets:
                for slot, nr in targets[n]:
                    captured[slot] = grads[nr]
                if n.__class__ is AG:
                    continue
            edges = n.next_functions
            if grads[0] is None and (len(grads) == 1 or all(g is None for g in grads)):
                out = (None,) * len(edges)
            elif fuse is not None and n.elementwise and grads[0].size >= fuse and (
                    n._extra is None) and (region := fusion.run(
                    n, grads, deps, buffers, needed, targets, retain_graph)) is not None:
                edges, out = region   # n and the nodes below it, in one kernel
            else:
                try:
                    out = n._run(grads, create_graph)
                    if n._extra is not None:
                        out = n._post(out, grads)
                except Exception:
                    if anomaly.is_enabled():
                        anomaly.report(n)
                    raise
                if check_nan:
                    anomaly.check_nan(n, out)
            if not retain_graph:
                n._saved = None  # _release(), inlined for the common case
                if n.temps:
                    n._release()
            for (c, nr), g in zip(edges, out):
                if c is None or (needed is not None and c not in needed):
                    continue
                if g is not None:
                    buf = get(c)
                    if buf is None:
                        if deps[c] == 1 and nxt is None and not heap and c.n_outputs == 1:
                            nxt, handed = c, [g]  # its only edge, and nothing else is ready
                            continue
                        if c.n_outputs == 1:
                            buffers[c] = [g]
                        else:
                            buf = buffers[c] = [None] * c.n_outputs
                            buf[nr] = g
                    else:
                        buf[nr] = g if buf[nr] is None else _add(buf[nr], g)
                d = deps[c] - 1
                deps[c] = d
                if d == 0:
                    if nxt is None and not heap:
                        nxt = c
                    else:
                        if nxt is not None:
                            if handed is not None:
                                buffers[nxt], handed = handed, None
                            heappush(heap, (-nxt._seq, nxt))
                            nxt = None
                        heappush(heap, (-c._seq, c))
            out = g = None  # the buffers are now the only holders (lets .grad take them)
    finally:
        grad_state.enabled = prev_mode
        tasks.pop()
    return captured


def _add(a, b):
    """The sum of two gradients of one input: large numpy ones on the CPU's threads."""
    if _parallel.worth_it(a):
        out = _parallel.elementwise(np.add, (a, b), ufunc=np.add)
        if out is not None:
            return out
    return a + b
