"""Indexing as PyTorch reads it (ints next to index arrays, uint8 masks, lists of lists, steps,
empty lists, several ellipses), gather / index_select, masked_fill / masked_select, put_ /
index_put_ and fill_diagonal_: exact values, index results and PyTorch's errors."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.ops.indexing.getitem import SEQUENCE_WARNING, UINT8_WARNING
from tests.ops._tensors import X, idx, t


def test_put_and_index_put(device):
    t = tensor(np.arange(6.0).reshape(2, 3), device)
    t.put_(tensor([0, -1], device, gpugrad.int64), tensor([10.0, 20.0], device))
    np.testing.assert_array_equal(to_numpy(t), [[10, 1, 2], [3, 4, 20]])
    t.put_(tensor([1, 1], device, gpugrad.int64), tensor([1.0, 2.0], device), accumulate=True)
    np.testing.assert_array_equal(to_numpy(t), [[10, 4, 2], [3, 4, 20]])
    with pytest.raises(IndexError, match="out of range: tried to access index 6 on a tensor of "
                                         "6 elements."):
        t.put_(tensor([6], device, gpugrad.int64), tensor([1.0], device))
    u = tensor(np.zeros((2, 3)), device)
    rows, cols = tensor([0, 1, 0], device, gpugrad.int64), tensor([2, 0, 2], device, gpugrad.int64)
    u.index_put_((rows, cols), tensor([1.0, 2.0, 3.0], device), accumulate=True)
    np.testing.assert_array_equal(to_numpy(u), [[0, 0, 4], [2, 0, 0]])
    u.index_put_((u > 1,), tensor(-1.0, device))
    np.testing.assert_array_equal(to_numpy(u), [[0, 0, -1], [-1, 0, 0]])
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 1 with size 3"):
        u.index_put_((rows, rows + 3), tensor(1.0, device))


def test_gather_and_index_select_add_repeated_gradients(device):
    x = t(X, device, True)
    y = x.gather(1, idx([[2, 2], [0, 1]], device))
    assert to_numpy(y).tolist() == [[2.0, 2.0], [0.0, 5.0]]
    y.sum().backward()
    assert to_numpy(x.grad).tolist() == [[0.0, 0.0, 2.0], [1.0, 1.0, 0.0]]
    x.grad = None
    z = gpugrad.index_select(x, 0, idx([1, 1, 0], device))
    assert to_numpy(z).tolist() == [X[1], X[1], X[0]]
    z.sum().backward()
    assert to_numpy(x.grad).tolist() == [[1.0] * 3, [2.0] * 3]


def test_index_errors_are_pytorchs(device):
    x = t(X, device)
    cases = [
        (RuntimeError, "gather(): Expected dtype int32/int64 for index",
         lambda: x.gather(1, t([[0.0]], device))),
        (RuntimeError, "Index tensor must have the same number of dimensions as input tensor",
         lambda: x.gather(1, idx([0], device))),
        (RuntimeError, "index 5 is out of bounds for dimension 1 with size 3",
         lambda: x.gather(1, idx([[5]], device))),
        (RuntimeError, "index -1 is out of bounds for dimension 1 with size 3",
         lambda: x.gather(1, idx([[-1]], device))),   # never a wrapped read
        (IndexError, "index_select(): Index is supposed to be a vector",
         lambda: x.index_select(0, idx([[0]], device))),
        (RuntimeError, "index_select(): Expected dtype int32 or int64 for index",
         lambda: x.index_select(0, t([0.0], device))),
        (IndexError, "index out of range in self", lambda: x.index_select(0, idx([7], device))),
        (RuntimeError, "masked_fill_ only supports boolean masks, but got mask with dtype "
                       "double", lambda: x.masked_fill(t(np.ones((2, 3)), device), 0.0)),
        (RuntimeError, "selected index k out of range", lambda: x.topk(4)),
        (RuntimeError, "Number of dimensions of repeat dims can not be smaller than number of "
                       "dimensions of tensor", lambda: x.repeat(2)),
        (RuntimeError, "start (1) + length (5) exceeds dimension size (2).",
         lambda: x.narrow(0, 1, 5)),
        (RuntimeError, "tril: input tensor must have at least 2 dimensions",
         lambda: gpugrad.tril(t([1.0], device))),
        (RuntimeError, "outer: Expected 1-D argument self, but got 2-D",
         lambda: gpugrad.outer(x, t([1.0], device))),
    ]
    for kind, message, call in cases:
        with pytest.raises(kind, match="^" + re.escape(message)):
            call()


def test_masked_fill_scalar_tensor_and_in_place(device):
    x = t(X, device, True)
    mask = x > 2.5
    assert to_numpy(x.masked_fill(mask, -1.0)).tolist() == [[-1.0, 1.0, 2.0], [0.0, -1.0, -1.0]]
    v = t(7.0, device, True)
    y = x.masked_fill(mask, v)
    assert y.grad_fn.name() == "MaskedFillBackward1"
    y.sum().backward()
    assert v.grad.item() == 3.0   # three entries were filled with v
    assert to_numpy(x.grad).tolist() == [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]
    z = t(X, device)
    assert z.masked_fill_(z < 1.0, 9.0) is z and to_numpy(z).tolist()[1] == [9.0, 5.0, 4.0]
    row_mask = gpugrad.tensor(np.array([True, False, False]), device=device)   # broadcasts
    assert to_numpy(t(X, device).masked_fill(row_mask, 0.0))[:, 0].tolist() == [0.0, 0.0]


def test_masked_select_and_nonzero(device):
    x = t([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], device, True)
    m = x.masked_select(x > 0)
    assert to_numpy(m).tolist() == [1.0, 3.0, 4.0, 5.0]
    m.sum().backward()
    assert to_numpy(x.grad).tolist() == [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    row = t([1.0, 2.0, 3.0], device, True)   # broadcast against a (2, 3) mask: gradients add up
    row.masked_select(gpugrad.tensor(np.array([[True, False, True]] * 2),
                                     device=device)).sum().backward()
    assert to_numpy(row.grad).tolist() == [2.0, 0.0, 2.0]
    z = idx([[0, 1], [2, 0]], device)
    assert gpugrad.nonzero(z).tolist() == [[0, 1], [1, 0]]
    assert [i.tolist() for i in z.nonzero(as_tuple=True)] == [[0, 1], [1, 0]]
    assert gpugrad.count_nonzero(z, 0).tolist() == [1, 1] and z.count_nonzero().item() == 2
    assert gpugrad.isclose(t([1.0, 2.0], device), t([1.0 + 1e-9, 2.1], device)).tolist() == [
        True, False]
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        x.masked_select(t([1.0], device))


def test_fill_diagonal(device):
    x = gpugrad.zeros(3, 4, device=device)
    assert x.fill_diagonal_(2.0) is x
    assert x.tolist() == [[2.0, 0, 0, 0], [0, 2.0, 0, 0], [0, 0, 2.0, 0]]
    tall = gpugrad.zeros(7, 3, device=device).fill_diagonal_(1.0, wrap=True)
    assert to_numpy(tall).sum(axis=1).tolist() == [1, 1, 1, 0, 1, 1, 1]
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        gpugrad.zeros(2, 3, 4, device=device).fill_diagonal_(1.0)
    # with grad: the diagonal's gradient is cut, the rest passes through
    w = gpugrad.ones(2, 2, device=device, requires_grad=True)
    v = w * 1
    v.fill_diagonal_(0.0)
    v.sum().backward()
    assert w.grad.tolist() == [[0.0, 1.0], [1.0, 0.0]]


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
    for idx in (index, tuple(gpugrad.tensor(i, device=device) if isinstance(i, list) else i  # noqa: F402
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
