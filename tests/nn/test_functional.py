"""nn.functional entries that have no module: one_hot, constant F.pad errors and
gumbel_softmax."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn.functional as F
from tests.nn._errors import _raises


def test_one_hot():
    out = F.one_hot(gpugrad.tensor([0, 2, 1]))
    assert out.dtype == gpugrad.int64 and out.tolist() == [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    assert F.one_hot(gpugrad.tensor([1]), 4).tolist() == [[0, 1, 0, 0]]


def test_pad_errors():
    x = gpugrad.zeros(2, 3)
    with pytest.raises(RuntimeError, match="^Padding length must be divisible by 2$"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(RuntimeError, match=re.escape(
            "Padding length should be less than or equal to two times the input dimension but "
            "got padding length 6 and input of dimension 2")):
        F.pad(x, (1,) * 6)
    with pytest.raises(NotImplementedError, match="^Unrecognised padding mode symmetric$"):
        F.pad(x, (1, 1), mode="symmetric")
    assert F.pad(x, (1, 1), value=3.0).tolist()[0] == [3.0, 0.0, 0.0, 0.0, 3.0]


f64 = gpugrad.float64


def test_gumbel_softmax(device, rng):
    logits = rng.standard_normal((5, 4))
    x = tensor(logits, device, requires_grad=True)
    gpugrad.manual_seed(11)
    soft = F.gumbel_softmax(x, tau=0.5)
    gpugrad.manual_seed(11)   # the same Exp(1) draws, so the same Gumbel noise -log(E)
    e = to_numpy(gpugrad.empty((5, 4), dtype=f64, device=device).exponential_())
    z = (logits - np.log(e)) / 0.5
    want = np.exp(z - z.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(to_numpy(soft), want, rtol=1e-12)
    gpugrad.manual_seed(11)
    hard = F.gumbel_softmax(x, tau=0.5, hard=True)
    np.testing.assert_array_equal(to_numpy(hard), np.eye(4)[want.argmax(1)])
    w = tensor(rng.standard_normal((5, 4)), device)
    g_soft = gpugrad.autograd.grad((soft * w).sum(), x)[0]
    g_hard = gpugrad.autograd.grad((hard * w).sum(), x)[0]   # straight through
    np.testing.assert_allclose(to_numpy(g_hard), to_numpy(g_soft), rtol=1e-12)
    with pytest.warns(UserWarning, match="^`eps` parameter is deprecated and has no effect.$"):
        F.gumbel_softmax(x, eps=1e-3)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float32"])
def test_one_hot_only_takes_int64(dtype):
    x = gpugrad.tensor([1, 0]).to(getattr(gpugrad, dtype))
    with _raises(RuntimeError, "one_hot is only applicable to index tensor of type LongTensor."):
        F.one_hot(x, 3)


def test_one_hot_empty():
    with _raises(RuntimeError, "Can not infer total number of classes from empty tensor."):
        F.one_hot(gpugrad.zeros(0, dtype=gpugrad.int64))
    with _raises(RuntimeError, "Can not infer total number of classes from empty tensor."):
        F.one_hot(gpugrad.zeros(0, dtype=gpugrad.int64), 0)
    out = F.one_hot(gpugrad.zeros(2, 0, dtype=gpugrad.int64), 3)
    assert tuple(out.shape) == (2, 0, 3) and out.dtype == gpugrad.int64


def test_one_hot_checks_negative_before_num_classes():
    with _raises(RuntimeError, "Class values must be non-negative."):
        F.one_hot(gpugrad.tensor([-1, 5]), 3)
    with _raises(RuntimeError, "Class values must be smaller than num_classes."):
        F.one_hot(gpugrad.tensor([1]), 0)
    assert to_numpy(F.one_hot(gpugrad.tensor(1))).tolist() == [0, 1]
