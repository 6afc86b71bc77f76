"""Seed 002 (dynamic computation graph): eager forward, graph destroyed by backward, a custom
``autograd.Function`` (MyReLU), hook order during backward, zeroing accumulated gradients, and
leaf / non-leaf tensors with ``retain_grad`` (the nn.Module / TensorBoard cells are covered by
the nn and viz tests)."""
from __future__ import annotations

import re
import warnings
from functools import partial

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad as torch

SECOND_BACKWARD = ("Trying to backward through the graph a second time (or directly access "
                   "saved tensors after they have already been freed).")
NONLEAF_GRAD = ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed.")


def _chain(node):
    """Names along the first edge of each node (the notebook's loss path)."""
    names = []
    while node is not None:
        names.append(type(node).__name__)
        node = next((n for n, _ in node.next_functions if n is not None), None)
    return names


def test_forward_runs_eagerly_and_backward_frees_the_graph(device):
    w = torch.tensor([[3.0, 1.0]], requires_grad=True, device=device)
    b = torch.tensor([[3.0]], requires_grad=True, device=device)
    torch.manual_seed(0)
    x = torch.randn(10, 2, device=device)
    y = torch.randn(10, 1, device=device)
    y_hat = x @ w.t() + b
    loss = torch.mean(torch.pow(y_hat - y, 2))

    xn, yn = to_numpy(x).astype(np.float64), to_numpy(y).astype(np.float64)
    ref_hat = xn @ np.array([[3.0], [1.0]]) + 3.0
    np.testing.assert_allclose(to_numpy(y_hat.detach()), ref_hat, rtol=1e-5)
    np.testing.assert_allclose(loss.detach().item(), ((ref_hat - yn) ** 2).mean(), rtol=1e-5)
    assert loss.detach().grad_fn is None and not loss.detach().requires_grad

    assert _chain(loss.grad_fn) == ["MeanBackward0", "PowBackward0", "SubBackward0",
                                    "AddBackward0", "MmBackward0", "TBackward0", "AccumulateGrad"]
    mm = y_hat.grad_fn.next_functions[0][0]
    assert mm.next_functions[0] == (None, 0)          # x does not require grad
    assert y_hat.grad_fn.next_functions[1][0].variable is b

    loss.backward()
    g = 2 * (ref_hat - yn) / len(yn)
    np.testing.assert_allclose(to_numpy(w.grad), g.T @ xn, rtol=1e-4)
    np.testing.assert_allclose(to_numpy(b.grad), g.sum(keepdims=True), rtol=1e-4)
    with pytest.raises(RuntimeError, match="^" + re.escape(SECOND_BACKWARD)):
        loss.backward()


class MyReLU(torch.autograd.Function):

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


def test_custom_function_myrelu(device):
    w = torch.tensor([[3., 1.]], requires_grad=True, device=device)
    b = torch.tensor([[3.0]], requires_grad=True, device=device)
    x = torch.tensor([[-1., -1.], [1., 1.]], device=device)
    y = torch.tensor([[2., 3]], device=device)

    myrelu = MyReLU.apply
    y_hat = myrelu(x @ w.t() + b)
    loss = torch.mean(torch.pow(y_hat - y, 2))
    loss.backward()

    np.testing.assert_allclose(to_numpy(w.grad), [[4.5, 4.5]])
    np.testing.assert_allclose(to_numpy(b.grad), [[4.5]])
    assert re.fullmatch(r"<gpugrad\.autograd\.function\.MyReLUBackward object at 0x[0-9a-f]+>",
                        repr(y_hat.grad_fn))
    assert y_hat.grad_fn.name() == "MyReLUBackward"
    assert type(y_hat.grad_fn.next_functions[0][0]).__name__ == "AddBackward0"


