"""scatter / index_* / take_along_dim, gpugrad.linalg and the functions of ops/misc.py: exact
values, in-place forms, node names, PyTorch's errors, and PyTorch itself as an oracle (skipped
without torch). Gradients of every form against finite differences: op_db / test_ops.py."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
from gpugrad.ops import scatter as scatter_ops


def t(data, device="cpu", requires_grad=False, dtype=gpugrad.float64):
    return gpugrad.tensor(np.asarray(data), dtype=dtype, device=device,
                          requires_grad=requires_grad)


def idx(data, device="cpu"):
    return gpugrad.tensor(np.asarray(data), device=device)


def raises(kind, message, call):
    with pytest.raises(kind, match="^" + re.escape(message)):
        call()


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
        scatter_ops.reduce_in_rounds(np, name, out, where, v)
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


# -- linear algebra ------------------------------------------------------------------------------
def test_linalg_exact_values(device):
    a = t([[2.0, 1.0], [1.0, 3.0]], device)
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.inv(a)), [[0.6, -0.2], [-0.2, 0.4]],
                               rtol=1e-14)
    assert gpugrad.linalg.det(a).item() == pytest.approx(5.0, rel=1e-14)
    sign, logabs = gpugrad.linalg.slogdet(t([[1.0, 2.0], [3.0, 4.0]], device))
    assert sign.item() == -1.0 and logabs.item() == pytest.approx(math.log(2.0), rel=1e-14)
    assert not sign.requires_grad and sign.grad_fn is None
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.solve(a, t([3.0, 4.0], device))),
                               [1.0, 1.0], rtol=1e-14)
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.solve(a, t([[3.0, 1.0]], device),
                                                             left=False)),
                               [[1.6, -0.2]], rtol=1e-14)
    low = gpugrad.linalg.cholesky(t([[4.0, 2.0], [2.0, 5.0]], device))
    assert to_numpy(low).tolist() == [[2.0, 0.0], [1.0, 2.0]]
    assert to_numpy(gpugrad.linalg.cholesky(t([[4.0, 2.0], [2.0, 5.0]], device),
                                            upper=True)).tolist() == [[2.0, 1.0], [0.0, 2.0]]
    e = t(np.eye(3), device)
    assert to_numpy(gpugrad.linalg.cross(e[0], e[1])).tolist() == [0.0, 0.0, 1.0]
    assert to_numpy(e.cross(e.roll(1, 0), dim=1)).tolist() == [[0, -1, 0], [0, 0, -1],
                                                               [-1, 0, 0]]
    k = gpugrad.kron(t([[1.0, 2.0]], device), t([[1.0], [10.0]], device))
    assert to_numpy(k).tolist() == [[1.0, 2.0], [10.0, 20.0]]
    m = t([[1.0, 1.0], [0.0, 1.0]], device)
    assert to_numpy(gpugrad.linalg.matrix_power(m, 5)).tolist() == [[1.0, 5.0], [0.0, 1.0]]
    assert to_numpy(m.matrix_power(-2)).tolist() == [[1.0, -2.0], [0.0, 1.0]]
    assert to_numpy(gpugrad.linalg.matrix_power(m, 0)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.svdvals(t([[3.0, 0.0], [0.0, -4.0]],
                                                                 device))), [4.0, 3.0])


def test_norms_exact(device):
    a = t([[1.0, -2.0], [3.0, 4.0]], device)
    la = gpugrad.linalg
    assert la.vector_norm(t([3.0, -4.0], device)).item() == 5.0
    assert la.vector_norm(a, 1).item() == 10.0 and la.vector_norm(a, math.inf).item() == 4.0
    assert la.vector_norm(a, -math.inf).item() == 1.0
    assert to_numpy(la.vector_norm(a, -math.inf, dim=1, keepdim=True)).tolist() == [[1.0],
                                                                                  [3.0]]
    assert la.matrix_norm(a, 1).item() == 6.0 and la.matrix_norm(a, -1).item() == 4.0
    assert la.matrix_norm(a, math.inf).item() == 7.0 and la.matrix_norm(a, -math.inf).item() == 3.0
    assert la.norm(a).item() == pytest.approx(math.sqrt(30.0), rel=1e-15)
    assert la.norm(a, "fro").item() == pytest.approx(math.sqrt(30.0), rel=1e-15)
    s = np.linalg.svd(to_numpy(a), compute_uv=False)
    assert la.norm(a, 2).item() == pytest.approx(s[0], rel=1e-14)
    assert la.matrix_norm(a, "nuc").item() == pytest.approx(s.sum(), rel=1e-14)
    assert la.norm(a, 1, dim=0).tolist() == [4.0, 6.0]


def test_det_gradient_of_a_singular_matrix_is_its_cofactor_matrix(device):
    a = t([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], device, True)
    d = gpugrad.linalg.det(a)
    assert abs(d.item()) < 1e-12
    d.backward()
    np.testing.assert_allclose(to_numpy(a.grad), [[4.0, 4.0, -4.0], [-2.0, -2.0, 2.0],
                                                  [0.0, 0.0, 0.0]], atol=1e-12)
    with pytest.raises(NotImplementedError, match="double backward through det of a singular"):
        gpugrad.autograd.grad(gpugrad.linalg.det(a), a, create_graph=True)


def test_linalg_errors_are_pytorchs(device):
    la = gpugrad.linalg
    singular = t([[1.0, 2.0], [2.0, 4.0]], device)
    batch = gpugrad.stack([t(np.eye(2), device), singular])
    cases = [
        (la.LinAlgError, "linalg.inv: The diagonal element 2 is zero, the inversion could not be "
                         "completed because the input matrix is singular.",
         lambda: la.inv(singular)),
        (la.LinAlgError, "linalg.inv: (Batch element 1): The diagonal element 2 is zero",
         lambda: gpugrad.inverse(batch)),
        (RuntimeError, "linalg.inv: A must be batches of square matrices, but they are 2 by 3 "
                       "matrices", lambda: la.inv(t(np.ones((2, 3)), device))),
        (RuntimeError, "linalg.inv: The input tensor A must have at least 2 dimensions.",
         lambda: la.inv(t(np.ones(3), device))),
        (RuntimeError, "linalg.det: Expected a floating point or complex tensor as input. Got "
                       "Long", lambda: la.det(idx(np.ones((2, 2), int), device))),
        (la.LinAlgError, "torch.linalg.solve: (Batch element 1): The solver failed because the "
                         "input matrix is singular.",
         lambda: la.solve(batch, t(np.ones((2, 2)), device))),
        (RuntimeError, "linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                       "(2x2 and 3x1)", lambda: la.solve(singular, t(np.ones(3), device))),
        (RuntimeError, "linalg.solve: Expected A and B to have the same dtype, but found A of "
                       "type Float and B of type Double instead",
         lambda: la.solve(singular.float(), t(np.ones(2), device))),
        (la.LinAlgError, "linalg.cholesky: The factorization could not be completed because the "
                         "input is not positive-definite (the leading minor of order 2 is not "
                         "positive-definite).", lambda: la.cholesky(singular)),
        (la.LinAlgError, "linalg.cholesky: (Batch element 1): The factorization could not be "
                         "completed because the input is not positive-definite (the leading "
                         "minor of order 1 is not positive-definite).",
         lambda: la.cholesky(gpugrad.stack([t(np.eye(2), device), -t(np.eye(2), device)]))),
        (RuntimeError, "linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2",
         lambda: la.cross(t(np.ones(2), device), t(np.ones(2), device))),
        (RuntimeError, "linalg.cross: inputs must have the same number of dimensions.",
         lambda: la.cross(t(np.ones(3), device), t(np.ones((2, 3)), device))),
        (RuntimeError, "linalg.matrix_norm: Order 3 not supported.",
         lambda: la.matrix_norm(singular, 3)),
        (RuntimeError, "linalg.matrix_norm: dims must be different. Got (0, 0)",
         lambda: la.norm(singular, 1, dim=(0, 0))),
        (RuntimeError, "linalg.norm: If dim is not specified but ord is, the input must be 1D or "
                       "2D. Got 3D.", lambda: la.norm(batch, 2)),
        (RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as "
                       "input. Got Long", lambda: la.vector_norm(idx([1, 2], device))),
        (RuntimeError, "linalg.matrix_power: A must be batches of square matrices, but they are "
                       "2 by 3 matrices",
         lambda: gpugrad.matrix_power(t(np.ones((2, 3)), device), 2)),
    ]
    for kind, message, call in cases:
        raises(kind, message, call)
    assert issubclass(la.LinAlgError, RuntimeError)
    with pytest.warns(UserWarning, match="without specifying the dim arg is deprecated"):
        gpugrad.cross(t(np.ones((3, 2)), device), t(np.ones((3, 2)), device))


def test_linalg_errors_where_the_array_module_does_not_raise():
    # CuPy does not raise on a singular or indefinite matrix: inv returns non-finite values,
    # cholesky leaves the failing pivot on the diagonal. The same errors must come out.
    from types import SimpleNamespace

    from gpugrad.ops import matrix
    quiet = SimpleNamespace(
        isfinite=np.isfinite, diagonal=np.diagonal, argmax=np.argmax, abs=np.abs, zeros=np.zeros,
        linalg=SimpleNamespace(inv=lambda a: np.full(a.shape, np.inf),
                               cholesky=lambda a: np.array([[1.0, 0.0], [2.0, 0.0]])))
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(matrix.LinAlgError, match="The diagonal element 2 is zero"):
        matrix._inverse(quiet, singular)
    with pytest.raises(matrix.LinAlgError, match="leading minor of order 2 is not"):
        matrix._cholesky(quiet, singular)
    fine = SimpleNamespace(**{**vars(quiet), "linalg": np.linalg})
    np.testing.assert_allclose(matrix._inverse(fine, np.eye(2) * 2), np.eye(2) / 2)
    np.testing.assert_allclose(matrix._cholesky(fine, np.eye(2) * 4), np.eye(2) * 2)


def test_linalg_is_an_importable_module_with_the_compositions(device):
    import gpugrad.linalg as la
    from gpugrad.linalg import inv, solve
    assert la is gpugrad.linalg and inv is la.inv and solve is la.solve
    assert la.matmul is gpugrad.matmul
    a = t([[1.0, 2.0], [3.0, 4.0]], device)
    assert to_numpy(la.multi_dot([a, a, t([1.0, 0.0], device)])).tolist() == [7.0, 15.0]
    assert to_numpy(la.vecdot(a, a, dim=0)).tolist() == [10.0, 20.0]
    assert to_numpy(la.diagonal(a, offset=1)).tolist() == [2.0]
    assert to_numpy(gpugrad.addmv(t([1.0, 1.0], device), a, t([1.0, 1.0], device),
                                  alpha=2)).tolist() == [7.0, 15.0]
    assert gpugrad.vdot(t([1.0, 2.0], device), t([3.0, 4.0], device)).item() == 11.0
    raises(RuntimeError, "multi_dot(): expected at least 2 tensors but got 1",
           lambda: la.multi_dot([a]))


# -- misc ----------------------------------------------------------------------------------------
def test_misc_exact_values(device):
    x = t([[1.0, 2.0, 3.0], [4.0, 0.0, 6.0]], device)
    assert to_numpy(x.cumprod(1)).tolist() == [[1.0, 2.0, 6.0], [4.0, 0.0, 0.0]]
    big = gpugrad.logcumsumexp(t([0.0, 1000.0, 1000.0], device), 0)
    np.testing.assert_allclose(to_numpy(big), [0.0, 1000.0, 1000.0 + math.log(2.0)],
                               rtol=1e-15)
    assert to_numpy(gpugrad.diff(x)).tolist() == [[1.0, 1.0], [-4.0, 6.0]]
    assert to_numpy(x.diff(dim=0, append=t([[0.0, 0.0, 0.0]], device))).tolist() == \
        [[3.0, -2.0, 3.0], [-4.0, 0.0, -6.0]]
    assert gpugrad.diff(idx([True, False, False], device)).tolist() == [True, False]
    assert gpugrad.tile(x, (2,)).shape == (2, 6) and x.tile((2, 1, 1)).shape == (2, 2, 3)
    assert [p.shape[0] for p in gpugrad.tensor_split(t(np.arange(7.0), device), 3)] == [3, 2, 2]
    assert [p.shape[0] for p in t(np.arange(7.0), device).tensor_split([1, 5, 9])] == \
        [1, 4, 2, 0]
    assert [p.shape[0] for p in gpugrad.tensor_split(t(np.arange(7.0), device),
                                                     idx([2, 3], device))] == [2, 1, 4]
    assert to_numpy(gpugrad.rot90(x)).tolist() == [[3.0, 6.0], [2.0, 0.0], [1.0, 4.0]]
    assert to_numpy(x.rot90(-1)).tolist() == [[4.0, 1.0], [0.0, 2.0], [6.0, 3.0]]
    assert to_numpy(gpugrad.fliplr(x)).tolist() == [[3.0, 2.0, 1.0], [6.0, 0.0, 4.0]]
    assert to_numpy(x.flipud()).tolist() == [[4.0, 0.0, 6.0], [1.0, 2.0, 3.0]]
    assert to_numpy(gpugrad.clamp_min(x, 2.0)).tolist() == [[2.0, 2.0, 3.0], [4.0, 2.0, 6.0]]
    assert to_numpy(x.clamp_max(2.0)).tolist() == [[1.0, 2.0, 2.0], [2.0, 0.0, 2.0]]
    assert to_numpy(gpugrad.hypot(t([3.0, 5.0], device), t([4.0, 12.0], device))).tolist() == \
        [5.0, 13.0]
    assert gpugrad.logaddexp(t([0.0], device), t([0.0], device)).item() == math.log(2.0)
    np.testing.assert_array_equal(
        to_numpy(gpugrad.xlogy(t([0.0, 0.0, 2.0], device), t([0.0, np.nan, 1.0], device))),
        [0.0, np.nan, 0.0])
    assert gpugrad.xlogy(idx([3, 0], device), idx([4, 0], device)).dtype == gpugrad.float32
    assert to_numpy(gpugrad.fmod(t([-3.0, 3.0], device), 2)).tolist() == [-1.0, 1.0]
    assert to_numpy(gpugrad.remainder(t([-3.0, 3.0], device), 2)).tolist() == [1.0, 1.0]
    assert to_numpy(t([-3.0, 3.0], device) % -2).tolist() == [-1.0, -1.0]
    assert (idx([7, -7], device) % 3).tolist() == [1, 2]
    special = t([np.nan, np.inf, -np.inf, 1.0], device)
    assert to_numpy(gpugrad.nan_to_num(special)).tolist() == [0.0, np.finfo(np.float64).max,
                                                              -np.finfo(np.float64).max, 1.0]
    assert to_numpy(special.nan_to_num(1.0, 2.0, 3.0)).tolist() == [1.0, 2.0, 3.0, 1.0]
    nans = t([[np.nan, 1.0], [2.0, 4.0]], device)
    assert gpugrad.nansum(nans).item() == 7.0
    assert to_numpy(nans.nanmean(1)).tolist() == [1.0, 3.0]
    assert np.isnan(gpugrad.nanmean(t([np.nan], device)).item())
    assert gpugrad.unflatten(t(np.zeros((2, 6)), device), 1, (3, -1)).shape == (2, 3, 2)
    assert to_numpy(x.take(idx([[0, -1], [5, 2]], device))).tolist() == [[1.0, 6.0],
                                                                           [6.0, 3.0]]
    assert np.isnan(gpugrad.logdet(t([[1.0, 2.0], [3.0, 4.0]], device)).item())
    assert gpugrad.logdet(t([[1.0, 2.0], [2.0, 4.0]], device)).item() == -math.inf
    assert t([[2.0, 0.0], [0.0, 4.0]], device).logdet().item() == pytest.approx(math.log(8.0))


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


def test_cumprod_gradient_is_exact_at_zeros(device):
    x = t([2.0, 0.0, 3.0, 0.0], device, True)
    x.cumprod(0).sum().backward()
    # y = [x0, x0 x1, x0 x1 x2, x0 x1 x2 x3]; only x1's zero is alone in the products it leaves
    assert to_numpy(x.grad).tolist() == [1.0, 2.0 + 6.0, 0.0, 0.0]


def test_misc_in_place_forms(device):
    a = t([3.0, -5.0], device, True)
    b = t([4.0, 12.0], device, True)
    y = a * 1
    assert y.hypot_(b) is y and y.grad_fn.name() == "HypotBackward0"
    assert to_numpy(y).tolist() == [5.0, 13.0]
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(a.grad), [3 / 5, -5 / 13], rtol=1e-15)
    np.testing.assert_allclose(to_numpy(b.grad), [4 / 5, 12 / 13], rtol=1e-15)
    c = t([1.0, 2.0, 0.0], device, True)
    z = c * 1
    z.cumprod_(0).sum().backward()   # the self cumprod_ reads is the value before the write
    assert to_numpy(c.grad).tolist() == [3.0, 1.0, 2.0]
    d = t([1.0, 2.0], device)
    d.logaddexp_(t([1.0, 2.0], device)).xlogy_(t([1.0, 1.0], device))
    assert to_numpy(d).tolist() == [0.0, 0.0]
    e = t([5.0, -3.0], device)
    other = t([2.0, 2.0], device, True)
    e.fmod_(other)   # self needs no grad, other does: recorded
    assert e.grad_fn.name() == "FmodBackward1" and to_numpy(e).tolist() == [1.0, -1.0]
    e.sum().backward()
    assert to_numpy(other.grad).tolist() == [-2.0, 1.0]
    f = t([5.0, -3.0], device).clamp_min_(other)
    assert f.grad_fn.name() == "ClampBackward0" and to_numpy(f).tolist() == [5.0, 2.0]


def test_misc_errors_are_pytorchs(device):
    x = t(np.ones((2, 3)), device)
    cases = [
        (RuntimeError, "Input must be >= 2-d.", lambda: gpugrad.fliplr(t([1.0], device))),
        (RuntimeError, "Input must be >= 1-d.", lambda: gpugrad.flipud(t(1.0, device))),
        (RuntimeError, "expected total dims >= 2, but got total dims = 1",
         lambda: gpugrad.rot90(t([1.0], device))),
        (RuntimeError, "expected rotation dims to be different, but got dim0 = 0 and dim1 = 0",
         lambda: x.rot90(1, (0, 0))),
        (RuntimeError, "expected total rotation dims == 2, but got dims = 3",
         lambda: x.rot90(1, (0, 1, 1))),
        (RuntimeError, "diff expects input to be at least one-dimensional",
         lambda: gpugrad.diff(t(1.0, device))),
        (RuntimeError, "diff expects prepend or append to be the same dimension as input",
         lambda: gpugrad.diff(x, prepend=t([1.0], device))),
        (RuntimeError, "order must be non-negative but got -1", lambda: x.diff(-1)),
        (RuntimeError, "number of sections must be larger than 0, got 0",
         lambda: x.tensor_split(0)),
        (RuntimeError, "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                       "with 0 dims", lambda: gpugrad.tensor_split(t(1.0, device), 2)),
        (RuntimeError, "tensor_split expected tensor_indices_or_sections to have dtype of long, "
                       "but got Float",
         lambda: x.tensor_split(t([1.0], device, dtype=gpugrad.float32))),
        (RuntimeError, "nanmean(): expected input to have floating point or complex dtype but "
                       "got Long", lambda: gpugrad.nanmean(idx([1, 2], device))),
        (RuntimeError, "unflatten: Provided sizes [4, -1] don't multiply up to the size of dim 1 "
                       "(3) in the input tensor", lambda: x.unflatten(1, (4, -1))),
        (RuntimeError, "diagonal dimensions cannot be identical 1, 1",
         lambda: x.diagonal(0, 1, 1)),
        (IndexError, "out of range: tried to access index -7 on a tensor of 6 elements.",
         lambda: gpugrad.take(x, idx([0, -7], device))),
        (RuntimeError, "take(): Expected a long tensor for index, but got Int",
         lambda: x.take(idx([0], device).int())),
        (IndexError, "select(): index 7 out of range for tensor of size [2, 3] at dimension 1",
         lambda: x.select(1, 7)),
        (IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
         lambda: x.select(2, 0)),
    ]
    for kind, message, call in cases:
        raises(kind, message, call)


NODES = [
    ("ScatterBackward0", lambda x: x.scatter(0, idx([[0, 1]]), x)),
    ("ScatterBackward1", lambda x: gpugrad.scatter(x, 0, idx([[0, 1]]), value=1.0)),
    ("ScatterAddBackward0", lambda x: x.scatter_add(1, idx([[1, 1]]), x)),
    ("ScatterReduceBackward0", lambda x: x.scatter_reduce(1, idx([[1, 1]]), x, "amin")),
    ("IndexAddBackward0", lambda x: x.index_add(1, idx([1, 0]), x)),
    ("IndexFillBackward0", lambda x: x.index_fill(1, idx([1]), 0.0)),
    ("IndexCopyBackward0", lambda x: x.index_copy(1, idx([1, 0]), x)),
    ("GatherBackward0", lambda x: x.take_along_dim(idx([[1, 1]]), 1)),
    ("LinalgInvExBackward0", lambda x: gpugrad.linalg.inv(x)),
    ("LinalgDetBackward0", lambda x: x.det()),
    ("LinalgSlogdetBackward0", lambda x: gpugrad.linalg.slogdet(x).logabsdet),
    ("LinalgSolveExBackward0", lambda x: gpugrad.linalg.solve(x, x)),
    ("LinalgCholeskyExBackward0", lambda x: gpugrad.linalg.cholesky(x @ x.mT)),
    ("LinalgSvdBackward0", lambda x: gpugrad.linalg.svdvals(x)),
    ("LinalgVectorNormBackward0", lambda x: gpugrad.linalg.norm(x)),
    ("CumprodBackward0", lambda x: x.cumprod(0)),
    ("LogcumsumexpBackward0", lambda x: x.logcumsumexp(1)),
    ("HypotBackward0", lambda x: gpugrad.hypot(x, x)),
    ("LogaddexpBackward0", lambda x: gpugrad.logaddexp(x, x)),
    ("XlogyBackward0", lambda x: gpugrad.xlogy(x, x)),
    ("XlogyBackward1", lambda x: gpugrad.xlogy(2.0, x)),
    ("XlogyBackward2", lambda x: gpugrad.xlogy(x, 2.0)),
    ("FmodBackward0", lambda x: gpugrad.fmod(x, 2.0)),
    ("FmodBackward1", lambda x: gpugrad.fmod(x, x)),
    ("RemainderBackward0", lambda x: x % 2),
    ("RemainderBackward1", lambda x: x.remainder(x)),
    ("NanToNumBackward0", lambda x: x.nan_to_num()),
    ("NansumBackward0", lambda x: x.nansum(0)),
    ("DiagonalBackward0", lambda x: x.diagonal()),
    ("SelectBackward0", lambda x: x.select(0, 1)),
    ("RepeatBackward0", lambda x: x.tile((2,))),
]


@pytest.mark.parametrize("name, call", NODES, ids=[n for n, _ in NODES])
def test_node_names_are_pytorchs(name, call):
    x = t([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    assert call(x).grad_fn.name() == name


# -- PyTorch as the oracle -----------------------------------------------------------------------
def _same(fn, *arrays, second=True):
    """fn(gpugrad) == fn(torch): values, gradients and (second) gradients of the gradients."""
    torch = pytest.importorskip("torch")
    ours = [t(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    y, z = fn(gpugrad, ours), fn(torch, theirs)
    np.testing.assert_allclose(to_numpy(y), z.detach().numpy(), rtol=1e-10, atol=1e-12)
    seed = np.cos(np.arange(z.numel())).reshape(tuple(z.shape))
    g = gpugrad.autograd.grad(y, ours, t(seed), create_graph=second, allow_unused=True)
    h = torch.autograd.grad(z, theirs, torch.tensor(seed), create_graph=second,
                            allow_unused=True)
    for a, b in zip(g, h):
        np.testing.assert_allclose(to_numpy(a), b.detach().numpy(), rtol=1e-9, atol=1e-11)
    if not second:
        return
    w = [np.sin(np.arange(a.size)).reshape(a.shape) for a in arrays]
    sg = sum((a * t(v)).sum() for a, v in zip(g, w) if a.requires_grad)
    sh = sum((b * torch.tensor(v)).sum() for b, v in zip(h, w) if b.requires_grad)
    # sg is 0 when no gradient depends on an input (the op is linear in them): PyTorch's
    # second derivatives must then be zero too
    g2 = [None] * len(ours) if isinstance(sg, int) else gpugrad.autograd.grad(
        sg, ours, allow_unused=True)
    h2 = [np.zeros(a.shape) for a in arrays] if isinstance(sh, int) else torch.autograd.grad(
        sh, theirs, allow_unused=True, materialize_grads=True)
    for a, b in zip(g2, h2):
        got = np.zeros(b.shape) if a is None else to_numpy(a)
        want = b if isinstance(b, np.ndarray) else b.numpy(force=True)
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


R = np.random.default_rng(7)
M = R.standard_normal((3, 3)) + 3 * np.eye(3)
V = R.standard_normal((2, 3))
W = R.standard_normal((2, 3))
I_PERM, I_DUP = np.array([[1, 0, 1], [0, 1, 0]]), np.array([[0, 1, 0], [0, 0, 0]])


def _i(lib, a):
    return lib.tensor(a)


ORACLE = [
    ("scatter", lambda L, a: a[0].scatter(0, _i(L, I_PERM), a[1]), (V, W)),
    ("scatter_value", lambda L, a: a[0].scatter(1, _i(L, I_DUP), 0.5), (V,)),
    ("scatter_add", lambda L, a: L.scatter_add(a[0], 0, _i(L, I_DUP), a[1]), (V, W)),
    *[(f"scatter_reduce_{r}_{inc}", lambda L, a, r=r, inc=inc: a[0].scatter_reduce(
        0, _i(L, I_DUP), a[1], r, include_self=inc), (V, W))
      for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)],
    ("index_add", lambda L, a: a[0].index_add(1, _i(L, np.array([2, 2, 0])), a[1], alpha=3),
     (V, W)),
    ("index_fill", lambda L, a: a[0].index_fill(1, _i(L, np.array([2, 0])), a[1][0, 0]),
     (V, W)),
    ("index_copy", lambda L, a: a[0].index_copy(1, _i(L, np.array([2, 0, 1])), a[1]), (V, W)),
    ("take_along_dim", lambda L, a: L.take_along_dim(a[0], _i(L, np.array([[2], [0]])), 1),
     (V,)),
    ("inv", lambda L, a: L.linalg.inv(a[0]), (M,)),
    ("det", lambda L, a: L.linalg.det(a[0]), (M,)),
    ("slogdet", lambda L, a: L.linalg.slogdet(a[0])[1], (M,)),
    ("solve", lambda L, a: L.linalg.solve(a[0], a[1].mT), (M, V)),
    ("cholesky", lambda L, a: L.linalg.cholesky(a[0] @ a[0].mT), (M,)),
    ("cross", lambda L, a: L.linalg.cross(a[0], a[1]), (V, W)),
    ("matrix_norm_2", lambda L, a: L.linalg.matrix_norm(a[0], 2), (M,)),
    ("matrix_power", lambda L, a: L.linalg.matrix_power(a[0], -3), (M,)),
    ("kron", lambda L, a: L.kron(a[0], a[1]), (V, W)),
    ("cumprod", lambda L, a: L.cumprod(a[0], 1), (V,)),
    ("logcumsumexp", lambda L, a: L.logcumsumexp(a[0], 1), (V,)),
    ("hypot", lambda L, a: L.hypot(a[0], a[1]), (V, W)),
    ("logaddexp", lambda L, a: L.logaddexp(a[0], a[1]), (V, W)),
    ("xlogy", lambda L, a: L.xlogy(a[0], a[1].abs()), (V, W)),
    ("fmod", lambda L, a: L.fmod(a[0], a[1]), (V, W)),
    ("remainder", lambda L, a: L.remainder(a[0], 0.3), (V,)),
    ("diagonal", lambda L, a: a[0].diagonal(1, 0, 1), (M,)),
    ("rot90", lambda L, a: L.rot90(a[0], 3), (V,)),
    ("diff", lambda L, a: L.diff(a[0], 2, 1, append=a[1]), (V, W)),
]


@pytest.mark.parametrize("name, fn, arrays", ORACLE, ids=[o[0] for o in ORACLE])
def test_against_pytorch(name, fn, arrays):
    _same(fn, *arrays, second=name != "matrix_norm_2")
