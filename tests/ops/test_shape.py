"""Top-level functions and Tensor methods of PyTorch's API: stacking and shape builders,
numerics (cdist, searchsorted, histc, cummax, quantile, cov ...), dtype facts, runtime settings,
legacy linear algebra names; their gradients; PyTorch as an oracle."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck

NAN = float("nan")


def _grad(fn, *inputs):
    fn(*inputs).sum().backward()
    return [to_numpy(t.grad) for t in inputs]


# -- shapes and stacking ------------------------------------------------------------------------
def test_tensordot_matches_numpy(device, rng):
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 3, 5))
    ta, tb = tensor(a, device), tensor(b, device)
    got = gpugrad.tensordot(ta, tb, dims=([1, 2], [1, 0]))
    np.testing.assert_allclose(to_numpy(got), np.tensordot(a, b, axes=([1, 2], [1, 0])))
    c = rng.standard_normal((3, 4, 6))
    np.testing.assert_allclose(to_numpy(gpugrad.tensordot(ta, tensor(c, device))),
                               np.tensordot(a, c, axes=2))
    assert gpugrad.tensordot(ta, tb, dims=0).shape == (2, 3, 4, 4, 3, 5)


def test_tensordot_errors():
    with pytest.raises(RuntimeError, match="contracted dimensions need to match, but first has "
                                           "size 3 in dim 1 and second has size 4 in dim 0"):
        gpugrad.tensordot(gpugrad.zeros(2, 3), gpugrad.zeros(4, 5), dims=([1], [0]))


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


# -- numerics -----------------------------------------------------------------------------------
def test_cdist_values_and_zero_distance_gradient(device, rng):
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    diff = a[:, :, None, :] - b[:, None, :, :]
    for p, ref in [(2.0, np.sqrt((diff ** 2).sum(-1))), (1.0, np.abs(diff).sum(-1)),
                   (math.inf, np.abs(diff).max(-1)), (3.0, (np.abs(diff) ** 3).sum(-1) ** (1 / 3))]:
        got = gpugrad.cdist(tensor(a, device), tensor(b, device), p=p)
        np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-12)
    x = tensor([[1.0, 2.0], [0.0, 0.0]], device, requires_grad=True)
    y = tensor([[1.0, 2.0]], device)
    gpugrad.cdist(x, y).sum().backward()   # row 0 is at distance 0: its gradient is 0
    np.testing.assert_allclose(to_numpy(x.grad), [[0, 0], [-1 / 5 ** 0.5, -2 / 5 ** 0.5]])


def test_cdist_errors():
    with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: 1D"):
        gpugrad.cdist(gpugrad.zeros(2), gpugrad.zeros(2, 2))
    with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns. "
                                           "X1: 3 X2: 4"):
        gpugrad.cdist(gpugrad.zeros(2, 3), gpugrad.zeros(2, 4))
    with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
        gpugrad.cdist(gpugrad.zeros(2, 3), gpugrad.zeros(2, 3), p=-1)


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


def test_histc(device):
    x = tensor([-1.0, -0.5, 0.0, 0.5, 1.0, 2.0, -3.0], device, gpugrad.float32)
    h = gpugrad.histc(x, bins=4, min=-1, max=1)   # bins [-1,-.5) [-.5,0) [0,.5) [.5,1]
    assert h.dtype == gpugrad.float32
    np.testing.assert_array_equal(to_numpy(h), [1, 1, 1, 2])
    np.testing.assert_array_equal(to_numpy(x.histc(bins=5)), [1, 0, 2, 2, 2])  # over [-3, 2]
    np.testing.assert_array_equal(to_numpy(gpugrad.histc(tensor([2.0, 2.0], device), 2)),
                                  [0, 2])     # min == max: the range widens to [1, 3]
    with pytest.raises(NotImplementedError, match="\"histogram_cpu\" not implemented for 'Long'"):
        gpugrad.histc(gpugrad.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="torch.histc: max must be larger than min"):
        gpugrad.histc(x, 4, min=3, max=1)
    with pytest.raises(RuntimeError, match="bins must be > 0, but got -1 for dimension 0"):
        gpugrad.histc(x, -1)


def test_cummax_cummin(device):
    x = tensor([1.0, 3.0, 3.0, 2.0, 5.0], device, requires_grad=True)
    values, indices = gpugrad.cummax(x, 0)
    np.testing.assert_array_equal(to_numpy(values), [1, 3, 3, 3, 5])
    np.testing.assert_array_equal(to_numpy(indices), [0, 1, 2, 2, 4])   # ties: the latest
    values.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 1, 2, 0, 1])
    v, i = tensor([[2.0, 0.0, 0.0, 1.0]], device).cummin(1)
    np.testing.assert_array_equal(to_numpy(v), [[2, 0, 0, 0]])
    np.testing.assert_array_equal(to_numpy(i), [[0, 1, 2, 2]])
    v, i = gpugrad.cummax(tensor([1.0, NAN, 3.0, NAN, 0.0], device), 0)
    np.testing.assert_array_equal(to_numpy(v), [1, NAN, NAN, NAN, NAN])
    np.testing.assert_array_equal(to_numpy(i), [0, 1, 1, 3, 3])


def test_fmax_fmin_ignore_nan(device):
    a = tensor([1.0, NAN, 3.0, NAN], device, requires_grad=True)
    b = tensor([2.0, 1.0, NAN, NAN], device, requires_grad=True)
    np.testing.assert_array_equal(to_numpy(gpugrad.fmax(a, b)), [2, 1, 3, NAN])
    np.testing.assert_array_equal(to_numpy(a.fmin(b)), [1, 1, 3, NAN])
    ga, gb = _grad(gpugrad.fmax, a, b)   # a gets it where a >= b or b is nan (as PyTorch)
    np.testing.assert_array_equal(ga, [0, 0, 1, 1])
    np.testing.assert_array_equal(gb, [1, 1, 0, 0])


def test_float_power_computes_in_float64(device):
    x = tensor([2, 3], device, gpugrad.int64)
    y = gpugrad.float_power(x, 2)
    assert y.dtype == gpugrad.float64
    np.testing.assert_array_equal(to_numpy(y), [4.0, 9.0])
    f = tensor([2.0], device, gpugrad.float32)
    assert f.float_power(tensor([0.5], device, gpugrad.float32)).dtype == gpugrad.float64
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but "
                                           "the operation's result requires dtype Double"):
        f.float_power_(2)
    np.testing.assert_array_equal(to_numpy(tensor([3.0], device).float_power_(2)), [9.0])


@pytest.mark.parametrize("mode", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(mode, device, rng):
    a = rng.standard_normal((3, 6))
    q = np.array([0.0, 0.1, 0.5, 0.77, 1.0])
    got = gpugrad.quantile(tensor(a, device), tensor(q, device), dim=1, keepdim=True,
                           interpolation=mode)
    assert got.shape == (5, 3, 1)
    np.testing.assert_allclose(to_numpy(got), np.quantile(a, q, axis=1, keepdims=True,
                                                          method=mode), rtol=1e-12)
    with_nan = a.copy()
    with_nan[0, 2] = with_nan[2, :] = np.nan
    got = tensor(with_nan, device).nanquantile(0.3, dim=1, interpolation=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # numpy: "All-NaN slice"
        ref = np.nanquantile(with_nan, 0.3, axis=1, method=mode)
    np.testing.assert_allclose(to_numpy(got), ref, rtol=1e-12)
    assert math.isnan(float(gpugrad.quantile(tensor(with_nan, device), 0.5)))


def test_quantile_errors():
    x = gpugrad.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"quantile\(\) q must be in the range \[0, 1\] but "
                                           r"got 1.5"):
        gpugrad.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match="interpolation must be one of linear, lower, higher, "
                                           "midpoint or nearest, but got foo"):
        gpugrad.quantile(x, 0.5, interpolation="foo")
    with pytest.raises(RuntimeError, match="input tensor must be either float or double dtype"):
        gpugrad.quantile(gpugrad.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="q tensor must be same dtype as the input tensor"):
        gpugrad.quantile(x, gpugrad.tensor([0.5], dtype=gpugrad.float64))
    with pytest.raises(RuntimeError, match=r"nanquantile\(\) input tensor must be non-empty"):
        gpugrad.nanquantile(gpugrad.zeros(0), 0.5)


def test_nanmedian(device):
    x = tensor([[1.0, NAN, 3.0, 2.0], [4.0, 0.0, NAN, NAN]], device)
    assert float(gpugrad.nanmedian(x)) == 2.0        # lower median of 1, 3, 2, 4, 0
    values, indices = x.nanmedian(1)
    np.testing.assert_array_equal(to_numpy(values), [2, 0])
    np.testing.assert_array_equal(to_numpy(indices), [3, 1])
    assert math.isnan(float(gpugrad.nanmedian(tensor([NAN, NAN], device))))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # the 0 / 0 of zero degrees of freedom
def test_cov_corrcoef_match_numpy(device, rng):
    a = rng.standard_normal((3, 6))
    f = np.array([1, 2, 1, 3, 1, 2])
    w = rng.uniform(0.5, 2.0, 6)
    ta = tensor(a, device)
    np.testing.assert_allclose(to_numpy(gpugrad.cov(ta)), np.cov(a), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(ta.cov(correction=0)), np.cov(a, ddof=0), rtol=1e-12)
    got = gpugrad.cov(ta, fweights=tensor(f, device, gpugrad.int64), aweights=tensor(w, device))
    np.testing.assert_allclose(to_numpy(got), np.cov(a, fweights=f, aweights=w), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(gpugrad.corrcoef(ta)), np.corrcoef(a), rtol=1e-12)
    v = tensor([1.0, 2.0, 4.0], device)
    assert float(gpugrad.cov(v)) == pytest.approx(7 / 3)
    with pytest.raises(RuntimeError, match="expected input to have two or fewer dimensions but "
                                           "got an input with 3 dimensions"):
        gpugrad.cov(gpugrad.zeros(2, 2, 2))
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        gpugrad.cov(tensor([1.0], device))


def test_logspace_poisson(device):
    np.testing.assert_allclose(to_numpy(gpugrad.logspace(-1, 2, 4, device=device)),
                               [0.1, 1, 10, 100], rtol=1e-6)
    two = gpugrad.logspace(0, 3, 4, base=2, dtype=gpugrad.int64)
    np.testing.assert_array_equal(to_numpy(two), [1, 2, 4, 8])
    rates = tensor([0.0, 4.0, 100.0], device, gpugrad.float32)
    gpugrad.manual_seed(3)
    first = gpugrad.poisson(rates.expand(2000, 3))
    gpugrad.manual_seed(3)
    again = gpugrad.poisson(rates.expand(2000, 3))
    assert first.dtype == gpugrad.float32
    np.testing.assert_array_equal(to_numpy(first), to_numpy(again))
    mean = to_numpy(first).mean(0)
    assert mean[0] == 0 and abs(mean[1] - 4) < 0.3 and abs(mean[2] - 100) < 1.5
    with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be "
                                           "non-negative"):
        gpugrad.poisson(gpugrad.tensor([-1.0]))


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


# -- dtype facts ----------------------------------------------------------------------------------
def test_finfo_iinfo():
    f = gpugrad.finfo(gpugrad.float32)
    assert (f.bits, f.eps, f.max, f.tiny, f.resolution, f.dtype) == (
        32, 2.0 ** -23, (2 - 2.0 ** -23) * 2.0 ** 127, 2.0 ** -126, 1e-6, "float32")
    assert f.min == -f.max and f.smallest_normal == f.tiny
    h = gpugrad.finfo(gpugrad.float16)
    assert (h.eps, h.max, h.tiny, h.resolution) == (2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3)
    assert gpugrad.finfo().dtype == "float32"
    assert gpugrad.finfo(gpugrad.float64).eps == 2.0 ** -52
    i = gpugrad.iinfo(gpugrad.int16)
    assert (i.bits, i.min, i.max, i.dtype) == (16, -32768, 32767, "int16")
    assert gpugrad.iinfo(gpugrad.uint8).max == 255
    with pytest.raises(TypeError, match="torch.finfo\\(\\) requires a floating point input type"):
        gpugrad.finfo(gpugrad.int32)
    with pytest.raises(TypeError, match="torch.iinfo\\(\\) requires an integer input type"):
        gpugrad.iinfo(gpugrad.float32)


def test_promotion_helpers():
    assert gpugrad.promote_types(gpugrad.float16, gpugrad.int64) == gpugrad.float16
    assert gpugrad.promote_types(gpugrad.uint8, gpugrad.int8) == gpugrad.int16
    assert gpugrad.promote_types(gpugrad.bool, gpugrad.int32) == gpugrad.int32
    assert gpugrad.result_type(gpugrad.tensor([1, 2]), 1.0) == gpugrad.float32
    assert gpugrad.result_type(gpugrad.tensor([1, 2], dtype=gpugrad.int32), 5) == gpugrad.int32
    assert gpugrad.result_type(gpugrad.tensor([1.0]), gpugrad.tensor([1.0],
                                                                     dtype=gpugrad.float64)) \
        == gpugrad.float64
    assert not gpugrad.can_cast(gpugrad.float32, gpugrad.int32)
    assert gpugrad.can_cast(gpugrad.int32, gpugrad.float16)
    assert gpugrad.can_cast(gpugrad.int64, gpugrad.uint8)
    assert not gpugrad.can_cast(gpugrad.int8, gpugrad.bool)
    assert gpugrad.is_complex(gpugrad.zeros(2)) is False
    assert gpugrad.zeros(2).is_complex() is False


# -- runtime --------------------------------------------------------------------------------------
def test_rng_state_round_trip():
    state = gpugrad.get_rng_state()
    assert state.dtype == gpugrad.uint8
    first = gpugrad.rand(5).tolist() + gpugrad.randn(3).tolist()
    gpugrad.set_rng_state(state)
    assert gpugrad.rand(5).tolist() + gpugrad.randn(3).tolist() == first
    assert gpugrad.rand(5).tolist() != first[:5]
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        gpugrad.set_rng_state(gpugrad.zeros(3))


def test_threads_and_determinism_flags():
    saved = gpugrad.get_num_threads(), gpugrad.are_deterministic_algorithms_enabled()
    try:
        gpugrad.set_num_threads(3)
        assert gpugrad.get_num_threads() == 3
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            gpugrad.set_num_threads(0)
        gpugrad.use_deterministic_algorithms(True, warn_only=True)
        assert gpugrad.are_deterministic_algorithms_enabled()
        assert gpugrad.is_deterministic_algorithms_warn_only_enabled()
    finally:
        gpugrad.set_num_threads(saved[0])
        gpugrad.use_deterministic_algorithms(saved[1])
    assert gpugrad.are_deterministic_algorithms_enabled() is saved[1]


def test_legacy_linalg(device, rng):
    m = rng.standard_normal((3, 3))
    spd = m @ m.T + 3 * np.eye(3)
    low = gpugrad.cholesky(tensor(spd, device))
    np.testing.assert_allclose(to_numpy(low), np.linalg.cholesky(spd), rtol=1e-12)
    up = tensor(spd, device).cholesky(upper=True)
    np.testing.assert_allclose(to_numpy(up), np.linalg.cholesky(spd).T, rtol=1e-12)
    a, b = tensor(m, device), tensor(spd, device)
    with pytest.warns(UserWarning, match="chain_matmul is deprecated"):
        got = gpugrad.chain_matmul(a, b, a)
    np.testing.assert_allclose(to_numpy(got), m @ spd @ m, rtol=1e-12)


def test_matrix_exp(device, rng):
    # exp of a nilpotent matrix: I + N + N^2 / 2
    n = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(to_numpy(gpugrad.matrix_exp(tensor(n, device))),
                               np.eye(3) + n + n @ n / 2, rtol=1e-14)
    # a symmetric matrix with a large norm (scaling and squaring): V exp(w) V^T
    s = rng.standard_normal((4, 4)) * 3
    s = s + s.T
    w, v = np.linalg.eigh(s)
    np.testing.assert_allclose(to_numpy(tensor(s, device).matrix_exp()),
                               (v * np.exp(w)) @ v.T, rtol=1e-11)
    np.testing.assert_allclose(to_numpy(gpugrad.linalg.matrix_exp(tensor(np.zeros((2, 2)),
                                                                         device))), np.eye(2))


# -- gradients of the differentiable functions ----------------------------------------------------
def _q(device):
    return tensor([0.2, 0.9], device)


GRAD_CASES = {
    "tensordot": (lambda a, b: gpugrad.tensordot(a, b, dims=1), [(3, 4), (4, 2)]),
    "block_diag": (lambda a, b: gpugrad.block_diag(a, b), [(2, 2), (3,)]),
    "cartesian_prod": (lambda a, b: gpugrad.cartesian_prod(a, b), [(2,), (3,)]),
    "combinations": (lambda a: gpugrad.combinations(a, 2), [(4,)]),
    "diag_embed": (lambda a: gpugrad.diag_embed(a, 1), [(2, 3)]),
    "stacks": (lambda a, b: gpugrad.hstack([a, b]) + gpugrad.vstack([a, b]).sum()
               + gpugrad.dstack([a, b]).sum() + gpugrad.column_stack([a, b]).sum(), [(3,), (3,)]),
    "cdist": (lambda a, b: gpugrad.cdist(a, b), [(3, 4), (2, 4)]),
    "cdist_p3": (lambda a, b: gpugrad.cdist(a, b, p=3), [(3, 4), (2, 4)]),
    "cummax": (lambda a: gpugrad.cummax(a, 1).values, [(3, 5)]),
    "cummin": (lambda a: a.cummin(0).values, [(3, 5)]),
    "fmax": (lambda a, b: gpugrad.fmax(a, b), [(3, 4), (4,)]),
    "fmin": (lambda a, b: gpugrad.fmin(a, b), [(3, 4), (4,)]),
    "float_power": (lambda a, b: gpugrad.float_power(a.abs() + 0.5, b), [(4,), (4,)]),
    "quantile": (lambda a: gpugrad.quantile(a, _q(a.device), dim=1), [(3, 5)]),
    "nanquantile": (lambda a: gpugrad.nanquantile(a, 0.4, interpolation="midpoint"), [(7,)]),
    "nanmedian": (lambda a: gpugrad.nanmedian(a, 0).values, [(5, 2)]),
    "cov": (lambda a: gpugrad.cov(a, aweights=tensor([1, 2, 3, 1, 0.5], a.device)), [(3, 5)]),
    "corrcoef": (lambda a: gpugrad.corrcoef(a), [(3, 5)]),
    "matrix_exp": (lambda a: gpugrad.matrix_exp(a), [(2, 3, 3)]),
    "renorm": (lambda a: a.renorm(2, 0, 1.0), [(3, 4)]),
    "sum_to_size": (lambda a: a.sum_to_size(3, 1), [(3, 4)]),
    "put_accumulate": (lambda a, s: a.put(gpugrad.tensor([0, 5, 0], device=a.device), s,
                                          accumulate=True), [(2, 3), (3,)]),
    "index_put": (lambda a, s: a.index_put((gpugrad.tensor([0, 1], device=a.device),), s),
                  [(2, 3), (2, 3)]),
    "index_put_accumulate": (lambda a, s: a.index_put(
        (gpugrad.tensor([0, 1, 0], device=a.device),), s, accumulate=True), [(2, 3), (3,)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradcheck(name, device, rng):
    fn, shapes = GRAD_CASES[name]
    inputs = [tensor(rng.standard_normal(s), device, requires_grad=True) for s in shapes]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_cummax_values_are_differentiable_indices_are_not(device):
    x = tensor([1.0, 2.0], device, requires_grad=True)
    values, indices = x.cummax(0)
    assert values.requires_grad and not indices.requires_grad


# -- PyTorch as an oracle -------------------------------------------------------------------------
ORACLE = {
    "tensordot": lambda m, a, b: m.tensordot(a, b, dims=([0], [0])),
    "atleast_3d": lambda m, a, b: m.atleast_3d(a[0]),
    "hstack": lambda m, a, b: m.hstack([a, a]),
    "vstack": lambda m, a, b: m.vstack([a[0], a[1]]),
    "dstack": lambda m, a, b: m.dstack([a, a]),
    "column_stack": lambda m, a, b: m.column_stack([a[0], a.T]),
    "block_diag": lambda m, a, b: m.block_diag(a, b[0]),
    "cartesian_prod": lambda m, a, b: m.cartesian_prod(a[0], b[0]),
    "combinations": lambda m, a, b: m.combinations(a[0], 3),
    "diag_embed": lambda m, a, b: m.diag_embed(a, -1, 0, 1),
    "cdist": lambda m, a, b: m.cdist(a.T, b.T),
    "cdist_p1": lambda m, a, b: m.cdist(a.T, b.T, p=1),
    "searchsorted": lambda m, a, b: m.searchsorted(m.sort(a[0]).values, b),
    "bucketize": lambda m, a, b: m.bucketize(a, m.sort(b[0]).values, right=True),
    "histc": lambda m, a, b: m.histc(a, 5),
    "cummax": lambda m, a, b: tuple(m.cummax(m.round(a), 1)),
    "cummin": lambda m, a, b: tuple(m.cummin(m.round(a), 0)),
    "fmax": lambda m, a, b: m.fmax(a, m.where(b[:, :3] > 0, b[:, :3], m.tensor(float("nan")))),
    "float_power": lambda m, a, b: m.float_power(a.abs(), 1.5),
    "quantile": lambda m, a, b: m.quantile(a, m.tensor([0.25, 0.6], dtype=a.dtype), dim=0),
    "nanquantile": lambda m, a, b: m.nanquantile(m.where(a > 1, a * 0 + float("nan"), a), 0.7,
                                                 interpolation="nearest"),
    "nanmedian": lambda m, a, b: m.nanmedian(m.where(a > 1, a * 0 + float("nan"), a)),
    "cov": lambda m, a, b: m.cov(a, correction=0),
    "corrcoef": lambda m, a, b: m.corrcoef(b),
    "logspace": lambda m, a, b: m.logspace(0, 2, 5, base=3.0),
    "matrix_exp": lambda m, a, b: m.matrix_exp(b[:, :2]),
    "renorm": lambda m, a, b: a.renorm(1, 1, 0.5),
    "sum_to_size": lambda m, a, b: a.sum_to_size(1, 3),
    "index_put": lambda m, a, b: a.index_put((m.tensor([0, 1, 0]),), b[0, :3],
                                             accumulate=True),
    "unique_consecutive": lambda m, a, b: m.unique_consecutive(
        m.round(a * 0.3), return_inverse=True, return_counts=True),
    "promote_types": lambda m, a, b: m.zeros(1, dtype=m.promote_types(m.float16, m.int64)),
    "bitwise": lambda m, a, b: (m.round(a * 10).long() << 2) ^ 5,
}


@pytest.mark.parametrize("name", sorted(ORACLE))
def test_against_torch(name, rng):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))
    fn = ORACLE[name]
    ours = fn(gpugrad, gpugrad.tensor(a), gpugrad.tensor(b))
    theirs = fn(torch, torch.tensor(a), torch.tensor(b))
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype).replace("torch.", "")
        np.testing.assert_allclose(to_numpy(o), t.numpy(), rtol=1e-10, atol=1e-12)
