"""scatter / scatter_add / scatter_reduce, index_add / index_fill / index_copy / index_reduce,
masked_scatter and take_along_dim: exact values, in-place forms, ties, gradients and PyTorch's
errors. Gradients of every form against finite differences: op_db / test_op_db.py."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.ops.indexing import scatter
from tests.ops._errors import raises
from tests.ops._tensors import idx, t


# -- scatter family -------------------------------------------------------------------------------
def test_scatter_scatter_add_and_value_exact(device):
    x = t(np.zeros((2, 3)), device)
    src = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    i = idx([[1, 0, 1], [0, 1, 0]], device)
    assert to_numpy(x.scatter(0, i, src)).tolist() == [[4.0, 2.0, 6.0], [1.0, 5.0, 3.0]]
    assert to_numpy(gpugrad.scatter(x, 1, idx([[2], [0]], device), src)).tolist() == \
        [[0.0, 0.0, 1.0], [4.0, 0.0, 0.0]]
    assert to_numpy(x.scatter(1, idx([[2], [0]], device), 7.5)).tolist() == \
        [[0.0, 0.0, 7.5], [7.5, 0.0, 0.0]]
    dup = idx([[0, 0, 0], [0, 1, 0]], device)   # repeated positions add up
    assert to_numpy(x.scatter_add(0, dup, src)).tolist() == [[5.0, 2.0, 9.0], [0.0, 5.0, 0.0]]
    ints = gpugrad.zeros(2, 3, dtype=gpugrad.int64, device=device)
    assert ints.scatter(0, i, 2.5).tolist() == [[2, 2, 2], [2, 2, 2]]   # cast, as PyTorch


def test_scatter_reduce_exact_for_every_reduction(device):
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    src = t([[10.0, -1.0, 2.0], [0.5, 3.0, 4.0]], device)
    i = idx([[0, 1, 0], [0, 0, 0]], device)
    expected = {   # column 0 gets 10, 0.5; column 1: row 1 gets -1, row 0 gets 3; column 2: 2, 4
        ("sum", True): [[11.5, 5.0, 9.0], [4.0, 4.0, 6.0]],
        ("sum", False): [[10.5, 3.0, 6.0], [4.0, -1.0, 6.0]],
        ("prod", True): [[5.0, 6.0, 24.0], [4.0, -5.0, 6.0]],
        ("mean", True): [[23.0 / 6, 2.5, 3.0], [4.0, 2.0, 6.0]],
        ("mean", False): [[5.25, 3.0, 3.0], [4.0, -1.0, 6.0]],
        ("amax", True): [[10.0, 3.0, 4.0], [4.0, 5.0, 6.0]],
        ("amin", False): [[0.5, 3.0, 2.0], [4.0, -1.0, 6.0]],
    }
    for (reduce, include_self), want in expected.items():
        got = x.scatter_reduce(0, i, src, reduce, include_self=include_self)
        np.testing.assert_allclose(to_numpy(got), want, rtol=1e-15, err_msg=reduce)
    ints = gpugrad.tensor(np.array([1, 2, 3]), device=device)
    mean = ints.scatter_reduce(0, idx([0, 0], device), idx([-1, -2], device), "mean")
    assert mean.tolist() == [-1, 2, 3] and mean.dtype == gpugrad.int64   # rounds down
    top = ints.scatter_reduce(0, idx([0, 0], device), idx([1, 2], device), "amax",
                              include_self=False)
    assert top.tolist() == [2, 2, 3]


def test_scatter_reduce_gradients_share_ties_and_handle_zeros(device):
    x = t([[2.0, 1.0]], device, True)
    src = t([[2.0, 0.0], [2.0, 0.0]], device, True)
    i = idx([[0, 0], [0, 0]], device)
    y = x.scatter_reduce(0, i, src, "amax")
    assert y.grad_fn.name() == "ScatterReduceBackward0"
    y.sum().backward()
    # column 0: self and both src tie at 2 (a third each); column 1: self is the maximum
    np.testing.assert_allclose(to_numpy(x.grad), [[1 / 3, 1.0]], rtol=1e-15)
    np.testing.assert_allclose(to_numpy(src.grad), [[1 / 3, 0.0], [1 / 3, 0.0]], rtol=1e-15)
    x = t([[3.0, 0.0]], device, True)
    src = t([[0.0, 5.0], [4.0, 2.0]], device, True)
    x.scatter_reduce(0, i, src, "prod").sum().backward()
    # column 0: 3 * 0 * 4 -> d/dsrc00 = 12; column 1: 0 * 5 * 2 -> d/dself = 10
    assert to_numpy(x.grad).tolist() == [[0.0, 10.0]]
    assert to_numpy(src.grad).tolist() == [[12.0, 0.0], [0.0, 0.0]]
    x.grad = src.grad = None
    two_zeros = t([[0.0, 1.0], [0.0, 1.0]], device, True)
    y = x.scatter_reduce(0, i, two_zeros, "prod")
    y.sum().backward(retain_graph=True)   # plain backward: exact, zeros and all
    assert to_numpy(two_zeros.grad).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(NotImplementedError, match="more than one zero of src at a position"):
        gpugrad.autograd.grad(y.sum(), two_zeros, create_graph=True)
    # an excluded self equal to the result still counts as a tie (PyTorch): its share is dropped
    x = t([[3.0]], device, True)
    src = t([[3.0], [1.0]], device, True)
    x.scatter_reduce(0, idx([[0], [0]], device), src, "amax", include_self=False).backward()
    assert to_numpy(src.grad).tolist() == [[0.5], [0.0]] and to_numpy(x.grad).tolist() == [[0]]


def test_scatter_gradient_reaches_a_larger_src(device):
    x = t(np.zeros((2, 2)), device, True)
    src = t(np.arange(6.0).reshape(2, 3), device, True)   # only src[:, :2] is read
    y = x.scatter(1, idx([[1, 0], [0, 1]], device), src)
    assert to_numpy(y).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    (y * t([[1.0, 2.0], [3.0, 4.0]], device)).sum().backward()
    assert to_numpy(src.grad).tolist() == [[2.0, 1.0, 0.0], [3.0, 4.0, 0.0]]
    assert to_numpy(x.grad).tolist() == [[0.0, 0.0], [0.0, 0.0]]   # every entry overwritten


def test_index_add_fill_copy_exact(device):
    x = t(np.ones((3, 2)), device)
    s = t([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device)
    i = idx([2, 0, 2], device)
    assert to_numpy(x.index_add(0, i, s, alpha=2)).tolist() == [[7.0, 9.0], [1.0, 1.0],
                                                                  [13.0, 17.0]]
    assert to_numpy(x.index_fill(1, idx([1], device), -1.0)).tolist() == [[1.0, -1.0]] * 3
    assert to_numpy(x.index_fill(0, idx(1, device), 0.0)).tolist() == [[1.0, 1.0], [0.0, 0.0],
                                                                         [1.0, 1.0]]
    assert to_numpy(gpugrad.index_copy(x, 0, idx([2, 0], device), s[:2])).tolist() == \
        [[3.0, 4.0], [1.0, 1.0], [1.0, 2.0]]
    v = t(5.0, device, True)
    y = t(np.ones((3, 2)), device, True)
    z = y.index_fill(0, idx([1, 1, 2], device), v)   # a repeated index fills once
    assert z.grad_fn.name() == "IndexFillBackward1"
    z.sum().backward()
    assert v.grad.item() == 4.0
    assert to_numpy(y.grad).tolist() == [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


def test_take_along_dim_broadcasts_and_flattens(device):
    x = t([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]], device, True)
    order = gpugrad.argsort(x, 1)
    assert to_numpy(gpugrad.take_along_dim(x, order, 1)).tolist() == [[10.0, 20.0, 30.0],
                                                                       [40.0, 50.0, 60.0]]
    assert to_numpy(x.take_along_dim(idx([[0], [2]], device), 1)).tolist() == [[10.0], [50.0]]
    assert to_numpy(gpugrad.take_along_dim(x, idx([5, 0], device))).tolist() == [50.0, 10.0]
    y = gpugrad.take_along_dim(x, idx([[2, 2]], device), 1)   # the index broadcasts over rows
    assert to_numpy(y).tolist() == [[20.0, 20.0], [50.0, 50.0]]
    y.sum().backward()
    assert to_numpy(x.grad).tolist() == [[0.0, 0.0, 2.0], [0.0, 0.0, 2.0]]


def test_in_place_forms_write_into_self_and_record_the_op(device):
    base = t(np.zeros((2, 3)), device, True)
    x = base * 1
    src = t(np.ones((2, 3)), device, True)
    i = idx([[0, 1, 0], [1, 0, 1]], device)
    out = x.scatter_add_(0, i, src)
    assert out is x and x.grad_fn.name() == "ScatterAddBackward0" and x._version == 1
    assert to_numpy(x).tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    x.index_fill_(1, idx([0], device), 9.0).scatter_(0, i, 2.0)
    assert x.grad_fn.name() == "ScatterBackward1"
    x.index_copy_(0, idx([1], device), t([[5.0, 6.0, 7.0]], device))
    x.index_add_(1, idx([2], device), t([[1.0], [1.0]], device))
    assert to_numpy(x).tolist() == [[2.0, 2.0, 3.0], [5.0, 6.0, 8.0]]
    x.scatter_reduce_(1, idx([[0], [0]], device), src[:, :1] * 10, "amax")
    assert to_numpy(x).tolist() == [[10.0, 2.0, 3.0], [10.0, 6.0, 8.0]]
    x.sum().backward()   # scatter_ overwrote what scatter_add_ added: only the amax reads src
    assert to_numpy(src.grad).tolist() == [[10.0, 0.0, 0.0], [10.0, 0.0, 0.0]]
    assert to_numpy(base.grad).tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    plain = t(np.zeros(3), device)
    plain.scatter_(0, idx([2], device), t([4.0], device))   # nothing to record
    assert to_numpy(plain).tolist() == [0.0, 0.0, 4.0] and plain.grad_fn is None
    raises(RuntimeError, "a leaf Variable that requires grad is being used in an in-place "
                         "operation.", lambda: base.scatter_(0, i, 1.0))


def test_scatter_errors_are_pytorchs(device):
    x = t(np.zeros((2, 3)), device)
    src = t(np.ones((2, 3)), device)
    i = idx([[0, 1, 0], [1, 0, 1]], device)
    cases = [
        (RuntimeError, "scatter(): Expected dtype int32/int64 for index",
         lambda: x.scatter(0, t([[0.0]], device), src)),
        (RuntimeError, "scatter(): Expected self.dtype to be equal to src.dtype",
         lambda: x.scatter_add(0, i, src.float())),
        (RuntimeError, "Index tensor must have the same number of dimensions as self tensor",
         lambda: x.scatter(0, idx([0], device), src)),
        (RuntimeError, "Index tensor must have the same number of dimensions as src tensor",
         lambda: x.scatter(0, i, t(1.0, device))),
        (RuntimeError, "Expected index [2, 4] to be no larger than self [2, 3] apart from "
                       "dimension 0 and to be no larger size than src [2, 3]",
         lambda: x.scatter(0, idx(np.zeros((2, 4), int), device), src)),
        (RuntimeError, "Expected index [3, 1] to be no larger than self [2, 3] apart from "
                       "dimension 1", lambda: x.scatter(1, idx(np.zeros((3, 1), int), device),
                                                        1.0)),
        (RuntimeError, "index 5 is out of bounds for dimension 0 with size 2",
         lambda: x.scatter_reduce(0, i + 5, src, "sum")),
        (RuntimeError, "index -1 is out of bounds for dimension 1 with size 3",
         lambda: x.scatter_add(1, i - 1, src)),   # never a wrapped write
        (RuntimeError, "reduce argument must be either sum, prod, mean, amax or amin, got max",
         lambda: x.scatter_reduce(0, i, src, "max")),
        (IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
         lambda: x.scatter(2, i, src)),
    ]
    for kind, message, call in cases:
        raises(kind, message, call)


def test_index_errors_are_pytorchs(device):
    x = t(np.zeros((2, 3)), device)
    s = t(np.ones((2, 3)), device)
    i = idx([1, 0], device)
    cases = [
        (RuntimeError, "index_add_(): Expected dtype int32/int64 for index but got: Float",
         lambda: x.index_add(0, i.float(), s)),
        (IndexError, "index_add_(): Index is supposed to be a vector, but got dim: 2 with type: "
                     "Long and size: [1, 2]", lambda: x.index_add(0, idx([[1, 0]], device), s)),
        (RuntimeError, "index_add_(): Number of indices (1) should be equal to source.size(dim): "
                       "(2), for dim: 0", lambda: x.index_add(0, idx([1], device), s)),
        (RuntimeError, "index_add_(): self (Double) and source (Float) must have the same scalar "
                       "type", lambda: x.index_add(0, i, s.float())),
        (RuntimeError, "source tensor shape must match self tensor shape, excluding the specified "
                       "dimension. Got self.shape = [2, 3] source.shape = [2, 2]",
         lambda: x.index_add(0, i, s[:, :2])),
        (RuntimeError, "index 5 is out of bounds for dimension 0 with size 2",
         lambda: x.index_add(0, idx([1, 5], device), s)),
        (IndexError, "index_fill_(): Expected dtype int64 for index.",
         lambda: x.index_fill(1, i.int(), 2.0)),
        (RuntimeError, "Index has to be a vector/scalar",
         lambda: x.index_fill(1, idx([[1, 0]], device), 2.0)),
        (IndexError, "index 7 is out of bounds for dimension 1 with size 3",
         lambda: x.index_fill(1, idx([1, 7], device), 2.0)),
        (RuntimeError, "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                       "with 1 dimension(s).", lambda: x.index_fill(1, i, t([2.0], device))),
        (RuntimeError, "index_copy_(): Expected a long tensor for index, but got Int",
         lambda: x.index_copy(1, i.int(), s[:, :2])),
        (IndexError, "index_copy_(): Index should have dimension 1 or 0 (got 2)",
         lambda: x.index_copy(1, idx([[1, 0]], device), s[:, :2])),
        (IndexError, "index_copy_(): index 9 is out of bounds for dimension 1 with size 3",
         lambda: x.index_copy(1, idx([1, 9], device), s[:, :2])),
        (IndexError, "index_copy_(): Number of indices (2) should be equal to source.size(dim) "
                     "(3)", lambda: x.index_copy(1, i, s)),
        (RuntimeError, "index_copy_(): self and source expected to have the same dtype, but got "
                       "(self) Double and (source) Float",
         lambda: x.index_copy(1, i, s[:, :2].float())),
        (RuntimeError, "index_copy_(): Source/destination tensor must have same slice shapes. "
                       "Destination slice shape: 3 at dimension 0 and source slice shape: 2 at "
                       "dimension 0.", lambda: x.index_copy(0, i, s[:, :2])),
        (RuntimeError, "torch.take_along_dim(): dtype of indices should be Long but got Float",
         lambda: gpugrad.take_along_dim(x, i.float(), 1)),
        (RuntimeError, "torch.take_along_dim(): input and indices should have the same number of "
                       "dimensions, but got 2 dimensions for input, and 1 dimensions for indices",
         lambda: gpugrad.take_along_dim(x, i, 1)),
    ]
    for kind, message, call in cases:
        raises(kind, message, call)


def test_reduce_at_in_rounds_matches_ufunc_at():
    # the path taken when an array module has no ufunc.at (CuPy's multiply): run on numpy here
    rng = np.random.default_rng(0)
    where = (slice(None), np.array([3, 1, 3, 3, 0]))
    for name in ("add", "multiply", "maximum", "minimum"):
        out = rng.standard_normal((2, 4))
        want = out.copy()
        v = rng.standard_normal((2, 5))
        getattr(np, name).at(want, where, v)
        scatter.reduce_in_rounds(np, name, out, where, v)
        np.testing.assert_allclose(out, want, rtol=1e-15, err_msg=name)


def test_scatter_deprecated_reduce_argument(device):
    x = t(np.ones((1, 3)), device)
    with pytest.warns(UserWarning, match="reduce argument of gpugrad.scatter"):
        y = x.scatter(1, idx([[2, 2]], device), t([[2.0, 3.0]], device), reduce="multiply")
    assert to_numpy(y).tolist() == [[1.0, 1.0, 6.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = x.scatter(1, idx([[0, 0]], device), 2.0, reduce="add")
        assert to_numpy(y).tolist() == [[5.0, 1.0, 1.0]]
        raises(RuntimeError, "reduce argument must be either add or multiply.",
               lambda: x.scatter(1, idx([[0]], device), 2.0, reduce="mean"))


def test_scatter_functions_values(device):
    x = gpugrad.zeros(3, 3, dtype=gpugrad.float64, device=device)
    got = gpugrad.select_scatter(x, tensor([1.0, 2.0, 3.0], device), 1, -1)
    assert got.tolist() == [[0, 0, 1], [0, 0, 2], [0, 0, 3]] and x.sum().item() == 0
    got = x.slice_scatter(tensor(np.ones((3, 2)), device), 1, 0, 3, 2)
    assert got.tolist() == [[1, 0, 1]] * 3
    got = gpugrad.diagonal_scatter(x, tensor([5.0, 6.0], device), 1)
    assert got.tolist() == [[0, 5, 0], [0, 0, 6], [0, 0, 0]]
    with pytest.raises(RuntimeError, match=r"^expected src to have a size equal to the slice of "
                                           r"self. src size = \[2\], slice size = \[3\]$"):
        gpugrad.select_scatter(x, tensor([1.0, 2.0], device), 0, 0)


def test_masked_scatter_and_index_reduce(device):
    x = tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device)
    mask = tensor([True, False, True], device, gpugrad.bool)
    got = gpugrad.masked_scatter(x, mask, tensor([10.0, 20.0, 30.0, 40.0, 50.0], device))
    assert got.tolist() == [[10.0, 2.0, 20.0], [30.0, 5.0, 40.0]]
    with pytest.raises(RuntimeError, match="^Number of elements of source < number of ones in "
                                           "mask$"):
        x.masked_scatter(mask, tensor([1.0], device))
    with pytest.raises(RuntimeError, match="masked_scatter_ only supports boolean masks, but got "
                                           "mask with dtype Long"):
        x.masked_scatter(tensor([1, 0, 1], device, gpugrad.int64), x)
    y = x.clone()
    assert y.masked_scatter_(mask, tensor([7.0, 8.0, 9.0, 0.0], device)) is y
    assert y.tolist() == [[7.0, 2.0, 8.0], [9.0, 5.0, 0.0]]
    s = tensor([2.0, 3.0, 4.0], device)
    idx = tensor([0, 2, 0], device, gpugrad.int64)
    base = tensor([1.0, 1.0, 5.0], device)
    assert gpugrad.index_reduce(base, 0, idx, s, "prod").tolist() == [8.0, 1.0, 15.0]
    assert base.index_reduce(0, idx, s, "amax", include_self=False).tolist() == [4.0, 1.0, 3.0]
    assert base.index_reduce(0, idx, s, "mean").tolist() == [7 / 3, 1.0, 4.0]
    with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax or amin "
                                           "but got sum."):
        base.index_reduce(0, idx, s, "sum")
    with pytest.raises(IndexError, match="^index out of range in self$"):
        base.index_reduce(0, tensor([0, 3, 0], device, gpugrad.int64), s, "amin")
    b2 = base.clone()
    b2.index_reduce_(0, idx, s, "amin")
    assert b2.tolist() == [1.0, 1.0, 3.0]


# -- scatter_reduce ties --------------------------------------------------------------------------
def test_scatter_reduce_extremes_share_ties_as_pytorch(device):
    index = gpugrad.tensor([0, 0, 0, 2, 2, 2], device=device)
    gy = t([1.0, 10.0, 100.0], device)

    def run(self_values, reduce, include_self):
        x = t(self_values, device, True)
        src = t([2.0, 2.0, 1.0, 5.0, 5.0, 5.0], device, True)
        x.scatter_reduce(0, index, src, reduce, include_self=include_self).backward(gy)
        return to_numpy(src.grad).tolist(), to_numpy(x.grad).tolist()

    third = 100 / 3
    gs, gx = run([-1.0, 0.0, 7.0], "amax", False)
    np.testing.assert_allclose(gs, [0.5, 0.5, 0.0, third, third, third], rtol=1e-15)
    assert gx == [0.0, 10.0, 0.0]
    assert run([-1.0, 0.0, 7.0], "amax", True) == ([0.5, 0.5, 0.0, 0.0, 0.0, 0.0],
                                                   [0.0, 10.0, 100.0])
    # an excluded self equal to the result still counts among the ties (its share is dropped)
    gs, gx = run([2.0, 0.0, 5.0], "amax", False)
    np.testing.assert_allclose(gs, [1 / 3, 1 / 3, 0.0, 25.0, 25.0, 25.0], rtol=1e-15)
    assert gx == [0.0, 10.0, 0.0]
    gs, gx = run([2.0, 0.0, 5.0], "amax", True)
    np.testing.assert_allclose(gx, [1 / 3, 10.0, 25.0], rtol=1e-15)
    gs, gx = run([1.0, 0.0, 5.0], "amin", False)
    assert gs == [0.0, 0.0, 0.5, 25.0, 25.0, 25.0] and gx == [0.0, 10.0, 0.0]
