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


# -- composites, logic, sampling ---------------------------------------------------------------
def test_shape_composites_record_pytorchs_nodes(device):
    x = t(np.arange(6.0).reshape(2, 3), device, True)
    assert x.ravel().grad_fn.name() == "ViewBackward0"
    m = gpugrad.movedim(t(np.zeros((2, 3, 4)), device), (0, 1), (2, 0))
    assert m.shape == (3, 4, 2)
    assert x.movedim(0, 1).grad_fn.name() == "PermuteBackward0"
    with pytest.raises(RuntimeError, match=re.escape("movedim: Invalid source or destination")):
        x.movedim((0, 1), 0)
    a, b = t([1.0, 2.0, 3.0], device, True), t([10.0, 20.0], device)
    gi, gj = gpugrad.meshgrid(a, b, indexing="ij")
    assert gi.shape == (3, 2) and to_numpy(gj).tolist() == [[10.0, 20.0]] * 3
    gx, gy = gpugrad.meshgrid(a, b, indexing="xy")
    assert gx.shape == (2, 3) and to_numpy(gx).tolist() == [[1.0, 2.0, 3.0]] * 2
    assert gi.grad_fn.name() == "ExpandBackward0"
    gi.sum().backward()
    assert to_numpy(a.grad).tolist() == [2.0, 2.0, 2.0]
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        gpugrad.meshgrid(a, b)
    p, q = gpugrad.broadcast_tensors(x, t([1.0, 2.0, 3.0], device))
    assert p is x and q.shape == (2, 3) and q.grad_fn is None


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


def test_bernoulli_and_multinomial_draw_from_the_right_distribution(device):
    gpugrad.manual_seed(3)
    probs = t(np.full(20000, 0.3), device)
    draws = gpugrad.bernoulli(probs)
    assert set(np.unique(to_numpy(draws))) <= {0.0, 1.0} and draws.dtype == gpugrad.float64
    assert abs(to_numpy(draws).mean() - 0.3) < 0.02
    counts = np.bincount(to_numpy(gpugrad.multinomial(t([1.0, 2.0, 7.0], device), 20000, True)),
                         minlength=3) / 20000
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7], atol=0.02)
    firsts = np.bincount(to_numpy(gpugrad.multinomial(
        t(np.tile([1.0, 1.0, 0.0, 5.0], (4000, 1)), device), 2))[:, 0], minlength=4) / 4000
    np.testing.assert_allclose(firsts, [1 / 7, 1 / 7, 0.0, 5 / 7], atol=0.03)
    rows = to_numpy(gpugrad.multinomial(t(np.ones((50, 4)), device), 4))
    assert all(sorted(r) == [0, 1, 2, 3] for r in rows)   # without replacement: a permutation
    r = gpugrad.randint_like(t(np.zeros(1000), device), 3, 6)
    assert set(np.unique(to_numpy(r))) == {3.0, 4.0, 5.0} and r.dtype == gpugrad.float64
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected p_in >= 0 && p_in <= 1 to be true, but got false.")):
        gpugrad.bernoulli(t([1.5], device))
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        gpugrad.multinomial(t([1.0, 1.0], device), 3)
    with pytest.raises(RuntimeError, match="not enough non-negative category to sample"):
        gpugrad.multinomial(t([1.0, 0.0, 0.0], device), 2)
    with pytest.raises(RuntimeError, match="probability tensor contains either"):
        gpugrad.multinomial(t([1.0, -1.0], device), 1)


def test_values_indices_results_print_as_pytorchs_return_types():
    x = t([[1.0, 3.0], [2.0, 0.0]])
    r = x.max(1)
    assert repr(r) == ("gpugrad.return_types.max(\nvalues=tensor([3., 2.], "
                       "dtype=gpugrad.float64),\nindices=tensor([1, 0]))")
    assert type(x.topk(1)).__name__ == "topk" and type(x.sort()).__name__ == "sort"
    values, indices = x.min(0)   # still a tuple
    assert values.tolist() == [1.0, 0.0] and indices.tolist() == [0, 1] and r[0] is r.values


def test_shape_errors_of_the_new_ops_are_pytorchs(device):
    a, b, c = t(np.ones((2, 3)), device), t(np.ones(4), device), t(np.ones(3), device)
    mask4 = gpugrad.tensor(np.ones(4, dtype=bool), device=device)
    for call, (x, y) in [
            (lambda: gpugrad.atan2(a, b), (3, 4)), (lambda: gpugrad.lerp(a, b, 0.5), (3, 4)),
            (lambda: gpugrad.addcmul(a, b, c), (3, 4)), (lambda: a.masked_select(mask4), (4, 3)),
            (lambda: a.masked_fill(mask4, 1.0), (4, 3))]:
        with pytest.raises(RuntimeError, match=re.escape(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                "non-singleton dimension 1")):
            call()


def test_trace_diag_median_and_moments(device):
    x = t(np.arange(12.0).reshape(3, 4), device, True)
    assert gpugrad.trace(x).item() == 0.0 + 5.0 + 10.0
    assert to_numpy(gpugrad.diag(x, 1)).tolist() == [1.0, 6.0, 11.0]
    assert to_numpy(x.diag(-1)).tolist() == [4.0, 9.0]
    d = gpugrad.diag(t([1.0, 2.0], device, True), 1)
    assert to_numpy(d).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    m = t([[3.0, 1.0, 2.0, 0.0], [5.0, 4.0, 7.0, 6.0]], device, True)
    assert m.median().item() == 3.0   # the lower of the two middle values, as PyTorch
    r = m.median(1)
    assert type(r).__name__ == "median" and to_numpy(r.values).tolist() == [1.0, 5.0]
    assert to_numpy(r.indices).tolist() == [1, 0]
    assert m.median(1, keepdim=True).values.shape == (2, 1)
    r.values.sum().backward()
    assert to_numpy(m.grad).tolist() == [[0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]]
    s, mu = gpugrad.std_mean(m, 1)
    np.testing.assert_allclose(to_numpy(s), np.std(to_numpy(m), 1, ddof=1), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(mu), [1.5, 5.5])
    v, mu = gpugrad.var_mean(m)
    assert v.item() == pytest.approx(np.var(to_numpy(m), ddof=1)) and mu.item() == 3.5
    with pytest.raises(RuntimeError, match="^trace: expected a matrix, but got tensor with dim 1"):
        gpugrad.trace(t([1.0], device))
    with pytest.raises(RuntimeError, match=r"^diag\(\): Supports 1D or 2D tensors. Got 3D"):
        gpugrad.diag(t(np.ones((2, 2, 2)), device))
