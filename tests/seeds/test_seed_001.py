"""Seed 001: nodes and edges (``grad_fn``, ``next_functions``), AccumulateGrad as the leaves'
gradient sink, and accumulation of ``.grad`` across backward calls."""
from __future__ import annotations

import re

import pytest

import gpugrad as torch


def _name(edge):
    node, nr = edge
    return (None if node is None else type(node).__name__, nr)


def test_simple_graph_nodes_and_edges(device):
    x = torch.tensor([2.0], requires_grad=True, device=device)
    y = torch.tensor([3.0], requires_grad=True, device=device)
    z = x * y
    out = z + 1

    assert re.fullmatch(r"<AddBackward0 object at 0x[0-9a-f]+>", repr(out.grad_fn))
    edges = out.grad_fn.next_functions
    assert [_name(e) for e in edges] == [("MulBackward0", 0), (None, 0)]
    assert edges[1] == (None, 0)  # the constant 1 has no node but keeps its slot

    z_node = out.grad_fn.next_functions[0][0]
    assert z_node is z.grad_fn
    assert re.fullmatch(r"<MulBackward0 object at 0x[0-9a-f]+>", repr(z_node))
    assert [_name(e) for e in z_node.next_functions] == [("AccumulateGrad", 0),
                                                          ("AccumulateGrad", 0)]

    x_node = z_node.next_functions[0][0]
    y_node = z_node.next_functions[1][0]
    assert x_node.next_functions == () and y_node.next_functions == ()
    assert re.fullmatch(r"<AccumulateGrad object at 0x[0-9a-f]+>", repr(x_node))
    assert x_node is not y_node
    assert x_node.variable is x and y_node.variable is y
    assert x_node.name() == "torch::autograd::AccumulateGrad"


def test_complex_graph_structure_and_shared_accumulators(device):
    x = torch.tensor([2.0], requires_grad=True, device=device)
    y = torch.tensor([3.0], requires_grad=True, device=device)
    x_node, y_node = (x * y).grad_fn.next_functions[0][0], (x * y).grad_fn.next_functions[1][0]
    a = torch.tensor([4.0], requires_grad=True, device=device)
    b = torch.tensor([5.0], requires_grad=True, device=device)
    c = torch.tensor([6.0], requires_grad=True, device=device)

    d = (a + b + c) / (x * y)
    assert d.grad_fn.name() == "DivBackward0"
    assert [_name(e) for e in d.grad_fn.next_functions] == [("AddBackward0", 0),
                                                            ("MulBackward0", 0)]
    add_node = d.grad_fn.next_functions[0][0]
    mul_node = d.grad_fn.next_functions[1][0]
    assert [_name(e) for e in add_node.next_functions] == [("AddBackward0", 0),
                                                           ("AccumulateGrad", 0)]
    add_node_left = add_node.next_functions[0][0]
    add_node_right = add_node.next_functions[1][0]
    assert [_name(e) for e in add_node_left.next_functions] == [("AccumulateGrad", 0),
                                                                ("AccumulateGrad", 0)]
    assert add_node_left.next_functions[0][0].variable is a
    assert add_node_left.next_functions[1][0].variable is b
    assert add_node_right.next_functions == () and add_node_right.variable is c
    # x and y's accumulators are the very objects seen earlier (same address in the notebook)
    assert mul_node.next_functions[0][0] is x_node
    assert mul_node.next_functions[1][0] is y_node

    assert d.item() == 2.5
    d.backward()
    for leaf in (a, b, c):
        assert leaf.grad.item() == pytest.approx(1 / 6)
    assert x.grad.item() == pytest.approx(-15 / (2 * 2 * 3))
    assert y.grad.item() == pytest.approx(-15 / (2 * 3 * 3))


def test_gradient_accumulates_until_zeroed(device):
    w = torch.tensor([1.0], requires_grad=True, device=device)
    loss1 = w * 2
    loss1.backward()
    assert w.grad.item() == 2.0

    loss2 = w * 3  # a new graph: the first one was destroyed by backward
    loss2.backward()
    assert w.grad.item() == 5.0  # 2 + 3, not 3

    grad = w.grad
    w.grad.zero_()
    assert w.grad.item() == 0.0
    assert w.grad is grad  # zeroed in place, like optimizer.zero_grad(set_to_none=False)
    (w * 4).backward()
    assert w.grad.item() == 4.0
