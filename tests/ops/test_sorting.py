"""Sorting and searching: sort / topk / argsort (nan as the largest, ties, zero-dim), searchsorted,
bucketize and unique_consecutive: values, index results and PyTorch's errors."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from tests.ops._gradients import grad_of
from tests.ops._tensors import X, same, t

NAN = float("nan")


def test_unique_consecutive(device):
    x = tensor([1, 1, 2, 2, 3, 1, 1, 2], device, gpugrad.int64)
    values, inverse, counts = gpugrad.unique_consecutive(x, return_inverse=True,
                                                         return_counts=True)
    np.testing.assert_array_equal(to_numpy(values), [1, 2, 3, 1, 2])
    np.testing.assert_array_equal(to_numpy(inverse), [0, 0, 1, 1, 2, 3, 3, 4])
    np.testing.assert_array_equal(to_numpy(counts), [2, 2, 1, 2, 1])
    m = tensor([[1, 5], [1, 5], [2, 5], [1, 5]], device, gpugrad.int64)
    rows, counts = m.unique_consecutive(return_counts=True, dim=0)
    np.testing.assert_array_equal(to_numpy(rows), [[1, 5], [2, 5], [1, 5]])
    np.testing.assert_array_equal(to_numpy(counts), [2, 1, 1])


def test_searchsorted_and_bucketize(device):
    seq = tensor([1.0, 3.0, 3.0, 5.0], device)
    v = tensor([0.0, 3.0, 4.0, 9.0, NAN], device)
    np.testing.assert_array_equal(to_numpy(gpugrad.searchsorted(seq, v)), [0, 1, 3, 4, 4])
    right = gpugrad.searchsorted(seq, v, side="right", out_int32=True)
    assert right.dtype == gpugrad.int32
    np.testing.assert_array_equal(to_numpy(right), [0, 3, 3, 4, 4])
    assert int(gpugrad.searchsorted(seq, 3.0, right=True)) == 3
    rows = tensor([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], device)
    np.testing.assert_array_equal(
        to_numpy(gpugrad.searchsorted(rows, tensor([[2.5], [5.0]], device))), [[2], [0]])
    unsorted = tensor([5.0, 1.0, 3.0], device)
    order = tensor([1, 2, 0], device, gpugrad.int64)
    np.testing.assert_array_equal(
        to_numpy(gpugrad.searchsorted(unsorted, tensor([4.0], device), sorter=order)), [2])
    np.testing.assert_array_equal(to_numpy(gpugrad.bucketize(v[:4], seq)), [0, 1, 3, 4])
    np.testing.assert_array_equal(to_numpy(gpugrad.bucketize(v[:4], seq, right=True)),
                                  [0, 3, 3, 4])
    assert not gpugrad.searchsorted(seq, v).requires_grad


def test_searchsorted_errors():
    seq = gpugrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="side and right can't be set to opposites"):
        gpugrad.searchsorted(seq, seq, side="left", right=True)
    with pytest.raises(RuntimeError, match="side can only be 'left' or 'right' but got foo"):
        gpugrad.searchsorted(seq, seq, side="foo")
    with pytest.raises(RuntimeError, match=r"boundaries tensor \[1, 2\] and input value tensor "
                                           r"\[2, 2\]"):
        gpugrad.searchsorted(seq.reshape(1, 2), gpugrad.zeros(2, 2))
    with pytest.raises(RuntimeError, match=r"boundaries tensor must be 1 dimension, but got "
                                           r"dim\(2\)"):
        gpugrad.bucketize(seq, seq.reshape(1, 2))


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


# -- ordering with nan ----------------------------------------------------------------------------
def test_sort_counts_nan_as_the_largest(device):
    x = t([2.0, NAN, 1.0, NAN, 3.0, -math.inf], device)
    values, indices = x.sort()
    same(to_numpy(values), [-math.inf, 1.0, 2.0, 3.0, NAN, NAN])
    assert to_numpy(indices).tolist() == [5, 2, 0, 4, 1, 3]
    for stable in (False, True):
        values, indices = x.sort(descending=True, stable=stable)
        same(to_numpy(values), [NAN, NAN, 3.0, 2.0, 1.0, -math.inf])
        assert to_numpy(indices).tolist() == [1, 3, 4, 0, 2, 5]
    assert to_numpy(x.argsort()).tolist() == [5, 2, 0, 4, 1, 3]
    assert to_numpy(x.argsort(descending=True)).tolist() == [1, 3, 4, 0, 2, 5]
    same(to_numpy(gpugrad.msort(x.reshape(6, 1))).ravel(), [-math.inf, 1, 2, 3, NAN, NAN])
    values, indices = x.topk(2)
    same(to_numpy(values), [NAN, NAN])
    assert to_numpy(indices).tolist() == [1, 3]
    values, indices = x.topk(3, largest=False)
    assert to_numpy(values).tolist() == [-math.inf, 1.0, 2.0]
    values, indices = x.kthvalue(5)
    assert math.isnan(values.item()) and indices.item() == 1
    rows = t([[1.0, NAN, 3.0], [NAN, NAN, 0.0]], device)
    values, indices = rows.topk(2, 1)
    same(to_numpy(values), [[NAN, 3.0], [NAN, NAN]])
    assert to_numpy(indices).tolist() == [[1, 2], [0, 1]]


def test_descending_sort_of_integers_bool_and_ties(device):
    values, indices = gpugrad.tensor([-2 ** 63, 0, 5], device=device).sort(descending=True)
    assert to_numpy(values).tolist() == [5, 0, -2 ** 63] and to_numpy(indices).tolist() == [2, 1, 0]
    values, indices = gpugrad.tensor([3, 1, 255], dtype=gpugrad.uint8, device=device).sort(
        descending=True)
    assert to_numpy(values).tolist() == [255, 3, 1] and values.dtype == gpugrad.uint8
    values, indices = gpugrad.tensor([True, False, True], device=device).sort(descending=True)
    assert to_numpy(values).tolist() == [True, True, False]
    assert to_numpy(indices).tolist() == [0, 2, 1]
    values, indices = t([1.0, 3.0, 1.0, 3.0], device).sort(descending=True, stable=True)
    assert to_numpy(indices).tolist() == [1, 3, 0, 2]
    g = grad_of(lambda x: x.sort(descending=True).values, [2.0, NAN, 1.0], device,
                [1.0, 2.0, 3.0])[1]
    assert g == [2.0, 1.0, 3.0]


def test_zero_dim_sort_topk_argsort(device):
    s = t(2.0, device)
    for values, indices in (s.sort(), s.sort(0, descending=True), s.topk(1), s.topk(0)):
        assert values.item() == 2.0 and tuple(indices.shape) == () and indices.item() == 0
    assert tuple(s.argsort(descending=True).shape) == ()
    assert gpugrad.msort(s).item() == 2.0
    with pytest.raises(IndexError):
        s.sort(1)
