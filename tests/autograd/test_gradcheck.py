"""gradcheck and gradgradcheck catch wrong first and second derivatives and perturb
non-contiguous inputs."""
from __future__ import annotations

import numpy as np
import pytest

import gpugrad
from gpugrad.autograd import Function, GradcheckError, gradcheck
from tests.autograd._errors import first
from tests.autograd._functions import Square
from tests.autograd._tensors import t


# -- gradcheck ----------------------------------------------------------------------------------
class WrongSquare(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 2

    @staticmethod
    def backward(ctx, g):
        a, = ctx.saved_tensors
        return g * 3 * a  # should be 2 a


def test_gradcheck_catches_a_wrong_backward(device):
    x = t([1.0, 2.0], device, True)
    with pytest.raises(GradcheckError, match=first(
            "Jacobian mismatch for output 0 with respect to input 0,")) as err:
        gradcheck(WrongSquare.apply, (x,))
    assert "numerical:" in str(err.value) and "analytical:" in str(err.value)
    assert isinstance(err.value, RuntimeError)
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    assert gradcheck(Square.apply, (x,))


def test_gradcheck_perturbs_non_contiguous_inputs(device):
    # a transposed (non-contiguous) input: the finite differences must move the tensor's own
    # elements, or the numerical Jacobian is zero and a right backward looks wrong
    a = np.arange(1.0, 7.0).reshape(2, 3).T
    x = gpugrad.tensor(a, dtype=gpugrad.float64, device=device, requires_grad=True)
    assert not x.is_contiguous()
    assert gradcheck(lambda v: (v * v).sum(0), (x,))
    with pytest.raises(GradcheckError):
        gradcheck(WrongSquare.apply, (x,))


def test_gradgradcheck_catches_a_wrong_second_derivative(device):
    class WrongCube(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a ** 3

        @staticmethod
        def backward(ctx, g):
            a, = ctx.saved_tensors
            return g * 3 * (a.detach() ** 2)  # right value, but not differentiable in a

    x = t([1.0, 2.0], device, True)
    assert gradcheck(WrongCube.apply, (x,))
    with pytest.raises(GradcheckError):
        gpugrad.autograd.gradgradcheck(WrongCube.apply, (x,))
