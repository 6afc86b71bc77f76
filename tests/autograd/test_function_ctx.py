"""Custom ``autograd.Function`` in the ``forward(ctx, ...)`` style: needs_input_grad, mark_dirty,
mark_non_differentiable, set_materialize_grads, several outputs, double backward,
once_differentiable, the checks on returned gradients and save_for_backward; PyTorch's errors
word for word. The ``setup_context`` style: test_function.py."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.autograd import Function, gradcheck, once_differentiable
from tests.autograd._errors import SECOND_BACKWARD, first
from tests.autograd._functions import Square
from tests.autograd._tensors import t


# -- custom Function ----------------------------------------------------------------------------
def test_function_needs_input_grad(device):
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            seen.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            seen.append(ctx.needs_input_grad)
            return g * 2, None, None

    a, b = t([1.0], device, True), t([1.0], device)
    F.apply(a, b, 3).sum().backward()
    assert seen == [(True, False, False), (True, False, False)]
    assert a.grad.item() == 2.0


def test_function_mark_dirty(device):
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            a.mul_(2)
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = t([1.0, 2.0], device, True)
    y = x * 1
    z = Double.apply(y)
    assert z is y and y.grad_fn.name() == "DoubleBackward"
    assert y._version >= 1
    np.testing.assert_allclose(to_numpy(y), [2.0, 4.0])
    z.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])
    with pytest.raises(RuntimeError, match=first("a leaf Variable that requires grad")):
        Double.apply(t([1.0], device, True))


def test_function_mark_non_differentiable(device):
    class SortLike(Function):
        @staticmethod
        def forward(ctx, a):
            idx = a.argmax()
            flag = a * 0
            ctx.mark_non_differentiable(idx, flag)
            return a * 2, idx, flag

        @staticmethod
        def backward(ctx, g, g_idx, g_flag):
            assert g_flag is not None and not to_numpy(g_flag).any()  # materialized zeros
            return g * 2

    x = t([1.0, 3.0], device, True)
    y, idx, flag = SortLike.apply(x)
    assert y.requires_grad
    assert not idx.requires_grad and not flag.requires_grad and flag.grad_fn is None
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])


@pytest.mark.parametrize("materialize", [True, False])
def test_function_set_materialize_grads(device, materialize):
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(materialize)
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1 * 2 if g2 is None else g1 * 2 + g2 * 3

    x = t([1.0, 1.0], device, True)
    y, _ = Two.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0])
    if materialize:
        assert to_numpy(seen[0]).tolist() == [0.0, 0.0]
    else:
        assert seen == [None]


def test_function_with_two_outputs_gets_both_gradients(device):
    class Split(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2, a * 3

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 * 2 + g2 * 3

    x = t([1.0, 2.0], device, True)
    y, z = Split.apply(x)
    assert y.grad_fn is z.grad_fn and (y.output_nr, z.output_nr) == (0, 1)
    (y * z).sum().backward()  # d/dx 6 x^2 = 12 x
    np.testing.assert_allclose(to_numpy(x.grad), [12.0, 24.0])


def test_function_double_backward(device):
    x = t(3.0, device, True)
    g, = gpugrad.autograd.grad(Square.apply(x), x, create_graph=True)
    assert g.item() == 6.0
    g2, = gpugrad.autograd.grad(g, x)
    assert g2.item() == 2.0
    assert gradcheck(Square.apply, (t([1.0, -2.0], device, True),))
    assert gpugrad.autograd.gradgradcheck(Square.apply, (t([1.0, -2.0], device, True),))


def test_once_differentiable(device):
    class Sq(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not gpugrad.is_grad_enabled()
            a, = ctx.saved_tensors
            return g * 2 * a

    x = t(3.0, device, True)
    y = Sq.apply(x)
    g, = gpugrad.autograd.grad(y, x, create_graph=True)
    assert g.item() == 6.0
    y = Sq.apply(x)
    seed = t(1.0, device, True)
    g, = gpugrad.autograd.grad(y, x, seed, create_graph=True)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match=first(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable")):
        g.backward()


def test_function_wrong_number_of_gradients(device):
    class F3(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match=first(
            "function F3Backward returned an incorrect number of gradients (expected 1, "
            "got 2)")):
        F3.apply(t([1.0, 2.0, 3.0], device, True)).sum().backward()


class _Scaled(Function):
    """A Function with a number and a string among its inputs."""
    @staticmethod
    def forward(ctx, k, a, tag):
        ctx.k = k
        return a * k

    @staticmethod
    def backward(ctx, g):
        return None, g * ctx.k, None


def test_function_edges_go_to_tensor_inputs_only(device):
    x = t([1.0, 2.0], device, True)
    y = _Scaled.apply(3.0, x, "tag")
    # as PyTorch: one edge per tensor input; backward still returns one gradient per input
    assert len(y.grad_fn.next_functions) == 1
    assert y.grad_fn.next_functions[0][0].variable is x
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3.0, 3.0])


def test_function_gradient_for_a_non_tensor_input(device):
    class Wrong(_Scaled):
        @staticmethod
        def backward(ctx, g):
            return g, g * ctx.k, None

    with pytest.raises(RuntimeError, match=first(
            "function WrongBackward returned a gradient different than None at position 1, but "
            "the corresponding forward input was not a Variable")):
        Wrong.apply(3.0, t([1.0], device, True), "tag").sum().backward()
    with pytest.raises(RuntimeError, match=first(
            "function ShortBackward returned an incorrect number of gradients (expected 3, "
            "got 1)")):
        class Short(_Scaled):
            @staticmethod
            def backward(ctx, g):
                return g
        Short.apply(3.0, t([1.0], device, True), "tag").sum().backward()


def test_function_wrong_gradient_shape(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return gpugrad.ones(5, dtype=g.dtype, device=g.device)

    with pytest.raises(RuntimeError, match=first(
            "Function BadBackward returned an invalid gradient at index 0 - got [5] but "
            "expected shape compatible with [3]")):
        Bad.apply(t([1.0, 2.0, 3.0], device, True)).sum().backward()


def test_function_broadcastable_gradient_is_summed(device):
    class Wide(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return gpugrad.ones(2, 3, dtype=g.dtype, device=g.device)

    x = t([1.0, 2.0, 3.0], device, True)
    Wide.apply(x).sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [2.0, 2.0, 2.0])


def test_save_for_backward_type_error(device):
    class F(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match=first(
            "save_for_backward can only save variables, but argument 1 is of type int")):
        F.apply(t([1.0], device, True))


def test_saved_tensors_after_backward(device):
    y = Square.apply(t([1.0, 2.0], device, True))
    assert y.grad_fn.saved_tensors[0].requires_grad
    y.sum().backward()
    with pytest.raises(RuntimeError, match=first(SECOND_BACKWARD)):
        y.grad_fn.saved_tensors


def test_function_without_grad_inputs_records_nothing(device):
    y = Square.apply(t([2.0], device))
    assert not y.requires_grad and y.grad_fn is None
    with gpugrad.no_grad():
        y = Square.apply(t([2.0], device, True))
    assert not y.requires_grad and y.grad_fn is None


def test_function_repr_and_name():
    y = Square.apply(t([2.0], requires_grad=True))
    assert re.fullmatch(r"<gpugrad\.autograd\.function\.SquareBackward object at 0x[0-9a-f]+>",
                        repr(y.grad_fn))
    assert y.grad_fn.name() == "SquareBackward"
    assert repr(y) == "tensor([4.], dtype=gpugrad.float64, grad_fn=<SquareBackward>)"
