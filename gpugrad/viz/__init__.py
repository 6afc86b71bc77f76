"""gpugrad.viz: look at the backward graph.

- :func:`print_graph` / :func:`format_graph`: an indented text tree (``dag=True`` for each
  shared node once, ``show_saved=True`` for what backward keeps in memory).
- :func:`make_dot`: a Graphviz drawing with torchviz's conventions.
- :class:`module_scopes`: record which module created each node (used by ``make_dot``'s
  ``collapse`` and by ``gpugrad.utils.tensorboard``).

Every traversal is iterative: graphs of any depth work.
"""
from ._graph import module_scopes
from .dot import ExecutableNotFound, make_dot
from .text import format_graph, print_graph

__all__ = ["print_graph", "format_graph", "make_dot", "module_scopes", "ExecutableNotFound"]
