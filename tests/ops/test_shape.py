"""Shape ops: stacking and shape builders, views and their stride rule, splits, diagonals,
repeat / narrow / roll / flip, unfold, repeat_interleave, as_strided and the in-place shape
methods: values, recorded nodes and PyTorch's errors."""
from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from tests.ops._gradients import _check_grads
from tests.ops._tensors import X, _leaf, idx, t


def test_diagonal_is_a_writable_view_and_select_picks(device):
    x = t(np.arange(12.0).reshape(3, 4), device)
    d = x.diagonal(1)
    assert to_numpy(d).tolist() == [1.0, 6.0, 11.0]
    d.mul_(0)   # writes through to x, as PyTorch's view does
    assert to_numpy(x)[0, 1] == 0.0 and to_numpy(x)[2, 3] == 0.0
    base = t(np.ones((2, 2)), device, True)
    y = base * 3
    y.diagonal().mul_(2)
    y.sum().backward()
    assert to_numpy(base.grad).tolist() == [[6.0, 3.0], [3.0, 6.0]]
    assert gpugrad.diagonal(t(np.zeros((2, 3, 4)), device), 0, 0, 2).shape == (3, 2)
    assert to_numpy(x.select(1, -1)).tolist() == [3.0, 7.0, 0.0]
    assert x.select(0, 2).shape == (4,)


def test_atleast_nd_shapes():
    s, v, m = gpugrad.tensor(1.0), gpugrad.zeros(4), gpugrad.zeros(2, 3)
    assert [t.shape for t in gpugrad.atleast_1d(s, v)] == [(1,), (4,)]
    assert gpugrad.atleast_2d(v).shape == (1, 4)
    assert gpugrad.atleast_2d(s).shape == (1, 1)
    assert [t.shape for t in gpugrad.atleast_3d([s, v, m])] == [(1, 1, 1), (1, 4, 1), (2, 3, 1)]
    assert gpugrad.atleast_1d(m) is m   # already enough dims: the tensor itself


@pytest.mark.parametrize("name", ["hstack", "vstack", "dstack", "column_stack", "row_stack"])
def test_stacks_match_numpy(name, device, rng):
    ref = getattr(np, name if name != "row_stack" else "vstack")
    for shapes in [((3,), (3,)), ((2, 3), (2, 3)), ((2, 3, 2), (2, 3, 2))]:
        if name == "column_stack" and len(shapes[0]) == 3:
            continue
        arrays = [rng.standard_normal(s) for s in shapes]
        got = getattr(gpugrad, name)([tensor(a, device) for a in arrays])
        np.testing.assert_array_equal(to_numpy(got), ref(arrays))
    with pytest.raises(RuntimeError, match=f"^{name if name != 'row_stack' else 'vstack'} "
                                           f"expects a non-empty TensorList$"):
        getattr(gpugrad, name)([])


def test_block_diag_values_and_dtype(device):
    a = tensor([[1, 2], [3, 4]], device, gpugrad.int64)
    b = tensor([5.0, 6.0, 7.0], device, gpugrad.float32)
    got = gpugrad.block_diag(a, b, tensor(8, device, gpugrad.int64))
    assert got.dtype == gpugrad.float32
    np.testing.assert_array_equal(to_numpy(got), [[1, 2, 0, 0, 0, 0],
                                                  [3, 4, 0, 0, 0, 0],
                                                  [0, 0, 5, 6, 7, 0],
                                                  [0, 0, 0, 0, 0, 8]])
    with pytest.raises(RuntimeError, match="Input 1 has 3 dimensions"):
        gpugrad.block_diag(a, gpugrad.zeros(1, 1, 1))


def test_cartesian_prod_and_combinations(device):
    a, b = tensor([1, 2], device, gpugrad.int64), tensor([3, 4, 5], device, gpugrad.int64)
    np.testing.assert_array_equal(to_numpy(gpugrad.cartesian_prod(a, b)),
                                  [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]])
    np.testing.assert_array_equal(to_numpy(gpugrad.combinations(b)), [[3, 4], [3, 5], [4, 5]])
    np.testing.assert_array_equal(to_numpy(gpugrad.combinations(a, with_replacement=True)),
                                  [[1, 1], [1, 2], [2, 2]])
    assert gpugrad.combinations(a, 3).shape == (0, 3)
    with pytest.raises(RuntimeError, match=r"Expect a 1D vector, but got shape \[2, 2\]"):
        gpugrad.combinations(gpugrad.zeros(2, 2))


