"""Indexing as PyTorch reads it (ints next to index arrays, uint8 masks, lists of lists, steps,
empty lists, several ellipses), PyTorch's type promotion where numpy's differs (clamp, pow,
where, cat/stack, Python ints out of range, integer division by zero), view's stride rule,
squeeze/arange checks, the legacy typed constructors and ``Tensor.type``. Expected values were
read from PyTorch 2.13."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad import _creation
from gpugrad.ops.index import SEQUENCE_WARNING, UINT8_WARNING


def x3(device, requires_grad=False):
    return gpugrad.arange(60.0, device=device).reshape(3, 4, 5).requires_grad_(requires_grad)


def grad_fn_chain(t):
    names, fn = [], t.grad_fn
    while fn is not None and fn.name() != "MulBackward0":
        names.append(fn.name())
        fn = fn.next_functions[0][0]
    return names


# -- an int beside an index array: PyTorch selects first -------------------------------------------
@pytest.mark.parametrize("index, shape, first", [
    ((1, slice(None), [0, 2]), (4, 2), [20.0, 22.0, 25.0, 27.0]),
    (([0, 1], slice(None), 1), (2, 4), [1.0, 6.0, 11.0, 16.0]),
    ((slice(None), 1, [0, 2]), (3, 2), [5.0, 7.0, 25.0, 27.0]),
    (([0], 1, [0]), (1,), [5.0]),
    ((1, slice(None), True), (4, 1, 5), [20.0, 21.0, 22.0, 23.0]),
    ((None, 1, slice(None), [0, 1]), (1, 4, 2), [20.0, 21.0, 25.0, 26.0]),
])
def test_int_beside_index_array_selects_first(device, index, shape, first):
    x = x3(device)
    for idx in (index, tuple(gpugrad.tensor(i, device=device) if isinstance(i, list) else i
                             for i in index)):
        y = x[idx]
        assert tuple(y.shape) == shape
        assert to_numpy(y).reshape(-1)[:4].tolist() == first


def test_int_beside_index_array_setitem_and_gradient(device):
    x = x3(device).clone()
    x[1, :, [0, 2]] = -1.0
    assert to_numpy((x < 0).nonzero()).tolist()[:4] == [[1, 0, 0], [1, 0, 2], [1, 1, 0], [1, 1, 2]]
    x = x3(device).clone()
    x[1, :, [0, 2]] = gpugrad.arange(8.0, device=device).reshape(4, 2) + 100
    assert to_numpy(x[1, 1]).tolist() == [102.0, 26.0, 103.0, 28.0, 29.0]
    leaf = x3(device, requires_grad=True)
    y = leaf * 1
    z = y[1, :, [0, 2]]
    assert grad_fn_chain(z) == ["IndexBackward0", "SelectBackward0"]
    (z * gpugrad.arange(8.0, device=device).reshape(4, 2)).sum().backward()
    g = to_numpy(leaf.grad)
    assert g[1, :, 0].tolist() == [0.0, 2.0, 4.0, 6.0]
    assert g[1, :, 2].tolist() == [1.0, 3.0, 5.0, 7.0]
    assert g.sum() == 28.0
    w = x3(device, requires_grad=True) * 1
    w[[0], 1, [0]] = gpugrad.tensor([7.0], device=device)
    assert w.grad_fn.name() == "torch::autograd::CopySlices"
    w.sum().backward()


# -- index dtypes and forms ------------------------------------------------------------------------
def test_uint8_index_is_a_deprecated_mask(device):
    x = gpugrad.arange(3.0, device=device)
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        y = x[gpugrad.tensor([1, 0, 1], dtype=gpugrad.uint8, device=device)]
    assert to_numpy(y).tolist() == [0.0, 2.0]
    assert UINT8_WARNING == ("indexing with dtype torch.uint8 is now deprecated, please use a "
                             "dtype torch.bool instead.")
    for dtype in (gpugrad.int8, gpugrad.int16, gpugrad.float32):
        with pytest.raises(IndexError, match="^tensors used as indices must be long, int, byte "
                                             "or bool tensors$"):
            x[gpugrad.tensor([0, 1], dtype=dtype, device=device)]
    assert to_numpy(x[gpugrad.tensor([2, 0], dtype=gpugrad.int32, device=device)]).tolist() == [
        2.0, 0.0]


def test_list_of_lists_is_a_tuple_of_indices():
    x = gpugrad.arange(12.0).reshape(3, 4)
    with pytest.warns(UserWarning) as record:
        y = x[[[0, 1], [1, 2]]]
    assert str(record[0].message) == SEQUENCE_WARNING
    assert SEQUENCE_WARNING.startswith("Using a non-tuple sequence for multidimensional indexing")
    assert y.tolist() == [1.0, 6.0]
    with pytest.warns(UserWarning):
        assert tuple(x[[[0, 1]]].shape) == (2, 4)
        assert x[[0, [1, 2]]].tolist() == [1.0, 2.0]
        assert tuple(gpugrad.arange(4.0)[[gpugrad.tensor(1)]].shape) == ()
        assert tuple(x[[None, 0]].shape) == (1, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tuple(x[[0, 1]].shape) == (2, 4)                       # plain ints: one index
        assert tuple(gpugrad.arange(40.0)[[[0]] * 33].shape) == (33, 1)  # 32 or more: one index
    with pytest.warns(UserWarning), pytest.raises(IndexError, match="^too many indices for "
                                                                    "tensor of dimension 2$"):
        x[[[0, 1], [1, 2], [0, 0]]]


def test_negative_and_zero_steps_raise(device):
    x = gpugrad.arange(5, device=device)
    for bad in (slice(None, None, -1), slice(4, 0, -2)):
        with pytest.raises(ValueError, match="^step must be greater than zero$"):
            x[bad]
        with pytest.raises(ValueError, match="^step must be greater than zero$"):
            x[bad] = 0
    with pytest.raises(ValueError, match="^slice step cannot be zero$"):
        x[::0]
    assert to_numpy(x[::2]).tolist() == [0, 2, 4]


def test_empty_list_index_selects_nothing(device):
    x = gpugrad.arange(6.0, device=device).reshape(2, 3)
    assert tuple(x[[]].shape) == (0, 3) and x[[]].dtype == gpugrad.float32
    assert tuple(x[:, []].shape) == (2, 0)
    assert tuple(gpugrad.arange(5.0, device=device)[[]].shape) == (0,)
    y = x.clone()
    y[[]] = 5.0
    assert to_numpy(y).sum() == 15.0
    with pytest.raises(IndexError, match="^tensors used as indices must be long"):
        x[gpugrad.tensor([], device=device)]


def test_several_ellipses_each_stand_for_the_unnamed_dims(device):
    x = x3(device)
    assert to_numpy(x[..., 1, ...]).tolist() == to_numpy(x[:, :, 1]).tolist()
    assert tuple(x[..., ...].shape) == (3, 4, 5)
    assert tuple(x[..., None, ...].shape) == (3, 4, 5, 1)
    assert tuple(x[..., [0, 1], ...].shape) == (3, 4, 2)
    y = x.clone()
    y[..., 1, ...] = -1.0
    assert int((y < 0).sum()) == 12 and to_numpy(y[:, :, 1]).max() == -1.0


def test_full_slices_with_grad_are_an_alias():
    x = gpugrad.ones(2, 3, requires_grad=True) * 1
    assert x[:, :].grad_fn.name() == "AliasBackward0"
    assert x[:, ...].grad_fn.name() == "AliasBackward0"
    assert x[:].grad_fn.name() == "SliceBackward0"


def test_index_errors_in_pytorch_words():
    x = gpugrad.arange(60.0).reshape(3, 4, 5)
    with pytest.raises(IndexError, match=r"^too many indices for tensor of dimension 3$"):
        x[1, 2, 3, 4]
    with pytest.raises(IndexError, match=r"^shape mismatch: indexing tensors could not be "
                                         r"broadcast together with shapes \[2\], \[3\]$"):
        x[[0, 1], [0, 1, 2]]
    with pytest.raises(IndexError, match=r"^The shape of the mask \[2\] at index 0 does not "
                                         r"match the shape of the indexed tensor \[3, 4, 5\] at "
                                         r"index 0$"):
        x[gpugrad.tensor([True, False])]


def test_contains_compares_every_entry(device):
    t = gpugrad.arange(6.0, device=device).reshape(2, 3)
    assert 3.0 in t and 7.0 not in t and gpugrad.tensor(3.0, device=device) in t
    assert True in gpugrad.tensor([True], device=device)
    for bad in ("a", [1], None):
        with pytest.raises(RuntimeError, match=r"^Tensor.__contains__ only supports Tensor or "
                                               r"scalar, but you passed in a <class '"):
            bad in t  # noqa: B015


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


def test_arange_reads_tensor_bounds_and_checks_them():
    for y in (gpugrad.arange(gpugrad.tensor(3.5)), gpugrad.arange(0, gpugrad.tensor(3.5)),
              gpugrad.arange(gpugrad.tensor(3.5, dtype=gpugrad.float64))):
        assert y.dtype == gpugrad.float32 and y.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert gpugrad.arange(gpugrad.tensor(3)).dtype == gpugrad.int64
    assert gpugrad.arange(0, 3, gpugrad.tensor(0.5)).tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert gpugrad.arange(np.float32(2.0)).dtype == gpugrad.float32
    assert gpugrad.arange(5, 0, -1).tolist() == [5, 4, 3, 2, 1]
    for args in ((0, 5, -1), (5, 0, 1), (0.0, 1.0, -0.5)):
        with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent with "
                                               "step sign$"):
            gpugrad.arange(*args)
    with pytest.raises(RuntimeError, match="^step must be nonzero$"):
        gpugrad.arange(0, 5, 0)
    with pytest.raises(RuntimeError, match="^unsupported range: 0 -> nan$"):
        gpugrad.arange(0.0, float("nan"))
    with pytest.raises(RuntimeError, match="^unsupported range: 0.5 -> inf$"):
        gpugrad.arange(0.5, float("inf"))


def test_tensor_takes_the_dtype_numpy_entries_carry():
    assert gpugrad.tensor([np.float64(1.5), 2.0]).dtype == gpugrad.float64
    assert gpugrad.tensor([1, np.float64(2.0)]).dtype == gpugrad.float64
    assert gpugrad.tensor([np.float32(1.5), np.float64(2.0)]).dtype == gpugrad.float64
    assert gpugrad.tensor([np.float16(1.5), 2.0]).dtype == gpugrad.float32
    assert gpugrad.tensor([np.int32(1), 2]).dtype == gpugrad.int64
    assert gpugrad.tensor([np.int32(1), 2.5]).dtype == gpugrad.float32
    assert gpugrad.tensor([np.array([1.5]), np.array([2.0])]).dtype == gpugrad.float64
    assert gpugrad.tensor([gpugrad.tensor(1.0, dtype=gpugrad.float64)] * 2).dtype == \
        gpugrad.float64
    assert gpugrad.tensor([[1.5], [2.0]]).dtype == gpugrad.float32
    assert gpugrad.tensor(np.float64(1.5)).dtype == gpugrad.float64


# -- shapes ----------------------------------------------------------------------------------------
VIEW_ERROR = ("^view size is not compatible with input tensor's size and stride \\(at least one "
              "dimension spans across two contiguous subspaces\\). Use .reshape\\(...\\) instead.$")


def test_view_follows_the_stride_rule(device):
    a = gpugrad.arange(12.0, device=device).reshape(3, 4)
    assert to_numpy(a[:, :2].view(3, 1, 2)).tolist() == [[[0.0, 1.0]], [[4.0, 5.0]], [[8.0, 9.0]]]
    assert to_numpy(a.t().view(2, 2, 3))[1, 0].tolist() == [2.0, 6.0, 10.0]
    assert tuple(gpugrad.arange(24.0, device=device).reshape(2, 3, 4).permute(2, 0, 1)
                 .view(4, 6).shape) == (4, 6)
    assert tuple(gpugrad.arange(3.0, device=device).expand(4, 3).view(2, 2, 3).shape) == (2, 2, 3)
    assert to_numpy(gpugrad.arange(12.0, device=device)[::2].view(2, 3)).tolist() == [
        [0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    for bad in (lambda: a[:, :2].view(6), lambda: a.t().view(12),
                lambda: gpugrad.arange(3.0, device=device).expand(4, 3).view(12)):
        with pytest.raises(RuntimeError, match=VIEW_ERROR):
            bad()
    with pytest.raises(RuntimeError, match=r"^shape '\[5\]' is invalid for input of size 12$"):
        a.t().view(5)
    with pytest.raises(RuntimeError, match="^only one dimension can be inferred$"):
        a.view(-1, -1)
    with pytest.raises(RuntimeError, match=r"^cannot reshape tensor of 0 elements into shape "
                                           r"\[0, -1\] because the unspecified dimension size -1 "
                                           r"can be any value and is ambiguous$"):
        gpugrad.zeros(0, 3, device=device).view(0, -1)
    v = a[:, :2].view(3, 1, 2)   # a real view: writes show through
    v[0, 0, 0] = 100.0
    assert to_numpy(a)[0, 0] == 100.0
    x = gpugrad.ones(3, 4, device=device, requires_grad=True)
    (x.t().view(2, 2, 3) * 2).sum().backward()
    assert to_numpy(x.grad).tolist() == [[2.0] * 4] * 3


def test_squeeze_checks_its_dims():
    x = gpugrad.ones(1, 2, 1)
    for dim in (3, -4, (0, 3)):
        with pytest.raises(IndexError, match=r"^Dimension out of range \(expected to be in range "
                                             r"of \[-3, 2\], but got (3|-4)\)$"):
            x.squeeze(dim)
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1\)$"):
        gpugrad.tensor(1.0).squeeze(1)
    with pytest.raises(RuntimeError, match="^dim 0 appears multiple times in the list of dims$"):
        x.squeeze((0, 0))
    assert tuple(x.squeeze((0, 2)).shape) == (2,) and tuple(x.squeeze(-1).shape) == (1, 2)


def test_flip_takes_dims_as_varargs(device):
    a = gpugrad.arange(4.0, device=device).reshape(2, 2)
    assert to_numpy(a.flip(0, 1)).tolist() == [[3.0, 2.0], [1.0, 0.0]]
    assert to_numpy(a.flip((0, 1))).tolist() == [[3.0, 2.0], [1.0, 0.0]]
    assert to_numpy(a.flip(0)).tolist() == [[2.0, 3.0], [0.0, 1.0]]
    assert to_numpy(a.flip(dims=(1,))).tolist() == [[1.0, 0.0], [3.0, 2.0]]
    with pytest.raises(TypeError, match='^flip\\(\\) missing 1 required positional arguments: '
                                        '"dims"$'):
        a.flip()


def test_to_copy_in_the_op_copies():
    from gpugrad.ops.shape import ToCopyBackward0
    a = gpugrad.tensor([1.0, 2.0])
    b = ToCopyBackward0.apply(a)   # what to(..., copy=True) runs when nothing else changes
    b[0] = 9.0
    assert a.tolist() == [1.0, 2.0] and b.tolist() == [9.0, 2.0]


# -- legacy constructors and Tensor.type -----------------------------------------------------------
def test_typed_constructors():
    FloatTensor, LongTensor = _creation.FloatTensor, _creation.LongTensor
    y = FloatTensor([1, 2])
    assert type(y) is gpugrad.Tensor and y.dtype == gpugrad.float32 and y.tolist() == [1.0, 2.0]
    assert tuple(FloatTensor(2, 3).shape) == (2, 3) and tuple(FloatTensor().shape) == (0,)
    assert tuple(FloatTensor(gpugrad.Size([2])).shape) == (2,)
    assert FloatTensor((2, 3)).tolist() == [2.0, 3.0]
    z = LongTensor(3)
    assert tuple(z.shape) == (3,) and z.dtype == gpugrad.int64
    assert LongTensor([-1.7, 2]).tolist() == [-1, 2]
    assert LongTensor(np.array([1.5, 2])).tolist() == [1, 2]
    for name, dtype in (("DoubleTensor", "float64"), ("HalfTensor", "float16"),
                        ("IntTensor", "int32"), ("ShortTensor", "int16"),
                        ("CharTensor", "int8"), ("ByteTensor", "uint8"), ("BoolTensor", "bool")):
        assert getattr(_creation, name)([1, 0]).dtype == np.dtype(dtype)
    t = gpugrad.tensor([1.0, 2.0])
    assert FloatTensor(t)._data is t._data   # shares the data, as in PyTorch
    with pytest.raises(TypeError, match="^expected float32 tensor \\(got int64 tensor\\)$"):
        FloatTensor(gpugrad.tensor([1, 2]))
    with pytest.raises(TypeError, match="^new\\(\\): data must be a sequence \\(got float\\)$"):
        FloatTensor(3.0)
    with pytest.raises(TypeError, match="^new\\(\\): argument 'size' failed to unpack the object "
                                        "at pos 2 with error \"type must be tuple of ints,but "
                                        "got float\"$"):
        LongTensor(2, 3.5)
    assert isinstance(t, FloatTensor) and not isinstance(t, LongTensor)
    assert isinstance(gpugrad.tensor([1]), LongTensor) and not isinstance(3, FloatTensor)
    assert repr(FloatTensor) == "<class 'gpugrad.FloatTensor'>" and FloatTensor.__name__ == \
        "FloatTensor"
    assert FloatTensor.dtype == gpugrad.float32 and FloatTensor.is_cuda is False
    assert FloatTensor != gpugrad.Tensor


def test_legacy_tensor_data():
    a = _creation.legacy_array
    assert a(([1, 2],)).dtype == np.float32 and a(([True, False],)).tolist() == [1.0, 0.0]
    assert a(()).shape == (0,) and a((2, 3)).shape == (2, 3)
    assert a((np.array([1, 2]),)).dtype == np.float32
    assert a((gpugrad.tensor([1, 2]),)).dtype == np.int64   # a tensor keeps its dtype
    with pytest.raises(TypeError, match="^new\\(\\): invalid data type 'str'$"):
        a(("ab",))


def test_type_converts_by_name_or_type():
    x = gpugrad.tensor([1, 2])
    for target in ("torch.FloatTensor", "gpugrad.FloatTensor", _creation.FloatTensor):
        y = x.type(target)
        assert y.dtype == gpugrad.float32 and y.tolist() == [1.0, 2.0]
    assert x.type(gpugrad.float64).dtype == gpugrad.float64
    assert x.type("torch.LongTensor") is x
    assert x.type() == "gpugrad.LongTensor"
    for bad in ("torch.FooTensor", "float", "torch.float32"):
        with pytest.raises(ValueError, match=f"^invalid type: '{bad}'$"):
            x.type(bad)


def test_tensor_constructor_uses_the_default_dtype():
    assert gpugrad.Tensor([1, 2]).dtype == gpugrad.float32
    assert gpugrad.Tensor().shape == (0,) and gpugrad.Tensor(2, 3).shape == (2, 3)
    assert gpugrad.Tensor(gpugrad.Size([4])).shape == (4,)
    base = gpugrad.tensor([1.0, 2.0])
    shared = gpugrad.Tensor(base)
    shared[0] = 5.0
    assert base.tolist() == [5.0, 2.0]
    assert gpugrad.FloatTensor([1, 2]).dtype == gpugrad.float32
    assert gpugrad.LongTensor([1, 2]).dtype == gpugrad.int64


def test_to_with_copy_returns_a_copy():
    a = gpugrad.tensor([1.0, 2.0])
    b = a.to(gpugrad.float32, copy=True)
    b[0] = 9.0
    assert a.tolist() == [1.0, 2.0]


def test_bmm_checks_its_shapes():
    a, b = gpugrad.ones(2, 3, 4), gpugrad.ones(2, 4, 5)
    assert gpugrad.bmm(a, b).shape == (2, 3, 5)
    with pytest.raises(RuntimeError, match="^batch1 must be a 3D tensor$"):
        gpugrad.bmm(gpugrad.ones(3, 4), b)
    with pytest.raises(RuntimeError, match="^batch2 must be a 3D tensor$"):
        gpugrad.bmm(a, gpugrad.ones(4, 5))
    with pytest.raises(RuntimeError, match=r"^Expected size for first two dimensions of batch2 "
                                           r"tensor to be: \[2, 4\] but got: \[2, 5\]\.$"):
        gpugrad.bmm(a, gpugrad.ones(2, 5, 4))

