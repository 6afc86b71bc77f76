"""Seed 000: define-by-run control flow, destruction of the graph after backward, and a recursive
walk of ``grad_fn.next_functions`` (the TensorBoard cell is covered by the viz tests)."""
from __future__ import annotations

import re

import pytest

import gpugrad as torch

SECOND_BACKWARD = ("Trying to backward through the graph a second time (or directly access "
                   "saved tensors after they have already been freed).")
NODE_REPR = r"<{}Backward0 object at 0x[0-9a-f]+>"


def dynamic_forward(x, y):
    if x.item() > 0:
        for _ in range(2):
            y = y * x
    else:
        y = y + x
    return y


@pytest.mark.parametrize("xv, root, value, grads", [
    (0.5, "MulBackward0", 3.0 * 0.25, (2 * 3.0 * 0.5, 0.25)),   # y x^2: (2xy, x^2)
    (-0.5, "AddBackward0", 3.0 - 0.5, (1.0, 1.0)),              # y + x
])
def test_dynamic_control_flow_builds_a_different_graph(device, xv, root, value, grads):
    x = torch.tensor([xv], requires_grad=True, device=device)
    y = torch.tensor([3.0], requires_grad=True, device=device)
    out = dynamic_forward(x, y)
    assert type(out.grad_fn).__name__ == root
    assert re.fullmatch(NODE_REPR.format(root[:-len("Backward0")]), repr(out.grad_fn))
    assert f"Current Graph Root: {out.grad_fn}".startswith(f"Current Graph Root: <{root} ")
    assert out.item() == pytest.approx(value)
    out.backward()
    assert x.grad.item() == pytest.approx(grads[0])
    assert y.grad.item() == pytest.approx(grads[1])


def test_dynamic_control_flow_over_random_inputs(device):
    for seed in range(20):
        torch.manual_seed(seed)
        x = torch.randn(1, requires_grad=True, device=device)
        y = torch.randn(1, requires_grad=True, device=device)
        out = dynamic_forward(x, y)
        expected = "MulBackward0" if x.item() > 0 else "AddBackward0"
        assert out.grad_fn.name() == expected
        # the graph is the path actually taken: two multiplications or one addition
        depth, node = 0, out.grad_fn
        while node.name() == expected:
            depth += 1
            node = node.next_functions[0][0]
        assert depth == (2 if x.item() > 0 else 1)


def test_graph_is_destroyed_after_backward(device):
    x = torch.tensor([2.0], requires_grad=True, device=device)
    y = torch.tensor([3.0], requires_grad=True, device=device)
    loss = x * y
    loss.backward()
    with pytest.raises(RuntimeError, match="^" + re.escape(SECOND_BACKWARD)) as err:
        loss.backward()
    assert "(node: MulBackward0" in str(err.value)  # gpugrad names the freed node
    assert x.grad.item() == 3.0 and y.grad.item() == 2.0  # the failed call added nothing


def print_autograd_graph(node, lines, level=0):
    """The notebook's recursive walk of grad_fn, collecting the printed lines."""
    indent = "    " * level
    lines.append(f"{indent} -> {node}")
    if hasattr(node, "next_functions"):
        for next_node, _ in node.next_functions:
            if next_node is not None:
                print_autograd_graph(next_node, lines, level + 1)
    return lines


def test_graph_traversal_shows_the_shared_leaf_twice(device):
    x = torch.tensor([2.0], requires_grad=True, device=device)
    y = torch.tensor([3.0], requires_grad=True, device=device)
    z = x * y
    out = z + x
    assert out.grad_fn.name() == "AddBackward0"
    lines = print_autograd_graph(out.grad_fn, [])
    shapes = [re.sub(r"0x[0-9a-f]+", "0x", line) for line in lines]
    assert shapes == [
        " -> <AddBackward0 object at 0x>",
        "     -> <MulBackward0 object at 0x>",
        "         -> <AccumulateGrad object at 0x>",
        "         -> <AccumulateGrad object at 0x>",
        "     -> <AccumulateGrad object at 0x>",
    ]
    # x appears twice: it is one AccumulateGrad object, reached from two edges
    add, mul = out.grad_fn, z.grad_fn
    assert add.next_functions[0][0] is mul
    acc_x = mul.next_functions[0][0]
    assert add.next_functions[1][0] is acc_x
    assert lines[2].strip() == lines[4].strip()  # same object, same address printed
    assert acc_x.variable is x and mul.next_functions[1][0].variable is y
    out.backward()
    assert x.grad.item() == 3.0 + 1.0  # both paths accumulate into x.grad
    assert y.grad.item() == 2.0
