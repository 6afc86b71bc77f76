"""Seed 004 (torch.autograd notes): tensors without requires_grad stay out of the graph,
retain_graph and accumulation, switching gradient recording off (no_grad, set_grad_enabled),
``grad_fn`` / ``next_functions``, and what the digit in ``MulBackward0`` and the integer in
``(AccumulateGrad, 0)`` really mean (the notes guess wrong: they are the op overload and the
producer's output index, not instance counters). The nn/optim training loop and torchviz cells
are covered by the nn, optim and viz tests."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad as torch

SECOND_BACKWARD = ("Trying to backward through the graph a second time (or directly access "
                   "saved tensors after they have already been freed).")


def test_tensor_without_requires_grad_is_not_in_the_graph(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = torch.tensor([4.0, 5.0, 6.0], requires_grad=False, device=device)
    z = x * y
    assert z.grad_fn.next_functions[1] == (None, 0)
    assert z.grad_fn.next_functions[0][0].variable is x
    loss = z.sum()
    loss.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [4.0, 5.0, 6.0])
    assert y.grad is None


def test_retain_graph_accumulates_3_then_6(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = x + 2
    z = sum(y * 3)  # Python's sum over the elements, as in the notes
    assert z.shape == ()
    z.backward(retain_graph=True)
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 3.0, 3.0])
    z.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [6.0, 6.0, 6.0])
    with pytest.raises(RuntimeError, match="^" + re.escape(SECOND_BACKWARD)):
        z.backward()  # the second call did not retain the graph
    np.testing.assert_array_equal(to_numpy(x.grad), [6.0, 6.0, 6.0])


def test_retain_graph_with_torch_sum(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    z = ((x + 2) * 3).sum()
    for expected in (3.0, 6.0, 9.0):
        z.backward(retain_graph=True)
        np.testing.assert_array_equal(to_numpy(x.grad), [expected] * 3)


def test_no_grad_context_outputs_are_detached_leaves(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    assert torch.is_grad_enabled()
    with torch.no_grad():
        assert not torch.is_grad_enabled()
        output = x * 2
    assert (output.requires_grad, output.grad_fn, output.is_leaf) == (False, None, True)
    assert torch.is_grad_enabled()  # restored on exit
    output_with_grad = x * 2
    assert output_with_grad.requires_grad
    assert output_with_grad.grad_fn.name() == "MulBackward0"


def test_set_grad_enabled_as_a_call(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    torch.set_grad_enabled(False)
    assert not torch.is_grad_enabled()
    output = x * 2
    torch.set_grad_enabled(True)
    assert torch.is_grad_enabled()
    output_with_grad = x * 2
    assert not output.requires_grad and output.grad_fn is None
    assert output_with_grad.requires_grad


def test_set_grad_enabled_as_a_context_manager(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    for mode in (False, True):
        with torch.set_grad_enabled(mode):
            assert torch.is_grad_enabled() is mode
            out = x * 2
        assert torch.is_grad_enabled()
        assert out.requires_grad is mode
    with torch.no_grad():
        with torch.set_grad_enabled(True):
            assert (x * 2).requires_grad
        assert not torch.is_grad_enabled()


def test_grad_fn_and_next_functions(device):
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = x + 2
    z = y * 3
    assert z.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.next_functions[0][0] is y.grad_fn
    assert z.grad_fn.next_functions[1] == (None, 0)
    assert y.grad_fn.name() == "AddBackward0"
    acc, nr = y.grad_fn.next_functions[0]
    assert (type(acc).__name__, nr) == ("AccumulateGrad", 0)
    assert acc.variable is x and acc.next_functions == ()
    assert y.grad_fn.next_functions[1] == (None, 0)


def test_grad_fn_reprs():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x + 2
    z = y * 3
    assert re.fullmatch(r"<MulBackward0 object at 0x[0-9a-f]+>", repr(z.grad_fn))
    assert re.fullmatch(r"\(\(<AddBackward0 object at 0x[0-9a-f]+>, 0\), \(None, 0\)\)",
                        repr(z.grad_fn.next_functions))
    assert re.fullmatch(r"\(\(<AccumulateGrad object at 0x[0-9a-f]+>, 0\), \(None, 0\)\)",
                        repr(y.grad_fn.next_functions))


def test_node_suffix_is_not_an_instance_counter(device):
    x = torch.tensor([1.0, 2.0], requires_grad=True, device=device)
    muls = [x * 2, x * 3, (x * 4) * 5]
    assert {m.grad_fn.name() for m in muls} == {"MulBackward0"}
    assert muls[0].grad_fn is not muls[1].grad_fn
    # the digit is the overload: sum() and sum(dim) are different overloads
    assert x.sum().grad_fn.name() == "SumBackward0"
    assert x.sum(0).grad_fn.name() == "SumBackward1"


def test_edge_integer_is_the_producers_output_index(device):
    t = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, device=device)
    a, b = t.split(2)
    edges = (a * b).grad_fn.next_functions
    assert edges[0][0] is edges[1][0]
    assert edges[0][0].name() == "SplitBackward0"
    assert (edges[0][1], edges[1][1]) == (0, 1)
    # a leaf used three times: one AccumulateGrad, always input 0 of it
    x = torch.tensor([1.0], requires_grad=True, device=device)
    out = x * x + x
    mul_edges = out.grad_fn.next_functions[0][0].next_functions
    assert mul_edges[0] == mul_edges[1] == out.grad_fn.next_functions[1]
    assert mul_edges[0][0].variable is x
