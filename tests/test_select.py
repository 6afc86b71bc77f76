"""gather, index_select, masked_fill, sort/topk/argsort, repeat, narrow, outer and the other
selection functions: exact values, index results, PyTorch's errors. Gradients: op_db."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(np.asarray(data), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def idx(data, device="cpu"):
    return gpugrad.tensor(np.asarray(data), device=device)


X = [[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]]


def test_sort_topk_argsort_values_and_indices(device):
    x = t(X, device, True)
    v, i = gpugrad.sort(x, 1)
    assert to_numpy(v).tolist() == [[1.0, 2.0, 3.0], [0.0, 4.0, 5.0]]
    assert to_numpy(i).tolist() == [[1, 2, 0], [0, 2, 1]] and not i.requires_grad
    assert x.sort(1, descending=True).values.tolist() == [[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]]
    top = x.topk(2, dim=1)
    assert top.values.tolist() == [[3.0, 2.0], [5.0, 4.0]]
    assert top.indices.tolist() == [[0, 2], [1, 2]]
    assert x.topk(1, dim=0, largest=False).indices.tolist() == [[1, 0, 0]]
    assert gpugrad.argsort(x, 1, descending=True).tolist() == [[0, 2, 1], [1, 2, 0]]
    top.values.sum().backward()
    assert to_numpy(x.grad).tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    # equal values keep their order (stable), ascending and descending
    assert t([1.0, 0.0, 1.0, 0.0], device).sort(descending=True).indices.tolist() == [0, 2, 1, 3]
    assert t([1.0, 0.0, 1.0, 0.0], device).sort().indices.tolist() == [1, 3, 0, 2]


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
        (IndexError, "index 5 is out of bounds for dimension 1 with size 3",
         lambda: x.gather(1, idx([[5]], device))),
        (IndexError, "index -1 is out of bounds for dimension 1 with size 3",
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


def test_repeat_narrow_roll_flip_cumsum_tril(device):
    x = t(X, device, True)
    r = x.repeat(2, 1, 2)
    assert r.shape == (2, 2, 6)
    np.testing.assert_array_equal(to_numpy(r), np.tile(np.array(X), (2, 1, 2)))
    r.sum().backward()
    assert to_numpy(x.grad).tolist() == [[4.0] * 3] * 2
    assert to_numpy(x.narrow(1, -2, 2)).tolist() == [[1.0, 2.0], [5.0, 4.0]]
    assert x.narrow(0, 1, 1).grad_fn.name() == "SliceBackward0"
    assert to_numpy(x.roll(1, 1)).tolist() == [[2.0, 3.0, 1.0], [4.0, 0.0, 5.0]]
    assert to_numpy(x.flip(0)).tolist() == [X[1], X[0]]
    assert to_numpy(x.cumsum(1)).tolist() == [[3.0, 4.0, 6.0], [0.0, 5.0, 9.0]]
    assert gpugrad.cumsum(idx([True, True, False], device), 0).tolist() == [1, 2, 2]
    assert to_numpy(gpugrad.triu(x, 1)).tolist() == [[0.0, 1.0, 2.0], [0.0, 0.0, 4.0]]
    f = x.flip(0)
    f.mul_(0)   # a new tensor, not a view of x
    assert to_numpy(x).tolist() == X


def test_rounding_has_zero_gradient_and_frac_one(device):
    x = t([-1.5, -0.4, 0.5, 2.5], device, True)
    assert to_numpy(x.round()).tolist() == [-2.0, -0.0, 0.0, 2.0]   # halves to even
    assert to_numpy(x.floor()).tolist() == [-2.0, -1.0, 0.0, 2.0]
    assert to_numpy(x.ceil()).tolist() == [-1.0, -0.0, 1.0, 3.0]
    assert to_numpy(x.trunc()).tolist() == [-1.0, -0.0, 0.0, 2.0]
    (x.floor() + x.ceil() + x.round() + x.trunc()).sum().backward()
    assert to_numpy(x.grad).tolist() == [0.0] * 4
    x.grad = None
    x.frac().sum().backward()
    assert to_numpy(x.grad).tolist() == [1.0] * 4
    assert gpugrad.floor(idx([1, 2], device)).tolist() == [1, 2]


def test_tensor_helpers_stride_new_full_type_as_and_logic(device):
    x = t(np.zeros((2, 3)), device, True)
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3) and x.stride(1) == 1
    f = x.new_full((2,), 7.0)
    assert f.dtype == x.dtype and f.device == x.device and f.tolist() == [7.0, 7.0]
    assert x.new_empty(3).shape == (3,)
    i = x.type_as(idx([1], device))
    assert i.dtype == gpugrad.int64 and not i.requires_grad and i.grad_fn is None
    assert not x.long().requires_grad and x.double().requires_grad
    y = t([1.0, np.nan, np.inf], device)
    assert gpugrad.isnan(y).tolist() == [False, True, False]
    assert gpugrad.isinf(y).tolist() == [False, False, True]
    assert gpugrad.isfinite(y).tolist() == [True, False, False]
    assert gpugrad.any(y > 1).item() is True and gpugrad.all(y > 0).item() is False   # nan
    assert gpugrad.logical_and(y > 0, y < 2).tolist() == [True, False, False]