def test_diag_embed(device):
    x = tensor([[1.0, 2.0], [3.0, 4.0]], device)
    np.testing.assert_array_equal(to_numpy(gpugrad.diag_embed(x, 1)[1]),
                                  [[0, 3, 0], [0, 0, 4], [0, 0, 0]])
    y = x.diag_embed(-1, 0, 2)   # the matrices laid over dims 0 and 2
    assert y.shape == (3, 2, 3)
    np.testing.assert_array_equal(to_numpy(y[:, 0, :]), [[0, 0, 0], [1, 0, 0], [0, 2, 0]])


def test_broadcast_shapes():
    assert gpugrad.broadcast_shapes((2, 1), (3, 1, 4), 1) == gpugrad.Size([3, 2, 4])
    assert gpugrad.broadcast_shapes() == gpugrad.Size([])
    with pytest.raises(RuntimeError, match=r"Attempting to broadcast a dimension of length 4 at "
                                           r"-2! Mismatching argument at index 1 had \(4, 3\); "
                                           r"but expected shape should be broadcastable to "
                                           r"\[2, 3\]"):
        gpugrad.broadcast_shapes((2, 3), (4, 3))


# -- shape, indexing, scatters --------------------------------------------------------------------
def test_tri_indices_and_unravel(device):
    got = gpugrad.tril_indices(3, 4, 1, device=device)
    assert got.dtype == gpugrad.int64
    np.testing.assert_array_equal(to_numpy(got), np.stack(np.tril_indices(3, 1, 4)))
    np.testing.assert_array_equal(to_numpy(gpugrad.triu_indices(4, 3, -1)),
                                  np.stack(np.triu_indices(4, -1, 3)))
    with pytest.raises(NotImplementedError, match="\"tril_indices\" not implemented for 'Float'"):
        gpugrad.tril_indices(3, 3, dtype=gpugrad.float32)
    with pytest.raises(RuntimeError, match="^row must be non-negative, got-1$"):
        gpugrad.triu_indices(-1, 3)
    r, c = gpugrad.unravel_index(tensor([4, 7, -1], device, gpugrad.int64), (2, 3))
    assert r.tolist() == [1, 0, 1] and c.tolist() == [1, 1, 2]
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype"):
        gpugrad.unravel_index(tensor([1.0], device), (2, 3))
    with pytest.raises(ValueError, match=r"'shape' cannot have negative values, but got \(2, -3\)"):
        gpugrad.unravel_index(tensor([1], device, gpugrad.int64), (2, -3))


def test_splits(device):
    x = tensor(np.arange(24.0).reshape(2, 3, 4), device)
    assert [t.shape for t in gpugrad.hsplit(x, 3)] == [(2, 1, 4)] * 3
    assert [t.shape for t in x.vsplit([1])] == [(1, 3, 4), (1, 3, 4)]
    assert [t.shape for t in gpugrad.dsplit(x, 2)] == [(2, 3, 2)] * 2
    assert [t.shape for t in gpugrad.hsplit(tensor([1.0, 2.0], device), 2)] == [(1,), (1,)]
    with pytest.raises(RuntimeError, match="^torch.dsplit attempted to split along dimension 2, "
                                           "but the size of the dimension 4 is not divisible by "
                                           "the split_size 3!$"):
        gpugrad.dsplit(x, 3)
    with pytest.raises(RuntimeError, match="^torch.vsplit requires a tensor with at least 2 "
                                           "dimension, but got a tensor with 1 dimensions!$"):
        gpugrad.vsplit(tensor([1.0], device), 1)
    parts = gpugrad.split_with_sizes(x, [1, 2], 1)
    assert [p.shape for p in parts] == [(2, 1, 4), (2, 2, 4)]
    with pytest.raises(RuntimeError, match=r"split_sizes to sum exactly to 3 \(input tensor's "
                                           r"size at dimension 1\), but got split_sizes=\[1, 1\]"):
        x.split_with_sizes([1, 1], 1)


@pytest.mark.parametrize("name", ["select_scatter", "slice_scatter", "diagonal_scatter",
                                  "masked_scatter", "index_reduce", "addbmm", "addr", "inner",
                                  "dist", "vander", "trapezoid", "cumulative_trapezoid",
                                  "as_strided"])
