"""Type promotion as PyTorch does it where numpy's differs (clamp, pow, where, cat/stack, Python
ints out of range, integer division by zero, float_power), integer and bool semantics of everyday
ops, and the promotion helpers. Expected values were read from PyTorch 2.13."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from tests.ops._tensors import values


def test_float_power_computes_in_float64(device):
    x = tensor([2, 3], device, gpugrad.int64)
    y = gpugrad.float_power(x, 2)
    assert y.dtype == gpugrad.float64
    np.testing.assert_array_equal(to_numpy(y), [4.0, 9.0])
    f = tensor([2.0], device, gpugrad.float32)
    assert f.float_power(tensor([0.5], device, gpugrad.float32)).dtype == gpugrad.float64
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but "
                                           "the operation's result requires dtype Double"):
        f.float_power_(2)
    np.testing.assert_array_equal(to_numpy(tensor([3.0], device).float_power_(2)), [9.0])


def test_promotion_helpers():
    assert gpugrad.promote_types(gpugrad.float16, gpugrad.int64) == gpugrad.float16
    assert gpugrad.promote_types(gpugrad.uint8, gpugrad.int8) == gpugrad.int16
    assert gpugrad.promote_types(gpugrad.bool, gpugrad.int32) == gpugrad.int32
    assert gpugrad.result_type(gpugrad.tensor([1, 2]), 1.0) == gpugrad.float32
    assert gpugrad.result_type(gpugrad.tensor([1, 2], dtype=gpugrad.int32), 5) == gpugrad.int32
    assert gpugrad.result_type(gpugrad.tensor([1.0]), gpugrad.tensor([1.0],
                                                                     dtype=gpugrad.float64)) \
        == gpugrad.float64
    assert not gpugrad.can_cast(gpugrad.float32, gpugrad.int32)
    assert gpugrad.can_cast(gpugrad.int32, gpugrad.float16)
    assert gpugrad.can_cast(gpugrad.int64, gpugrad.uint8)
    assert not gpugrad.can_cast(gpugrad.int8, gpugrad.bool)
    assert gpugrad.is_complex(gpugrad.zeros(2)) is False
    assert gpugrad.zeros(2).is_complex() is False


F = gpugrad.ones
I64 = gpugrad.int64


# -- integer and bool semantics ----------------------------------------------------------------
A = [-7, -3, 0, 3, 7]
B = [2, 2, 3, -2, -3]


@pytest.mark.parametrize("snippet,dtype,expected", [
    ("a / b", "float32", [-3.5, -1.5, 0.0, -1.5, -2.3333332538604736]),
    ("a // b", "int64", [-4, -2, 0, -2, -3]),
    ("a % b", "int64", [1, 1, 0, -1, -2]),
    ("a % -3", "int64", [-1, 0, 0, 0, -2]),
    ("torch.fmod(a, b)", "int64", [-1, -1, 0, 1, 1]),
    ("torch.div(a, b, rounding_mode='trunc')", "int64", [-3, -1, 0, -1, -2]),
    ("torch.div(a, b, rounding_mode='floor')", "int64", [-4, -2, 0, -2, -3]),
    ("torch.div(a, b, rounding_mode=None)", "float32",
     [-3.5, -1.5, 0.0, -1.5, -2.3333332538604736]),
    ("a.abs()", "int64", [7, 3, 0, 3, 7]),
    ("a.sign()", "int64", [-1, -1, 0, 1, 1]),
    ("a.clamp(-2, 2)", "int64", [-2, -2, 0, 2, 2]),
    ("a * 2.5", "float32", [-17.5, -7.5, 0.0, 7.5, 17.5]),
    ("a < torch.tensor([1.5] * 5)", "bool", [True, True, True, False, False]),
    ("~a", "int64", [6, 2, -1, -4, -8]),
    ("a & 6", "int64", [0, 4, 0, 2, 6]),
    ("torch.tensor([True, False] * 2 + [True]) & a", "int64", [1, 0, 0, 0, 1]),
    ("torch.tensor([True, False]) & torch.tensor([True, True])", "bool", [True, False]),
    ("~torch.tensor([True, False])", "bool", [False, True]),
    ("torch.tensor([True, False]) + torch.tensor([True, True])", "bool", [True, True]),
    ("torch.tensor([True, False]) + 1", "int64", [2, 1]),
])
def test_integer_and_bool_arithmetic(snippet, dtype, expected):
    y = eval(snippet, {"torch": gpugrad, "a": gpugrad.tensor(A), "b": gpugrad.tensor(B)})
    assert y.dtype == np.dtype(dtype)
    assert values(y) == expected


def test_integer_reductions_and_dtypes():
    i32 = gpugrad.tensor([1, 2], dtype=gpugrad.int32)
    assert i32.sum().dtype == I64
    s = i32.sum(dtype=gpugrad.int32)
    assert s.dtype == gpugrad.int32 and s.item() == 3
    assert gpugrad.tensor([[1, 2]], dtype=gpugrad.int16).sum(1, dtype=gpugrad.int16).dtype == \
        gpugrad.int16
    assert gpugrad.tensor([1.0, 5, 2]).argmax().dtype == I64
    assert gpugrad.arange(5).dtype == I64
    r = gpugrad.arange(0, 1, 0.1)
    assert r.dtype == gpugrad.float32 and len(r) == 10
    assert values(gpugrad.arange(0, 3, 1.5, dtype=I64)) == [0, 1, 2]
    assert values(gpugrad.arange(0.5, 3.7, dtype=I64)) == [0, 1, 2]
    assert values(gpugrad.arange(-0.5, 3, dtype=gpugrad.int32)) == [0, 1, 2, 3]
    assert gpugrad.full((2,), 3).dtype == I64
    assert gpugrad.full((2,), True).dtype == gpugrad.bool
    assert gpugrad.linspace(0, 10, 5, dtype=I64).dtype == I64
    with pytest.raises(RuntimeError, match=re.escape("mean(): could not infer output dtype.")):
        gpugrad.tensor([1, 2]).mean()


def test_shape_results_that_pytorch_allows():
    assert values(gpugrad.arange(4.0).tile(2)) == [0.0, 1.0, 2.0, 3.0] * 2
    assert [p.shape[0] for p in gpugrad.ones(0).chunk(2)] == [0, 0]
    assert [p.shape[0] for p in gpugrad.ones(0).split(0)] == [0]
    assert values(gpugrad.arange(5.0).narrow(0, -2, 2)) == [3.0, 4.0]
    assert gpugrad.tensor(1.0).flatten(0, -1).shape == (1,)
    assert gpugrad.tensor(1.0).transpose(0, -1).shape == ()
    assert gpugrad.tensor(1.0).mT.shape == ()
    assert gpugrad.ones(2, 1, 2, 3).matmul(F(3, 3, 5)).shape == (2, 3, 2, 5)
    assert gpugrad.ones(1, 3).expand(2, -1).shape == (2, 3)
    assert gpugrad.ones(2, 3).permute([0, 1]).shape == (2, 3)


# -- type promotion --------------------------------------------------------------------------------
def test_clamp_promotes_to_a_float_bound(device):
    i = gpugrad.tensor([1, 5], device=device)
    y = gpugrad.clamp(i, min=2.5)
    assert y.dtype == gpugrad.float32 and to_numpy(y).tolist() == [2.5, 5.0]
    y = gpugrad.clamp(i, max=2.5)
    assert y.dtype == gpugrad.float32 and to_numpy(y).tolist() == [1.0, 2.5]
    y = gpugrad.clamp(i, min=2)
    assert y.dtype == gpugrad.int64 and to_numpy(y).tolist() == [2, 5]
    y = gpugrad.clamp(gpugrad.tensor([True, False], device=device), min=0.5)
    assert y.dtype == gpugrad.float32 and to_numpy(y).tolist() == [1.0, 0.5]
    y = gpugrad.clamp(gpugrad.tensor([1, 5], dtype=gpugrad.uint8, device=device), min=-1)
    assert y.dtype == gpugrad.uint8 and to_numpy(y).tolist() == [255, 255]   # -1 wraps


@pytest.mark.parametrize("fn, dtype, values", [
    (lambda t: 2 ** t([2, 3]), "int64", [4, 8]),
    (lambda t: 2 ** t([2, 3], dtype=gpugrad.int32), "int32", [4, 8]),
    (lambda t: 2.0 ** t([2, 3]), "float32", [4.0, 8.0]),
    (lambda t: True ** t([2, 3]), "int64", [1, 1]),
    (lambda t: (-2) ** t([2, 3]), "int64", [4, -8]),
    (lambda t: 2 ** t([-1, 3]), "int64", [0, 8]),
    (lambda t: t([2, 3]) ** t([-1, 2]), "int64", [0, 9]),
    (lambda t: t([1, -1, 2]) ** t([-1, -1, -2]), "int64", [1, -1, 0]),
    (lambda t: t([4, 9], dtype=gpugrad.int32) ** t([2, 1]), "int64", [16, 9]),
    (lambda t: t([4, 9], dtype=gpugrad.int32) ** t(2), "int32", [16, 81]),
    (lambda t: t([4, 9]) ** t([0.5, 1.0]), "float32", [2.0, 9.0]),
    (lambda t: t([4.0, 9.0]) ** t([2, 1]), "float32", [16.0, 9.0]),
    (lambda t: t([True, False]) ** 2, "int64", [1, 0]),
    (lambda t: t([True, False]) ** 0, "int64", [1, 1]),
    (lambda t: t([True, False]) ** True, "bool", [True, False]),
    (lambda t: t([True, False]) ** 2.0, "float32", [1.0, 0.0]),
    (lambda t: t([2, 3]) ** 2.0, "float32", [4.0, 9.0]),
    (lambda t: t([3, 200], dtype=gpugrad.uint8) ** 2, "uint8", [9, 64]),
    (lambda t: gpugrad.pow(2, t([3, 2])), "int64", [8, 4]),
])
def test_pow_keeps_integers_integral(device, fn, dtype, values):
    def t(v, dtype=None):
        return gpugrad.tensor(v, dtype=dtype, device=device)
    y = fn(t)
    assert y.dtype == np.dtype(dtype) and to_numpy(y).tolist() == values


def test_pow_integer_errors():
    with pytest.raises(RuntimeError, match="^Integers to negative integer powers are not "
                                           "allowed.$"):
        gpugrad.tensor([2, 3]) ** -1
    with pytest.raises(NotImplementedError, match="^\"pow\" not implemented for 'Bool'$"):
        gpugrad.tensor([True]) ** gpugrad.tensor([True])


def test_where_of_two_numbers_uses_the_default_dtype(device):
    c = gpugrad.tensor([True, False], device=device)
    y = gpugrad.where(c, 1.0, 0)
    assert y.dtype == gpugrad.float32 and to_numpy(y).tolist() == [1.0, 0.0]
    assert gpugrad.where(c, 1, 0).dtype == gpugrad.int64
    assert gpugrad.where(c, True, False).dtype == gpugrad.bool


def test_cat_and_stack_promote_as_pytorch(device):
    f, i = gpugrad.ones(1, device=device), gpugrad.ones(1, dtype=gpugrad.int64, device=device)
    assert gpugrad.cat([f, i]).dtype == gpugrad.float32
    assert gpugrad.cat([gpugrad.ones(1, dtype=gpugrad.float16, device=device), i]).dtype == \
        gpugrad.float16
    assert gpugrad.cat([gpugrad.ones(1, dtype=gpugrad.uint8, device=device),
                        gpugrad.ones(1, dtype=gpugrad.int8, device=device)]).dtype == gpugrad.int16
    assert gpugrad.stack([i, f]).dtype == gpugrad.float32
    assert gpugrad.cat([gpugrad.ones(2, device=device),
                        gpugrad.ones(0, dtype=gpugrad.float64, device=device)]).dtype == \
        gpugrad.float64   # an empty tensor still takes part in the dtype
    h = gpugrad.ones(2, dtype=gpugrad.float16, device=device, requires_grad=True)
    w = gpugrad.ones(2, device=device, requires_grad=True)
    for y in (gpugrad.cat([h, w]), gpugrad.stack([h, w])):
        assert y.dtype == gpugrad.float32
        (y * 3).sum().backward()
    assert h.grad.dtype == gpugrad.float16 and to_numpy(h.grad).tolist() == [6.0, 6.0]
    assert w.grad.dtype == gpugrad.float32 and to_numpy(w.grad).tolist() == [6.0, 6.0]


def test_python_ints_out_of_range_wrap(device):
    i32 = gpugrad.tensor([1], dtype=gpugrad.int32, device=device)
    for y, value in ((i32 + 2 ** 40, 1), (i32 * 2 ** 40, 0), (i32 + 2 ** 31, -2147483647),
                     (i32 - 2 ** 40, 1), (2 ** 40 - i32, -1), (i32 * 2 ** 63, 0)):
        assert y.dtype == gpugrad.int32 and to_numpy(y).tolist() == [value]
    u8 = gpugrad.tensor([1], dtype=gpugrad.uint8, device=device)
    assert to_numpy(u8 + 300).tolist() == [45] and to_numpy(u8 + -1).tolist() == [0]
    y = i32 / 2 ** 40
    assert y.dtype == gpugrad.float32 and np.isclose(to_numpy(y)[0], 9.0949e-13)
    with pytest.raises(OverflowError, match="^int too big to convert$"):
        i32 + 2 ** 64


def test_integer_division_by_zero_raises_on_cpu():
    a = gpugrad.tensor([1, 2])
    for fn in (lambda: a // 0, lambda: a // gpugrad.tensor([0, 1]), lambda: a % 0,
               lambda: a % gpugrad.tensor([0, 1]), lambda: gpugrad.fmod(a, 0),
               lambda: gpugrad.remainder(a, 0), lambda: gpugrad.floor_divide(a, 0),
               lambda: gpugrad.div(a, 0, rounding_mode="trunc"), lambda: 5 // gpugrad.tensor(
                   [0, 2]), lambda: 5 % gpugrad.tensor([0, 2])):
        with pytest.raises(RuntimeError, match="^ZeroDivisionError$"):
            fn()
    assert (5 % gpugrad.tensor([3, 2])).tolist() == [2, 1]
    assert (gpugrad.tensor([1.0, 2.0]) // 0).tolist() == [float("inf")] * 2
    with pytest.raises(NotImplementedError, match="^\"div_floor_cpu\" not implemented for "
                                                  "'Bool'$"):
        gpugrad.tensor([True]) // gpugrad.tensor([True])
    assert (gpugrad.tensor([True]) // 1).tolist() == [1]
