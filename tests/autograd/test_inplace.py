"""In-place semantics under autograd: the version counter, errors when a saved value was
modified, in-place ops on leaves, views and detached tensors, setitem's CopySlices; PyTorch's
errors word for word."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.autograd import gradcheck
from tests.autograd._errors import first
from tests.autograd._tensors import t

LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_INPLACE = ("a view of a leaf Variable that requires grad is being used in an "
                        "in-place operation.")


# -- in-place ---------------------------------------------------------------------------------
def test_version_counter(device):
    a = t([1.0, 2.0], device)
    assert a._version == 0
    a.add_(1)
    assert a._version == 1
    a.mul_(2)
    a[0] = 5.0
    assert a._version == 3
    b = a + 1
    assert b._version == 0


def legacy_type(device, name):
    """PyTorch's legacy type name in its messages: torch.FloatTensor, torch.cuda.FloatTensor."""
    return f"gpugrad.{'cuda.' if device.startswith('cuda') else ''}{name}"


def test_modified_by_inplace_error(device):
    x = t([1.0, 2.0, 3.0], device, True, dtype=gpugrad.float32)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_type(device, 'FloatTensor')} [3]], which is output 0 "
            "of Sigmoid, is at "
            "version 1; expected version 0 instead.")) as err:
        y.sum().backward()
    assert "Hint: enable anomaly detection" in str(err.value)


def test_modified_by_inplace_through_detach(device):
    x = t([1.0, 2.0], device, True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_type(device, 'DoubleTensor')} [2]], which is output 0 "
            "of Exp, is at "
            "version 1; expected version 0 instead.")):
        y.sum().backward()


def test_modified_saved_input_error(device):
    x = t([1.0, 2.0], device, True)
    h = x * 1
    z = h * h
    h.add_(1)
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{legacy_type(device, 'DoubleTensor')} [2]]")):
        z.sum().backward()


def test_inplace_on_leaf_errors(device):
    x = t([1.0, 2.0], device, True)
    with pytest.raises(RuntimeError, match=first(LEAF_INPLACE)):
        x.add_(1)
    with pytest.raises(RuntimeError, match=first(LEAF_INPLACE)):
        x += 1
    with pytest.raises(RuntimeError, match=first(VIEW_OF_LEAF_INPLACE)):
        x[0:1].mul_(2)
    with pytest.raises(RuntimeError, match=first(VIEW_OF_LEAF_INPLACE)):
        x[0] = 2.0
    assert x._version == 0 and to_numpy(x).tolist() == [1.0, 2.0]


def test_inplace_allowed_under_no_grad(device):
    x = t([1.0, 2.0], device, True)
    g = t([0.5, 0.5], device)
    with gpugrad.no_grad():
        x.sub_(g)
        x[0] = 3.0
        x.mul_(2)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert x._version == 3
    np.testing.assert_allclose(to_numpy(x), [6.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [12.0, 6.0])


def test_setitem_records_copyslices_gradients(device):
    x = t([1.0, 2.0, 3.0], device, True)
    v = t(5.0, device, True)
    y = x * 2
    y[1] = v * 3
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert type(y.grad_fn).__name__ == "CopySlices"
    np.testing.assert_allclose(to_numpy(y), [2.0, 15.0, 6.0])
    (y * t([1.0, 2.0, 3.0], device)).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 0.0, 6.0])
    assert v.grad.item() == 6.0


def test_setitem_gradcheck(device):
    def f(x, v):
        y = x.clone()
        y[:, 1:] = v
        y[0, 0] = v[0, 0] * v[1, 1]
        return y * y

    x = t(np.arange(6.0).reshape(2, 3), device, True)
    v = t([[0.5, 1.5], [2.5, -1.0]], device, True)
    assert gradcheck(f, (x, v))
    assert gpugrad.autograd.gradgradcheck(f, (x, v))


def test_inplace_on_view_of_non_leaf_updates_the_base(device):
    def f(x):
        b = x * 1
        v = b.t()[1]          # a view of a view
        v.exp_()
        b[0, 0] = b[0, 0] * 2
        return b * t([[1.0, 2.0], [3.0, 4.0]], device)

    x = t([[0.1, 0.2], [0.3, 0.4]], device, True)
    out = f(x)
    ref = np.array([[0.2, np.exp(0.2)], [0.3, np.exp(0.4)]]) * [[1.0, 2.0], [3.0, 4.0]]
    np.testing.assert_allclose(to_numpy(out), ref)
    out.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad),
                               [[2.0, 2 * np.exp(0.2)], [3.0, 4 * np.exp(0.4)]])
    assert gradcheck(f, (x,))
    assert gpugrad.autograd.gradgradcheck(f, (x,))


def test_sibling_view_sees_the_inplace_update(device):
    x = t([1.0, 2.0, 3.0], device, True)
    y = x * 1
    v = y[1:]
    w = y[:2]
    v.mul_(2)
    np.testing.assert_allclose(to_numpy(w), [1.0, 4.0])
    (w * w).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 16.0, 0.0])


def test_inplace_on_an_input_whose_value_no_gradient_reads(device):
    # x * c (c constant) reads only c for x's gradient: x may change in place afterwards,
    # as in PyTorch, which saves only what the needed gradients read
    x = t([1.0, 2.0], device, True)
    c = t([3.0, 4.0], device)
    m = t([[1.0, 2.0], [3.0, 4.0]], device)
    for f, want in ((lambda h: h * 2, [2.0, 2.0]), (lambda h: c * h, [3.0, 4.0]),
                    (lambda h: h / 2, [0.5, 0.5]), (lambda h: h @ m, [3.0, 7.0]),
                    (lambda h: gpugrad.dot(h, c), [3.0, 4.0])):
        x.grad = None
        h = x * 1
        out = f(h)
        h.add_(1)
        out.sum().backward()
        np.testing.assert_allclose(to_numpy(x.grad), want)
    h = x * 1
    out = c / h  # the divisor is read for its own gradient
    h.add_(1)
    with pytest.raises(RuntimeError, match=first(
            "one of the variables needed for gradient computation has been modified by an "
            "inplace operation")):
        out.sum().backward()


def test_inplace_on_a_value_read_by_its_own_op(device):
    x = t([1.0, 2.0, 3.0], device, True)
    y = x * 1
    y.mul_(y)  # the node keeps its own copy of the overwritten input
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 4.0, 6.0])


def test_detach_shares_storage_and_version(device):
    x = t([1.0, 2.0], device, True)
    y = x * 1
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 5.0
    assert to_numpy(y).tolist() == [5.0, 2.0]
    assert y._version == d._version == 1
    d.add_(1)
    assert y._version == 2


def test_detach_inplace(device):
    x = t([1.0], device, True)
    y = x * 2
    y.detach_()
    assert not y.requires_grad and y.grad_fn is None and y.is_leaf