def test_shape_function_gradients(name, device, rng):
    x, y = _leaf(rng, (3, 4), device), _leaf(rng, (3,), device)
    mask = tensor(rng.uniform(size=(3, 4)) > 0.5, device, gpugrad.bool)
    idx = tensor([0, 2, 0], device, gpugrad.int64)
    fns = {
        "select_scatter": (lambda a, b: gpugrad.select_scatter(a, b, 1, 2), (x, y)),
        "slice_scatter": (lambda a, b: gpugrad.slice_scatter(a, b.unsqueeze(1), 1, 1, 2), (x, y)),
        "diagonal_scatter": (lambda a, b: gpugrad.diagonal_scatter(a, b), (x, y)),
        "masked_scatter": (lambda a, b: gpugrad.masked_scatter(a, mask, b),
                           (x, _leaf(rng, (12,), device))),
        "index_reduce": (lambda a, b: gpugrad.index_reduce(a, 1, idx, b, "mean"),
                         (x, _leaf(rng, (3, 3), device))),
        "addbmm": (lambda a, b, c: gpugrad.addbmm(a, b, c, beta=0.5, alpha=2.0),
                   (x, _leaf(rng, (2, 3, 2), device), _leaf(rng, (2, 2, 4), device))),
        "addr": (lambda a, b, c: gpugrad.addr(a, b, c, alpha=-1.5),
                 (x, y, _leaf(rng, (4,), device))),
        "inner": (gpugrad.inner, (x, _leaf(rng, (2, 4), device))),
        "dist": (lambda a, b: gpugrad.dist(a, b, 3), (x, _leaf(rng, (4,), device))),
        "vander": (lambda b: gpugrad.vander(b, 4), (y,)),
        "trapezoid": (lambda a, b: gpugrad.trapezoid(a, b, dim=0), (x, y)),
        "cumulative_trapezoid": (lambda a: gpugrad.cumulative_trapezoid(a, dx=0.5), (x,)),
        "as_strided": (lambda a: gpugrad.as_strided(a, (3, 3), (2, 1), 1), (x,)),
    }
    fn, inputs = fns[name]
    _check_grads(fn, *inputs)


def test_as_strided_is_a_view_and_sums_overlaps(device):
    x = tensor(np.arange(6.0), device)
    v = gpugrad.as_strided(x, (2, 3), (1, 2), 0)
    assert v.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]
    x.add_(10)
    assert v.tolist() == [[10.0, 12.0, 14.0], [11.0, 13.0, 15.0]]
    leaf = tensor(np.arange(4.0), device, requires_grad=True)
    leaf.as_strided((3, 2), (1, 1)).sum().backward()   # windows [0,1], [1,2], [2,3]
    assert to_numpy(leaf.grad).tolist() == [1.0, 2.0, 2.0, 1.0]
    with pytest.raises(RuntimeError, match=r"^setStorage: sizes \[3, 3\], strides \[1, 1\], "
                                           r"storage offset 0, and itemsize 8 requiring a storage "
                                           r"size of 40 are out of bounds for storage of size 32$"):
        leaf.as_strided((3, 3), (1, 1))
    with pytest.raises(RuntimeError, match="^mismatch in length of strides and shape$"):
        leaf.as_strided((3,), (1, 1))


def test_in_place_shape_methods(device):
    x = tensor(np.arange(6.0).reshape(2, 3), device)
    assert x.swapaxes_(0, 1) is x and x.shape == (3, 2)
    x.swapdims_(0, 1)
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    m = tensor(np.ones((3, 3)), device)
    m.tril_(-1)
    np.testing.assert_array_equal(to_numpy(m), np.tril(np.ones((3, 3)), -1))
    m.fill_(1).triu_(1)
    np.testing.assert_array_equal(to_numpy(m), np.triu(np.ones((3, 3)), 1))
    assert x.broadcast_to((2, 2, 3)).shape == (2, 2, 3)


def test_in_place_shape_changes(device):
    t = tensor(np.arange(6.0).reshape(2, 3), device)
    assert t.unsqueeze_(0) is t and t.shape == (1, 2, 3)
    assert t.squeeze_().shape == (2, 3)
    t.t_()
    np.testing.assert_array_equal(to_numpy(t), np.arange(6.0).reshape(2, 3).T)
    x = tensor([1.0, 2.0], device, requires_grad=True)
    y = x * 3
    y.unsqueeze_(1)
    assert y.shape == (2, 1) and y.grad_fn.name() == "UnsqueezeBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 3])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.unsqueeze_(0)