def test_custom_function_myrelu_repr_of_gradients():
    w = torch.tensor([[3., 1.]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    x = torch.tensor([[-1., -1.], [1., 1.]])
    loss = torch.mean(torch.pow(MyReLU.apply(x @ w.t() + b) - torch.tensor([[2., 3]]), 2))
    loss.backward()
    assert repr(w.grad) == "tensor([[4.5000, 4.5000]])"
    assert repr(b.grad) == "tensor([[4.5000]])"


def _hooked_graph(device, log):
    x = torch.tensor(3.0, requires_grad=True, device=device)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2

    def f(name, grad):
        log.append((name, grad.item()))

    y1.register_hook(partial(f, "y1"))
    y2.register_hook(partial(f, "y2"))
    return x, y1, y2, loss


def test_hooks_fire_in_backward_order_y2_before_y1(device):
    log = []
    x, _, _, loss = _hooked_graph(device, log)
    loss.backward()
    assert log == [("y2", 4.0), ("y1", -4.0)]
    assert x.grad.item() == 4.0


def test_hook_receives_the_printed_gradient():
    printed = []
    x = torch.tensor(3.0, requires_grad=True)
    y1, y2 = x + 1, 2 * x
    loss = (y1 - y2) ** 2
    # print(name + "_grad:", grad) prints str(grad) (an f-string would give the value)
    y1.register_hook(lambda g: printed.append("y1_grad: " + str(g)))
    y2.register_hook(lambda g: printed.append("y2_grad: " + str(g)))
    loss.backward()
    assert printed == ["y2_grad: tensor(4.)", "y1_grad: tensor(-4.)"]
    assert "x_grad: " + str(x.grad) == "x_grad: tensor(4.)"


def test_retain_graph_accumulates_unless_zeroed(device):
    x = torch.tensor(3.0, requires_grad=True, device=device)
    y1, y2 = x + 1, 2 * x
    loss = (y1 - y2) ** 2
    seen = []
    for _ in range(2):
        loss.backward(retain_graph=True)
        seen.append(x.grad.item())
    assert seen == [4.0, 8.0]  # without zeroing, gradients accumulate

    x.grad.zero_()
    for _ in range(2):
        loss.backward(retain_graph=True)
        grad = x.grad.detach_()
        grad.zero_()
        assert x.grad.item() == 0.0
        assert grad is x.grad
    loss.backward()  # the graph is still alive: retained every time
    assert x.grad.item() == 4.0


def test_only_leaves_keep_grad(device):
    x = torch.tensor(3.0, requires_grad=True, device=device)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    loss.backward()
    for t in (loss, y1, y2):
        with pytest.warns(UserWarning, match="^" + re.escape(NONLEAF_GRAD)):
            assert t.grad is None
    assert x.grad.item() == 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None  # no warning for a leaf


def test_leaf_and_requires_grad_table(device):
    x = torch.tensor(3.0, requires_grad=True, device=device)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    table = {name: (t.is_leaf, t.requires_grad)
             for name, t in (("x", x), ("y1", y1), ("y2", y2), ("loss", loss))}
    assert table == {"x": (True, True), "y1": (False, True), "y2": (False, True),
                     "loss": (False, True)}
    c = torch.tensor(3.0, device=device)
    assert (c.is_leaf, c.requires_grad) == (True, False)
    assert ((c + 1).is_leaf, (c + 1).requires_grad) == (True, False)


def test_retain_grad_keeps_a_non_leaf_gradient(device):
    x = torch.tensor(3.0, requires_grad=True, device=device)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    loss.retain_grad()
    assert loss.retains_grad and not y1.retains_grad
    loss.backward()
    assert loss.grad.item() == 1.0
    assert x.grad.item() == 4.0


def test_retain_grad_repr():
    x = torch.tensor(3.0, requires_grad=True)
    loss = (x + 1 - 2 * x) ** 2
    loss.retain_grad()
    loss.backward()
    assert repr(loss.grad) == "tensor(1.)"
    assert repr(x.grad) == "tensor(4.)"
