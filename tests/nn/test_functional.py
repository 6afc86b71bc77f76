"""nn functions, layers, init and utils behaving as PyTorch's: values, dtypes and the exact
errors, for the cases a side-by-side comparison with PyTorch found to differ."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.nn.functional as F
from gpugrad import nn
from gpugrad.nn import init
from gpugrad.nn.utils.rnn import pad_sequence


def _raises(exc, msg):
    return pytest.raises(exc, match=re.escape(msg))


# -- nn.init ------------------------------------------------------------------------------------
def test_trunc_normal_fills_the_whole_range(device):
    """N(0, 1) cut at [-2, 2]: std sqrt(1 - 4 phi(2) / (Phi(2) - Phi(-2))) = 0.87962, and the
    tails reach the bounds (the old inverse-erf start stopped near +-1.92)."""
    gen = gpugrad.Generator().manual_seed(0)
    w = gpugrad.empty(200_000, device=device)
    out = init.trunc_normal_(w, generator=gen)
    assert out is w and not w.requires_grad
    x = to_numpy(w).astype(np.float64)
    assert x.min() >= -2.0 and x.max() <= 2.0
    assert x.min() < -1.99 and x.max() > 1.99
    assert abs(x.std() - 0.87962) < 0.005 and abs(x.mean()) < 0.01


def test_trunc_normal_shifted_bounds_and_leaf():
    w = gpugrad.empty(100_000, requires_grad=True)
    init.trunc_normal_(w, mean=1.0, std=2.0, a=0.5, b=1.5)
    x = to_numpy(w)
    assert w.is_leaf and w.grad_fn is None
    assert x.min() >= 0.5 and x.max() <= 1.5 and x.min() < 0.51 and x.max() > 1.49
    # a narrow window around the mean is nearly uniform: std (b - a) / sqrt(12) shrunk a little
    assert 0.28 < x.std() < 0.2887


def test_calculate_correct_fan():
    w = gpugrad.empty(5, 3, 2)
    assert init._calculate_correct_fan(w, "fan_in") == 6
    assert init._calculate_correct_fan(w, "fan_out") == 10
    with _raises(ValueError, "Mode foo not supported, please use one of ['fan_in', 'fan_out']"):
        init._calculate_correct_fan(w, "foo")


# -- nn.utils.clip_grad_norm_ ---------------------------------------------------------------------
def _params(*grads):
    ps = []
    for g in grads:
        p = nn.Parameter(gpugrad.zeros(len(g)))
        p.grad = gpugrad.tensor(g)
        ps.append(p)
    return ps


def test_clip_grad_norm_minus_inf_is_the_smallest_entry():
    ps = _params([3.0, 4.0], [12.0])
    total = nn.utils.clip_grad_norm_(ps, 1.0, norm_type=-math.inf)
    assert total.item() == 3.0
    scale = 1.0 / (3.0 + 1e-6)
    np.testing.assert_allclose(to_numpy(ps[0].grad), [3 * scale, 4 * scale], rtol=1e-6)
    np.testing.assert_allclose(to_numpy(ps[1].grad), [12 * scale], rtol=1e-6)


def test_clip_grad_norm_inf_unchanged():
    ps = _params([3.0, -4.0], [2.0])
    assert nn.utils.clip_grad_norm_(ps, 100.0, norm_type="inf").item() == 4.0
    assert to_numpy(ps[0].grad).tolist() == [3.0, -4.0]


# -- F.one_hot ----------------------------------------------------------------------------------
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


# -- integer inputs keep their dtype --------------------------------------------------------------
def test_hardtanh_and_relu6_keep_integer_dtype(device):
    x = gpugrad.tensor([1, -2, 0, 7], dtype=gpugrad.int32, device=device)
    y = F.hardtanh(x, -1.5, 0.7)   # limits truncate to -1 and 0
    assert y.dtype == gpugrad.int32 and to_numpy(y).tolist() == [0, -1, 0, 0]
    y = F.relu6(x)
    assert y.dtype == gpugrad.int32 and to_numpy(y).tolist() == [1, 0, 0, 6]
    u = gpugrad.tensor([1, 2, 0], dtype=gpugrad.uint8, device=device)
    assert to_numpy(nn.ReLU6()(u)).tolist() == [1, 2, 0]
    x = gpugrad.tensor([3, -4])
    assert F.hardtanh(x, inplace=True) is x and to_numpy(x).tolist() == [1, -1]


def test_hardtanh_integer_errors():
    with _raises(RuntimeError, "cannot do hardtanh on an unsigned type with negative limits"):
        F.hardtanh(gpugrad.tensor([1], dtype=gpugrad.uint8))
    with _raises(RuntimeError, "Bool inputs not supported for hardtanh"):
        F.hardtanh(gpugrad.tensor([True]))


def test_threshold_keeps_integer_dtype():
    y = F.threshold(gpugrad.tensor([1, -2, 0]), 0.5, 7.9)   # compares with 0, fills with 7
    assert y.dtype == gpugrad.int64 and to_numpy(y).tolist() == [1, 7, 7]
    y = nn.Threshold(0.5, 7.9)(gpugrad.tensor([1, 2, 0], dtype=gpugrad.uint8))
    assert y.dtype == gpugrad.uint8 and to_numpy(y).tolist() == [1, 2, 7]
    with _raises(NotImplementedError, "\"threshold_cpu\" not implemented for 'Bool'"):
        F.threshold(gpugrad.tensor([True]), 0, 1)


def test_hardtanh_module_checks_limits():
    with _raises(AssertionError, "max_val (1.0) must be greater than min_val (2.0)"):
        nn.Hardtanh(2.0, 1.0)
    with _raises(AssertionError, "max_val (1) must be greater than min_val (1)"):
        nn.Hardtanh(1, 1)


# -- argument checks ------------------------------------------------------------------------------
def test_glu_dim_out_of_range():
    with _raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                             "got 2)"):
        F.glu(gpugrad.ones(3, 4), 2)
    with _raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                             "got -3)"):
        nn.GLU(-3)(gpugrad.ones(3, 4))


def test_glu_negative_dim_value():
    x = gpugrad.tensor([[1.0, 2.0], [0.0, -1.0]])
    y = F.glu(x, -2)   # a = row 0, b = row 1
    np.testing.assert_allclose(to_numpy(y), [[0.5, 2 / (1 + math.e)]], rtol=1e-6)


@pytest.mark.parametrize("pair", [("int64", "float32"), ("float32", "int64"), ("bool", "float32")])
def test_kl_div_rejects_integral_inputs(pair):
    a, b = (gpugrad.ones(2).to(getattr(gpugrad, d)) for d in pair)
    with _raises(RuntimeError, "kl_div: Integral inputs not supported."):
        F.kl_div(a, b, reduction="sum")


def test_flatten_module_checks_dims():
    with _raises(IndexError, "Dimension out of range (expected to be in range of [-2, 1], but "
                             "got 2)"):
        nn.Flatten(2)(gpugrad.ones(2, 3))
    assert tuple(nn.Flatten()(gpugrad.ones(2, 3, 4)).shape) == (2, 12)


# -- pad_sequence ---------------------------------------------------------------------------------
def test_pad_sequence_takes_the_first_dtype(device):
    out = pad_sequence([gpugrad.ones(2, device=device),
                        gpugrad.ones(3, dtype=gpugrad.float64, device=device)])
    assert out.dtype == gpugrad.float32 and to_numpy(out).T.tolist() == [[1, 1, 0], [1, 1, 1]]
    out = pad_sequence([gpugrad.tensor([1, 2]), gpugrad.tensor([1.5, 2.5, 3.5])],
                       batch_first=True, padding_value=-1)
    assert out.dtype == gpugrad.int64 and to_numpy(out).tolist() == [[1, 2, -1], [1, 2, 3]]


def test_pad_sequence_broadcasts_trailing_dims_into_the_first():
    a = gpugrad.ones(2, 3, requires_grad=True)
    b = gpugrad.tensor([[1.0], [2.0], [3.0]], requires_grad=True)
    out = pad_sequence([a, b], batch_first=True)
    assert tuple(out.shape) == (2, 3, 3)
    assert to_numpy(out[1]).tolist() == [[1, 1, 1], [2, 2, 2], [3, 3, 3]]
    out.sum().backward()
    assert to_numpy(b.grad).tolist() == [[3.0], [3.0], [3.0]]


@pytest.mark.parametrize("shapes,msg", [
    (((2, 3), (3, 4)), "The size of tensor a (3) must match the size of tensor b (4) at "
                       "non-singleton dimension 1"),
    (((2,), (3, 2)), "The size of tensor a (3) must match the size of tensor b (2) at "
                     "non-singleton dimension 1"),
    (((2, 1), (3, 4)), "output with shape [3, 1] doesn't match the broadcast shape [3, 4]"),
    (((2, 3), (3, 1, 3)), "output with shape [3, 3] doesn't match the broadcast shape "
                          "[3, 3, 3]"),
])
def test_pad_sequence_trailing_mismatch_errors(shapes, msg):
    with _raises(RuntimeError, msg):
        pad_sequence([gpugrad.ones(*s) for s in shapes])


# -- against PyTorch, where it is installed ------------------------------------------------------
def test_against_torch():
    torch = pytest.importorskip("torch")
    for mod in (torch, gpugrad):
        mod.manual_seed(0)
    for norm_type in (-math.inf, 0.5, 1, 3):
        totals = []
        for mod in (torch, gpugrad):
            ps = []
            for g in ([3.0, -4.0], [12.0, 0.5]):
                p = mod.nn.Parameter(mod.zeros(2))
                p.grad = mod.tensor(g)
                ps.append(p)
            totals.append(mod.nn.utils.clip_grad_norm_(ps, 1.0, norm_type).item())
        assert totals[0] == pytest.approx(totals[1], rel=1e-6)
    t = torch.nn.init.trunc_normal_(torch.empty(200_000), a=-1.0, b=3.0).numpy()
    g = to_numpy(init.trunc_normal_(gpugrad.empty(200_000), a=-1.0, b=3.0))
    assert abs(t.std() - g.std()) < 0.01 and abs(t.mean() - g.mean()) < 0.01