def test_renorm_narrow_copy_sum_to_size(device):
    t = tensor([[3.0, 4.0], [0.3, 0.4]], device)
    np.testing.assert_allclose(to_numpy(t.renorm(2, 0, 1.0)),
                               [[0.6 / (1 + 1e-7 / 5) * 1, 0.8 / (1 + 1e-7 / 5)], [0.3, 0.4]],
                               rtol=1e-12)
    c = t.narrow_copy(1, 1, 1)
    c[0, 0] = 99.0
    assert float(t[0, 1]) == 4.0 and c.shape == (2, 1)   # a copy, not a view
    m = tensor(np.arange(6.0).reshape(2, 3), device)
    np.testing.assert_array_equal(to_numpy(m.sum_to_size(1, 3)), [[3, 5, 7]])
    np.testing.assert_array_equal(to_numpy(m.sum_to_size(2, 1)), [[3], [12]])
    np.testing.assert_array_equal(to_numpy(m.sum_to_size(3)), [3, 5, 7])
    with pytest.raises(RuntimeError, match=r"size \{\[3, 3\]\} is not expandable to size "
                                           r"\{\[2, 3\]\}\."):
        m.sum_to_size(3, 3)


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


# -- composites, logic, sampling ---------------------------------------------------------------
def test_shape_composites_record_pytorchs_nodes(device):
    x = t(np.arange(6.0).reshape(2, 3), device, True)
    assert x.ravel().grad_fn.name() == "ViewBackward0"
    m = gpugrad.movedim(t(np.zeros((2, 3, 4)), device), (0, 1), (2, 0))
    assert m.shape == (3, 4, 2)
    assert x.movedim(0, 1).grad_fn.name() == "PermuteBackward0"
    with pytest.raises(RuntimeError, match=re.escape("movedim: Invalid source or destination")):
        x.movedim((0, 1), (0,))
    with pytest.raises(TypeError, match=re.escape("movedim(): argument 'destination'")):
        x.movedim((0, 1), 0)   # a tuple and an int: PyTorch's TypeError
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


# -- more Tensor methods (unfold, kthvalue, mode, repeat_interleave, unique ...) ------------------
def test_unfold_is_a_view_and_checks_its_arguments(device):
    x = gpugrad.arange(6.0, device=device)
    w = x.unfold(0, 3, 2)
    assert w.tolist() == [[0.0, 1.0, 2.0], [2.0, 3.0, 4.0]]
    x[2] = 10.0   # written through the base: both windows see it
    assert w[:, 0].tolist() == [0.0, 10.0] and w[0, 2].item() == 10.0
    assert gpugrad.tensor(1.0, device=device).unfold(0, 1, 1).tolist() == [1.0]
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 6 but "
                                           "size is 7"):
        x.unfold(0, 7, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(0, 2, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unfold(1, 2, 1)


def test_repeat_interleave_forms_and_errors(device):
    x = gpugrad.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    assert x.repeat_interleave(2).tolist() == [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0]
    reps = gpugrad.tensor([1, 3], device=device)
    y = gpugrad.repeat_interleave(x, reps, dim=0)
    assert y.tolist() == [[1.0, 2.0]] + [[3.0, 4.0]] * 3
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0], [3.0, 3.0]]
    assert gpugrad.repeat_interleave(reps).tolist() == [0, 1, 1, 1]
    with pytest.raises(RuntimeError, match="Repeats must be non-negative"):
        x.repeat_interleave(-1)
    with pytest.raises(RuntimeError, match=r"repeats must have the same size as input along "
                                           r"dim, but got repeats.size\(0\) = 3 and "
                                           r"input.size\(0\) = 2"):
        x.repeat_interleave(gpugrad.tensor([1, 2, 3], device=device), dim=0)


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
    from gpugrad.ops.shape.views import ToCopyBackward0
    a = gpugrad.tensor([1.0, 2.0])
    b = ToCopyBackward0.apply(a)   # what to(..., copy=True) runs when nothing else changes
    b[0] = 9.0
    assert a.tolist() == [1.0, 2.0] and b.tolist() == [9.0, 2.0]
