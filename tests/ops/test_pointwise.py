"""Pointwise ops: inverse hyperbolic and the other elementwise functions, their in-place and
top-level forms, comparisons and logic, rounding, bitwise ops, fmax / fmin, the ops of
ops/pointwise (hypot, xlogy, fmod ...); values, gradients, node names and PyTorch's messages."""
from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from tests.ops._errors import raises
from tests.ops._gradients import _check_grads
from tests.ops._tensors import _leaf, idx, t


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


def _grad(fn, *inputs):
    fn(*inputs).sum().backward()
    return [to_numpy(t.grad) for t in inputs]


def test_fmax_fmin_ignore_nan(device):
    a = tensor([1.0, NAN, 3.0, NAN], device, requires_grad=True)
    b = tensor([2.0, 1.0, NAN, NAN], device, requires_grad=True)
    np.testing.assert_array_equal(to_numpy(gpugrad.fmax(a, b)), [2, 1, 3, NAN])
    np.testing.assert_array_equal(to_numpy(a.fmin(b)), [1, 1, 3, NAN])
    ga, gb = _grad(gpugrad.fmax, a, b)   # a gets it where a >= b or b is nan (as PyTorch)
    np.testing.assert_array_equal(ga, [0, 0, 1, 1])
    np.testing.assert_array_equal(gb, [1, 1, 0, 0])


def test_bitwise(device):
    a = np.array([[5, 3, -2], [12, 7, 1]])
    ta = tensor(a, device, gpugrad.int64)
    np.testing.assert_array_equal(to_numpy(gpugrad.bitwise_and(ta, 6)), a & 6)
    np.testing.assert_array_equal(to_numpy(ta | ta.flip(0)), a | a[::-1])
    np.testing.assert_array_equal(to_numpy(ta.bitwise_xor(3)), a ^ 3)
    np.testing.assert_array_equal(to_numpy(~ta), ~a)
    np.testing.assert_array_equal(to_numpy(ta << 2), a << 2)
    np.testing.assert_array_equal(to_numpy(gpugrad.bitwise_right_shift(ta, 1)), a >> 1)
    b = tensor([True, False], device, gpugrad.bool)
    np.testing.assert_array_equal(to_numpy(gpugrad.bitwise_not(b)), [False, True])
    np.testing.assert_array_equal(to_numpy(b & tensor([True, True], device, gpugrad.bool)),
                                  [True, False])
    t = ta.clone()
    t.bitwise_and_(1)
    np.testing.assert_array_equal(to_numpy(t), a & 1)
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for "
                                                  "'Float'"):
        gpugrad.bitwise_and(gpugrad.ones(2), gpugrad.ones(2))


NAN, INF = float("nan"), float("inf")


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


@pytest.mark.parametrize("name,ref", [("log_", np.log), ("floor_", np.floor), ("ceil_", np.ceil),
                                      ("trunc_", np.trunc), ("round_", np.round),
                                      ("sign_", np.sign), ("frac_", lambda a: a - np.trunc(a)),
                                      ("sin_", np.sin), ("rsqrt_", lambda a: a ** -0.5),
                                      ("log1p_", np.log1p), ("square_", np.square),
                                      ("exp2_", np.exp2)])
def test_in_place_unary(name, ref, device):
    a = np.array([0.4, 1.5, 2.5, 3.7])
    t = tensor(a, device)
    assert getattr(t, name)() is t
    np.testing.assert_allclose(to_numpy(t), ref(a), rtol=1e-12)
    assert t._version == 1


def test_in_place_unary_records_gradient(device):
    x = tensor([1.0, 2.0], device, requires_grad=True)
    y = x * 1
    y.log_()
    y.sum().backward()
    np.testing.assert_allclose(to_numpy(x.grad), [1.0, 0.5])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation"):
        x.floor_()


def test_in_place_comparisons(device):
    t = tensor([1.0, 2.0, 3.0], device)
    t.ge_(2)
    np.testing.assert_array_equal(to_numpy(t), [0, 1, 1])
    assert t.dtype == gpugrad.float64
    u = tensor([1.0, 2.0, 3.0], device)
    u.eq_(tensor([1.0, 0.0, 3.0], device))
    np.testing.assert_array_equal(to_numpy(u), [1, 0, 1])


def test_in_place_compound(device):
    t = tensor([1.0, 2.0], device)
    t.lerp_(tensor([3.0, 6.0], device), 0.5)
    np.testing.assert_array_equal(to_numpy(t), [2, 4])
    t.addcmul_(tensor([1.0, 2.0], device), tensor([3.0, 4.0], device), value=2)
    np.testing.assert_array_equal(to_numpy(t), [8, 20])
    t.addcdiv_(tensor([4.0, 5.0], device), tensor([2.0, 10.0], device))
    np.testing.assert_array_equal(to_numpy(t), [10, 20.5])
    t.cumsum_(0)
    np.testing.assert_array_equal(to_numpy(t), [10, 30.5])


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


# -- gradients at NaN and at atan2's origin, as PyTorch's (values printed by torch 2.13) ---------
def _grads(fn, device, *values):
    xs = [t(v, device, requires_grad=True) for v in values]
    fn(*xs).sum().backward()
    return [x.grad.tolist() for x in xs]


def test_relu_passes_the_gradient_at_nan(device):
    assert _grads(gpugrad.relu, device, [float("nan"), 0.0, -1.0, 2.0]) == [[1.0, 0.0, 0.0, 1.0]]


def test_maximum_and_minimum_pass_the_gradient_to_both_sides_of_a_nan(device):
    nan = float("nan")
    a, b = [1.0, nan, 2.0, nan, 3.0], [1.0, 0.0, nan, nan, 1.0]
    assert _grads(gpugrad.maximum, device, a, b) == [[0.5, 1.0, 1.0, 1.0, 1.0],
                                                     [0.5, 1.0, 1.0, 1.0, 0.0]]
    assert _grads(gpugrad.minimum, device, a, b) == [[0.5, 1.0, 1.0, 1.0, 0.0],
                                                     [0.5, 1.0, 1.0, 1.0, 1.0]]


def test_atan2_gradient_at_the_origin_is_zero(device):
    ga, gb = _grads(gpugrad.atan2, device, [0.0, 1.0, 0.0], [0.0, 0.0, 2.0])
    assert ga == [0.0, 0.0, 0.5] and gb == [-0.0, -1.0, -0.0]
    assert [math.copysign(1, v) for v in gb] == [-1, -1, -1]   # the signs of zero, too
