"""autograd.Variable: a detached alias with requires_grad, and PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import Variable


# -- Variable -------------------------------------------------------------------------------------
def test_variable_is_a_detached_alias_with_requires_grad():
    t = tensor([1.0, 2.0])
    v = Variable(t, requires_grad=True)
    assert v is not t and v.requires_grad and not t.requires_grad and v.is_leaf
    assert isinstance(t, Variable) and not isinstance(3, Variable)
    with gpugrad.no_grad():
        v.mul_(2)
    np.testing.assert_array_equal(to_numpy(t), [2.0, 4.0])     # same storage
    y = tensor([1.0], requires_grad=True) * 2
    assert Variable(y).grad_fn is None and not Variable(y).requires_grad
    assert Variable().shape == (0,)


def test_variable_errors_as_pytorch():
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        Variable(3)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1.0])
    with pytest.raises(ValueError, match="Variable can't be volatile and require_grad at the "
                                         "same time!"):
        Variable(tensor([1.0]), True, True)
    with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
        Variable(tensor([1.0]), volatile=True)
