"""Seed 003 (d2l autograd): gradients of ``2 x.x``, ``x.sum()``, ``x * x``, detach to treat a
value as a constant, and the gradient of Python control flow: for seed 003's ``f``,
``f'(a) = factor * 2^(iterations + 1)``."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad as torch


def test_grad_of_dot_product(device):
    x = torch.arange(4.0, device=device)
    x.requires_grad = True
    assert x.grad is None
    y = 2 * torch.dot(x, x)
    assert y.item() == 28.0
    assert y.grad_fn.name() == "MulBackward0"
    y.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, 4.0, 8.0, 12.0])
    assert to_numpy(x.grad == 4 * x).all()


def test_grad_of_dot_product_reprs():
    x = torch.arange(4.0)
    assert repr(x) == "tensor([0., 1., 2., 3.])"
    x.requires_grad = True
    assert repr(x) == "tensor([0., 1., 2., 3.], requires_grad=True)"
    y = 2 * torch.dot(x, x)
    assert repr(y) == "tensor(28., grad_fn=<MulBackward0>)"
    y.backward()
    assert repr(x.grad) == "tensor([ 0.,  4.,  8., 12.])"
    assert repr(x.grad == 4 * x) == "tensor([True, True, True, True])"


def test_retain_grad_on_sum(device):
    x = torch.arange(4.0, device=device)
    x.requires_grad = True
    y1 = 2 * torch.dot(x, x)
    y1.backward()
    x.grad.zero_()
    y2 = x.sum()
    y2.retain_grad()
    loss = y2
    loss.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1.0, 1.0, 1.0, 1.0])
    assert y2.grad.item() == 1.0 and y2.grad.shape == ()


def test_detach_treats_a_value_as_constant(device):
    x = torch.arange(4.0, device=device)
    x.requires_grad = True
    (2 * torch.dot(x, x)).backward()

    x.grad.zero_()
    y = x * x
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, 2.0, 4.0, 6.0])

    x.grad.zero_()
    y = x * x
    u = y.detach()
    assert not u.requires_grad and u.grad_fn is None
    z = u * x
    z.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, 1.0, 4.0, 9.0])  # = u

    x.grad.zero_()
    y.sum().backward()  # y's own graph was not consumed by z's backward
    np.testing.assert_array_equal(to_numpy(x.grad), [0.0, 2.0, 4.0, 6.0])


def f(a):
    b = a * 2
    while b.norm() < 1000:
        b = b * 2
    if b.sum() > 0:
        c = b
    else:
        c = 100 * b
    return c


def path_of(a: float) -> tuple[int, int]:
    """(factor, iterations) of f at ``a``, replayed in plain Python floats (doubling is exact)."""
    b, iterations = 2 * a, 0
    while abs(b) < 1000:
        b *= 2
        iterations += 1
    return (1 if b > 0 else 100), iterations


def test_control_flow_gradient_for_the_notebook_input(device):
    a = torch.tensor(0.336690, requires_grad=True, device=device)
    hooked = []
    a.register_hook(lambda g: hooked.append(g.item()))
    d = f(a)
    d.backward()
    assert a.grad.item() == 4096.0  # 11 doublings after a * 2: 2^12
    assert hooked == [4096.0]
    assert (d / a).item() == pytest.approx(4096.0)


def test_control_flow_gradient_over_many_seeds(device):
    factors = set()
    for seed in range(200):
        torch.manual_seed(seed)
        a = torch.randn(size=(), requires_grad=True, device=device)
        assert a.shape == () and a.dim() == 0
        value = a.item()
        if value == 0.0:  # f loops forever at 0
            continue
        d = f(a)
        d.backward()
        factor, iterations = path_of(value)
        want = factor * 2.0 ** (iterations + 1)
        assert a.grad.item() == want, f"seed {seed}: a={value}"
        assert d.item() == pytest.approx(want * value, rel=1e-6)
        factors.add(factor)
        # the graph recorded exactly the path taken: one MulBackward0 per multiplication
        muls, node = 0, d.grad_fn
        while node is not None and type(node).__name__ == "MulBackward0":
            muls += 1
            node = next((n for n, _ in node.next_functions if n is not None), None)
        assert muls == 1 + iterations + (factor == 100)
        assert type(node).__name__ == "AccumulateGrad" and node.variable is a
    assert factors == {1, 100}  # both branches of the if were taken


def test_randn_size_empty_tuple_is_zero_dim():
    torch.manual_seed(42)
    a = torch.randn(size=(), requires_grad=True)
    assert a.shape == () and a.ndim == 0 and a.numel() == 1
    assert a.requires_grad and a.is_leaf
    assert f"{a.item():.6f}" == f"{float(a):.6f}"
