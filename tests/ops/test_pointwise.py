"""More of PyTorch's top-level functions and Tensor methods: pointwise functions and their
in-place forms, comparisons and logic, shape, scatter and integration functions; values,
gradients and PyTorch's messages (creation, runtime and the oracle: the _api file)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck

NAN, INF = float("nan"), float("inf")


def _check_grads(fn, *inputs):
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6)
    assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-5)


def _leaf(rng, shape, device, lo=-2.0, hi=2.0):
    return tensor(rng.uniform(lo, hi, shape), device, requires_grad=True)


# -- pointwise ----------------------------------------------------------------------------------
def test_inverse_hyperbolic_values_and_in_place(device):
    x = tensor([1.0, 2.0, 10.0], device)
    np.testing.assert_allclose(to_numpy(gpugrad.acosh(x)), np.arccosh([1.0, 2.0, 10.0]))
    np.testing.assert_allclose(to_numpy(x.arcsinh()), np.arcsinh([1.0, 2.0, 10.0]))
    y = tensor([-0.5, 0.0, 0.5], device)
    np.testing.assert_allclose(to_numpy(gpugrad.arctanh(y)), np.arctanh([-0.5, 0.0, 0.5]))
    assert y.atanh_() is y
    np.testing.assert_allclose(to_numpy(y), np.arctanh([-0.5, 0.0, 0.5]))
    z = tensor([3.0], device)
    gpugrad.acosh_(z)
    np.testing.assert_allclose(to_numpy(z), np.arccosh([3.0]))
    assert gpugrad.asinh(tensor([1, 2], device, gpugrad.int64)).dtype == gpugrad.float32
    assert gpugrad.atanh(tensor(1.0, device)).item() == INF


def test_exp2_deg2rad_ldexp_values(device):
    i = tensor([0, 3, -1], device, gpugrad.int64)
    np.testing.assert_array_equal(to_numpy(gpugrad.exp2(i)), [1.0, 8.0, 0.5])
    assert gpugrad.exp2(i).dtype == gpugrad.float32
    d = gpugrad.deg2rad(tensor([180, 90], device, gpugrad.int64))
    assert d.dtype == gpugrad.float32
    np.testing.assert_allclose(to_numpy(d), [math.pi, math.pi / 2], rtol=1e-6)
    np.testing.assert_allclose(to_numpy(tensor([math.pi], device).rad2deg()), [180.0])
    got = gpugrad.ldexp(tensor([1.0, 3.0], device), tensor([3, -1], device, gpugrad.int64))
    np.testing.assert_array_equal(to_numpy(got), [8.0, 1.5])
    la = gpugrad.logaddexp2(tensor([1.0, 0.0], device), tensor([1.0, 3.0], device))
    np.testing.assert_allclose(to_numpy(la), np.logaddexp2([1.0, 0.0], [1.0, 3.0]))


def test_copysign_heaviside_signbit(device):
    x = tensor([1.0, -2.0, 3.0, 4.0], device)
    o = tensor([-1.0, 1.0, -0.0, 0.0], device)
    np.testing.assert_array_equal(to_numpy(gpugrad.copysign(x, o)), [-1.0, 2.0, -3.0, 4.0])
    np.testing.assert_array_equal(to_numpy(x.copysign(-2)), [-1.0, -2.0, -3.0, -4.0])
    np.testing.assert_array_equal(to_numpy(gpugrad.signbit(o)), [True, False, True, False])
    h = gpugrad.heaviside(tensor([-1.0, 0.0, 2.0], device), tensor([0.5], device))
    np.testing.assert_array_equal(to_numpy(h), [0.0, 0.5, 1.0])
    with pytest.raises(RuntimeError, match="^heaviside is not yet implemented for tensors with "
                                           "different dtypes.$"):
        gpugrad.heaviside(tensor([1.0], device), tensor([1], device, gpugrad.int64))


def test_predicates(device):
    x = tensor([-INF, INF, NAN, 1.0], device)
    np.testing.assert_array_equal(to_numpy(gpugrad.isneginf(x)), [True, False, False, False])
    np.testing.assert_array_equal(to_numpy(x.isposinf()), [False, True, False, False])
    assert bool(gpugrad.isreal(x).all())
    assert gpugrad.isin(tensor([1, 2, 3], device, gpugrad.int64), 2).tolist() == [
        False, True, False]
    got = gpugrad.isin(tensor([1, 2, 3], device, gpugrad.int64),
                       tensor([3, 1], device, gpugrad.int64), invert=True)
    assert got.tolist() == [False, True, False]


def test_gcd_lcm_nextafter_frexp(device):
    a, b = tensor([12, 0, -4], device, gpugrad.int64), tensor([18, 5, 6], device, gpugrad.int64)
    assert gpugrad.gcd(a, b).tolist() == [6, 5, 2]
    assert a.lcm(b).tolist() == [36, 0, 12]
    with pytest.raises(NotImplementedError, match="^\"gcd_cpu\" not implemented for 'Double'$"):
        gpugrad.gcd(tensor([1.0], device), tensor([2.0], device))
    up = gpugrad.nextafter(tensor([1.0], device), tensor([2.0], device))
    assert to_numpy(up)[0] == np.nextafter(1.0, 2.0)
    with pytest.raises(NotImplementedError, match="\"nextafter_cpu\" not implemented for 'Long'"):
        gpugrad.nextafter(a, b)
    m, e = gpugrad.frexp(tensor([8.0, 3.0, 0.0, -0.75], device))
    np.testing.assert_array_equal(to_numpy(m), [0.5, 0.75, 0.0, -0.75])
    assert e.dtype == gpugrad.int32 and e.tolist() == [4, 2, 0, 0]
    with pytest.raises(RuntimeError, match=r"^torch.frexp\(\) only supports floating-point"):
        gpugrad.frexp(a)


def test_positive_negative(device):
    x = tensor([1.0, -2.0], device)
    assert gpugrad.positive(x) is x
    with pytest.raises(RuntimeError, match="^The `\\+` operator, on a bool tensor is not "
                                           "supported.$"):
        gpugrad.positive(tensor([True], device, gpugrad.bool))
    assert gpugrad.negative_(x) is x
    assert x.tolist() == [-1.0, 2.0]
    y = tensor([NAN, INF], device)
    gpugrad.nan_to_num_(y, nan=0.0, posinf=5.0)
    assert y.tolist() == [0.0, 5.0]


@pytest.mark.parametrize("name", ["asinh", "logaddexp2", "copysign", "ldexp", "frexp",
                                  "deg2rad", "exp2"])
def test_pointwise_gradients(name, device, rng):
    x = _leaf(rng, (2, 3), device)
    y = _leaf(rng, (3,), device)
    fns = {
        "asinh": (lambda a: gpugrad.asinh(a), (x,)),
        "logaddexp2": (gpugrad.logaddexp2, (x, y)),
        "copysign": (lambda a: gpugrad.copysign(a, y.detach()), (x,)),
        "ldexp": (gpugrad.ldexp, (x, y)),
        "frexp": (lambda a: gpugrad.frexp(a).mantissa, (x,)),
        "deg2rad": (gpugrad.deg2rad, (x,)),
        "exp2": (gpugrad.exp2, (x,)),
    }
    fn, inputs = fns[name]
    _check_grads(fn, *inputs)


def test_copysign_gradient_values(device):
    x = tensor([2.0, -3.0, 0.0], device, requires_grad=True)
    gpugrad.copysign(x, tensor([-1.0, -1.0, 1.0], device)).sum().backward()
    assert to_numpy(x.grad).tolist() == [-1.0, 1.0, 0.0]


def test_top_level_in_place_functions(device):
    x = tensor([-1.0, 0.5, 4.0], device)
    assert gpugrad.abs_(x) is x and x.tolist() == [1.0, 0.5, 4.0]
    gpugrad.clamp_(x, 0.6, 2.0)
    assert x.tolist() == [1.0, 0.6, 2.0]
    gpugrad.sqrt_(gpugrad.exp_(gpugrad.log_(x)))
    np.testing.assert_allclose(to_numpy(x), np.sqrt([1.0, 0.6, 2.0]))
    r = tensor([-1.0, 2.0], device)
    gpugrad.relu_(r)
    assert r.tolist() == [0.0, 2.0]
    gpugrad.zero_(r)
    assert r.tolist() == [0.0, 0.0]
    t = tensor([1.0, 5.0], device)
    gpugrad.threshold_(t, 2.0, -1.0)
    assert t.tolist() == [-1.0, 5.0]
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        gpugrad.sin_(tensor([1.0], device, requires_grad=True))


# -- comparisons and logic ------------------------------------------------------------------------
def test_comparisons_top_level_and_aliases(device):
    a, b = tensor([1.0, 2.0, 3.0], device), tensor([2.0, 2.0, 2.0], device)
    for name, want in [("eq", [0, 1, 0]), ("ne", [1, 0, 1]), ("gt", [0, 0, 1]), ("ge", [0, 1, 1]),
                       ("lt", [1, 0, 0]), ("le", [1, 1, 0]), ("greater", [0, 0, 1]),
                       ("greater_equal", [0, 1, 1]), ("less", [1, 0, 0]),
                       ("less_equal", [1, 1, 0]), ("not_equal", [1, 0, 1])]:
        assert getattr(gpugrad, name)(a, b).tolist() == [bool(w) for w in want], name
        assert getattr(a, name)(b).tolist() == [bool(w) for w in want], name
    c = a.clone()
    assert c.greater_(b) is c and c.tolist() == [0.0, 0.0, 1.0]
    with pytest.raises(TypeError, match=r"^eq\(\) received an invalid combination"):
        gpugrad.eq(1, a)


def test_logical_functions_are_logical_on_integers(device):
    a = tensor([1, 2, 0], device, gpugrad.int64)
    b = tensor([2, 0, 0], device, gpugrad.int64)
    assert gpugrad.logical_and(a, b).tolist() == [True, False, False]   # 1 & 2 would be 0
    assert a.logical_or(b).tolist() == [True, True, False]
    assert gpugrad.logical_xor(a, b).tolist() == [False, True, False]
    c = a.clone()
    assert c.logical_and_(b) is c and c.dtype == gpugrad.int64 and c.tolist() == [1, 0, 0]
    m = tensor([True, False], device, gpugrad.bool)
    m.logical_or_(tensor([False, False], device, gpugrad.bool))
    assert m.tolist() == [True, False]
    m.logical_not_()
    assert m.tolist() == [False, True]


def test_is_nonzero_same_size_signed(device):
    assert gpugrad.is_nonzero(tensor([[1.5]], device))
    assert not tensor(0, device, gpugrad.int64).is_nonzero()
    with pytest.raises(RuntimeError, match="^Boolean value of Tensor with no values is ambiguous$"):
        gpugrad.is_nonzero(tensor([], device))
    with pytest.raises(RuntimeError, match="with more than one value is ambiguous$"):
        gpugrad.is_nonzero(tensor([1.0, 2.0], device))
    assert gpugrad.is_same_size(tensor([1.0], device), tensor([2.0], device))
    assert not tensor([1.0], device).is_same_size(tensor([[2.0]], device))
    assert gpugrad.is_signed(tensor([1], device, gpugrad.int64))
    assert not tensor([1], device, gpugrad.uint8).is_signed()


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


def test_products_and_distances(device, rng):
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    ta, tb = tensor(a, device), tensor(b, device)
    np.testing.assert_allclose(to_numpy(gpugrad.inner(ta, tb)), np.inner(a, b))
    np.testing.assert_allclose(to_numpy(gpugrad.inner(ta, tensor(2.0, device))), 2 * a)
    with pytest.raises(RuntimeError, match=r"the last dimension must match on both input tensors "
                                           r"but got shapes \[2, 3\] and \[2\]"):
        gpugrad.inner(ta, tensor([1.0, 2.0], device))
    assert gpugrad.dist(tensor([0.0, 3.0], device), tensor([4.0, 0.0], device)).item() == 5.0
    assert tensor([1.0, -2.0], device).dist(tensor([0.0, 0.0], device), p=1).item() == 3.0
    np.testing.assert_array_equal(to_numpy(gpugrad.diagflat(tensor([[1.0, 2.0]], device), 1)),
                                  np.diagflat([1.0, 2.0], 1))
    np.testing.assert_array_equal(to_numpy(gpugrad.msort(ta)), np.sort(a, axis=0))
    np.testing.assert_array_equal(to_numpy(gpugrad.ger(ta[0], tb[0])), np.outer(a[0], b[0]))
    v = rng.standard_normal(3)
    np.testing.assert_allclose(to_numpy(gpugrad.vander(tensor(v, device), 4)), np.vander(v, 4))
    np.testing.assert_allclose(to_numpy(gpugrad.vander(tensor(v, device), increasing=True)),
                               np.vander(v, increasing=True))
    with pytest.raises(RuntimeError, match="^x must be a one-dimensional tensor.$"):
        gpugrad.vander(ta)


def test_addbmm_addr_and_in_place_products(device, rng):
    m, b1, b2 = rng.standard_normal((2, 5)), rng.standard_normal((3, 2, 4)), \
        rng.standard_normal((3, 4, 5))
    got = gpugrad.addbmm(tensor(m, device), tensor(b1, device), tensor(b2, device), beta=0.5,
                         alpha=2.0)
    np.testing.assert_allclose(to_numpy(got), 0.5 * m + 2.0 * np.einsum("bij,bjk->ik", b1, b2))
    v1, v2 = rng.standard_normal(2), rng.standard_normal(5)
    t = tensor(m, device)
    assert t.addr_(tensor(v1, device), tensor(v2, device), alpha=3.0) is t
    np.testing.assert_allclose(to_numpy(t), m + 3.0 * np.outer(v1, v2))
    nan_in = tensor(np.full((2, 5), NAN), device)
    clean = gpugrad.addr(nan_in, tensor(v1, device), tensor(v2, device), beta=0)
    np.testing.assert_allclose(to_numpy(clean), np.outer(v1, v2))   # beta=0 ignores nan
    with pytest.raises(RuntimeError, match="^addr: Expected 1-D argument vec1, but got 2-D$"):
        gpugrad.addr(nan_in, tensor(m, device), tensor(v2, device))
    s = tensor(m, device)
    s.addmm_(tensor(b1[0], device), tensor(b2[0], device), beta=2.0)
    np.testing.assert_allclose(to_numpy(s), 2.0 * m + b1[0] @ b2[0])
    u = tensor(m[0], device)
    u.addmv_(tensor(b2[0].T, device), tensor(b1[0, 0], device))
    np.testing.assert_allclose(to_numpy(u), m[0] + b2[0].T @ b1[0, 0])


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


def test_trapezoid_values(device):
    y = tensor([1.0, 2.0, 3.0], device)
    assert gpugrad.trapezoid(y, dx=2.0).item() == 8.0
    assert gpugrad.trapz(y, tensor([0.0, 1.0, 3.0], device)).item() == 6.5
    assert gpugrad.cumulative_trapezoid(y, tensor([0.0, 1.0, 3.0], device)).tolist() == [1.5, 6.5]
    assert gpugrad.trapezoid(tensor([], device)).item() == 0.0
    with pytest.raises(RuntimeError, match="^trapezoid: There must be one `x` value for each "
                                           "sample point$"):
        gpugrad.trapezoid(y, tensor([1.0, 2.0], device))


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


def test_histogram(device):
    h, edges = gpugrad.histogram(tensor([1.0, 2.0, 1.0], device), 2)
    assert h.tolist() == [2.0, 1.0] and edges.tolist() == [1.0, 1.5, 2.0]
    out = gpugrad.histogram(tensor([1.0, 2.0, 1.0], device), tensor([0.0, 1.5, 3.0], device),
                            weight=tensor([1.0, 2.0, 3.0], device), density=True)
    np.testing.assert_allclose(to_numpy(out.hist), [4 / 9, 2 / 9])
    assert type(out).__name__ == "histogram"
    h, edges = tensor([1.0, 1.0], device).histogram(2)
    assert edges.tolist() == [0.5, 1.0, 1.5] and h.tolist() == [0.0, 2.0]
    with pytest.raises(NotImplementedError, match="\"histogramdd\" not implemented for 'Long'"):
        gpugrad.histogram(tensor([1, 2], device, gpugrad.int64), 2)
    with pytest.raises(RuntimeError, match="bins must be > 0, but got 0 for dimension 0"):
        gpugrad.histogram(tensor([1.0], device), 0)
