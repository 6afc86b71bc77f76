"""Reductions, medians and statistics as PyTorch gives them: amax/amin over several dims with ties
sharing the gradient, dim=() as every dim, keepdim without a dim, nan in median, var_mean /
std_mean, torch.norm's forms, quantile, histc / histogram, cummax, cov, trapezoid, kthvalue,
bincount and result dtypes. Literal expected values (from PyTorch 2.13), then PyTorch itself as an
oracle (skipped without torch)."""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from tests.ops._errors import raises
from tests.ops._gradients import grad_of
from tests.ops._tensors import same, t

NAN = float("nan")


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


def test_trapezoid_values(device):
    y = tensor([1.0, 2.0, 3.0], device)
    assert gpugrad.trapezoid(y, dx=2.0).item() == 8.0
    assert gpugrad.trapz(y, tensor([0.0, 1.0, 3.0], device)).item() == 6.5
    assert gpugrad.cumulative_trapezoid(y, tensor([0.0, 1.0, 3.0], device)).tolist() == [1.5, 6.5]
    assert gpugrad.trapezoid(tensor([], device)).item() == 0.0
    with pytest.raises(RuntimeError, match="^trapezoid: There must be one `x` value for each "
                                           "sample point$"):
        gpugrad.trapezoid(y, tensor([1.0, 2.0], device))


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


def test_kthvalue_mode_aminmax(device):
    x = gpugrad.tensor([[3.0, 1.0, 2.0, 1.0, 3.0], [5.0, 4.0, 4.0, 5.0, 1.0]], device=device)
    k = x.kthvalue(3, dim=1, keepdim=True)
    assert k.values.tolist() == [[2.0], [4.0]] and k.indices.tolist() == [[2], [2]]
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for "
                                           r"dimension 1"):
        x.kthvalue(6, 1)
    m = x.mode(1)   # the smallest most frequent value, at its last occurrence
    assert m.values.tolist() == [1.0, 4.0] and m.indices.tolist() == [3, 2]
    lo, hi = x.aminmax()
    assert (lo.item(), hi.item()) == (1.0, 5.0)
    assert gpugrad.aminmax(x, dim=1).max.tolist() == [3.0, 5.0]
    with pytest.raises(RuntimeError, match="cannot compute aminmax over an empty dimension"):
        gpugrad.zeros(0, device=device).aminmax()


def test_bincount_unique_floor_divide_sgn(device):
    a = gpugrad.tensor([0, 1, 1, 4], device=device)
    assert gpugrad.bincount(a).tolist() == [1, 2, 0, 0, 1]
    assert a.bincount(minlength=7).tolist() == [1, 2, 0, 0, 1, 0, 0]
    w = gpugrad.tensor([0.5, 1.0, 2.0, 0.25], device=device)
    assert a.bincount(w).tolist() == [0.5, 3.0, 0.0, 0.0, 0.25]
    with pytest.raises(RuntimeError, match="bincount only supports 1-d non-negative integral"):
        gpugrad.bincount(gpugrad.tensor([-1], device=device))
    u, inv, counts = gpugrad.tensor([[3, 1], [1, 2]], device=device).unique(
        return_inverse=True, return_counts=True)
    assert u.tolist() == [1, 2, 3] and inv.tolist() == [[2, 0], [0, 1]]
    assert counts.tolist() == [2, 1, 1]
    x = gpugrad.tensor([7.0, -7.0], device=device, requires_grad=True)
    q = gpugrad.floor_divide(x, 2)
    assert q.tolist() == [3.0, -4.0] and not q.requires_grad
    assert gpugrad.sgn(gpugrad.tensor([-2.0, 0.0, 3.0], device=device)).tolist() == [-1, 0, 1]
    t = gpugrad.tensor([-2.0, 3.0], device=device)
    assert t.abs_() is t and t.tolist() == [2.0, 3.0]


# -- amax / amin ----------------------------------------------------------------------------------
def test_amax_amin_reduce_every_dim_given(device):
    x = t([[3.0, 1.0], [2.0, 5.0]], device)
    assert x.amax((0, 1)).item() == 5.0 and x.amin([1, 0]).item() == 1.0
    assert tuple(x.amax((0, 1), keepdim=True).shape) == (1, 1)
    assert x.amax(()).item() == 5.0 and gpugrad.amin(x, dim=()).item() == 1.0
    assert to_numpy(x.amax(-1)).tolist() == [3.0, 5.0]
    cube = t(np.arange(24.0).reshape(2, 3, 4), device)
    assert to_numpy(cube.amax((0, 2), keepdim=True)).ravel().tolist() == [15.0, 19.0, 23.0]
    assert to_numpy(cube.amin((2, 0))).tolist() == [0.0, 4.0, 8.0]
    ints = gpugrad.tensor([[1, 5], [3, 2]], dtype=gpugrad.int32, device=device)
    y = ints.amax((0, 1))
    assert y.dtype == gpugrad.int32 and y.item() == 5


def test_amax_amin_ties_share_the_gradient(device):
    assert grad_of(lambda x: x.amax(0), [3.0, 3.0, 1.0], device)[1] == [0.5, 0.5, 0.0]
    value, g = grad_of(lambda x: x.amax((0, 1)), [[3.0, 3.0], [1.0, 3.0]], device)
    assert value == 3.0
    np.testing.assert_allclose(g, [[1 / 3, 1 / 3], [0.0, 1 / 3]], rtol=1e-15)
    g = grad_of(lambda x: x.amin(1), [[3.0, 3.0], [1.0, 3.0]], device, [1.0, 1.0])[1]
    assert g == [[0.5, 0.5], [1.0, 0.0]]
    g = grad_of(lambda x: x.amax(), [[2.0, 2.0], [1.0, 0.0]], device)[1]
    assert g == [[0.5, 0.5], [0.0, 0.0]]
    x = t([[3.0, 3.0], [1.0, 3.0]], device, True)
    assert x.amax((1, 0)).grad_fn.name() == "AmaxBackward0"
    assert x.amin().grad_fn.name() == "AminBackward0"
    assert x.max().grad_fn.name() == "MaxBackward1"


def test_amax_of_a_nan_gives_its_slice_nan_gradients(device):
    # PyTorch's grad / count * mask: no entry equals a nan maximum
    value, g = grad_of(lambda x: x.amax(1), [[1.0, NAN, NAN], [1.0, 2.0, 0.0]], device,
                       [1.0, 1.0])
    same(value, [NAN, 2.0])
    same(g, [[NAN, NAN, NAN], [0.0, 1.0, 0.0]])
    # max() (MaxBackward1) shares the gradient among the nans instead
    assert grad_of(lambda x: x.max(), [1.0, NAN, NAN, 2.0], device)[1] == [0.0, 0.5, 0.5, 0.0]


def test_keepdim_without_dim_keeps_every_dim(device):
    x = t([[3.0, 1.0], [2.0, 5.0]], device)
    assert to_numpy(x.amax(keepdim=True)).tolist() == [[5.0]]
    assert to_numpy(x.amin(keepdim=True)).tolist() == [[1.0]]
    for y, expected in ((x.argmax(keepdim=True), [[3]]), (x.argmin(keepdim=True), [[1]])):
        assert y.dtype == gpugrad.int64 and to_numpy(y).tolist() == expected
    assert tuple(t(np.ones((2, 3, 4)), device).argmax(keepdim=True).shape) == (1, 1, 1)
    scalar = t(2.0, device)
    assert tuple(scalar.amax(keepdim=True).shape) == () and scalar.argmax(0, True).item() == 0


def test_empty_dim_list_reduces_everything(device):
    x = t([[3.0, 1.0], [2.0, 5.0]], device, True)
    y = x.sum(dim=())
    assert y.item() == 11.0 and y.grad_fn.name() == "SumBackward1"
    assert to_numpy(x.sum((), keepdim=True)).tolist() == [[11.0]]
    assert x.mean([]).item() == 2.75 and tuple(x.mean((), True).shape) == (1, 1)
    assert to_numpy(gpugrad.sum(x, None, True)).tolist() == [[11.0]]   # dim None, kept dims
    assert x.var(()).item() == pytest.approx(35 / 12, rel=1e-15)
    assert gpugrad.nansum(x, ()).item() == 11.0
    assert x.norm(dim=()).item() == pytest.approx(math.sqrt(39), rel=1e-15)
    empty = t(np.zeros((0, 3)), device)
    assert empty.sum(()).item() == 0.0 and math.isnan(empty.mean(()).item())


def test_reduction_dim_errors(device):
    x = t([[3.0, 1.0], [2.0, 5.0]], device)
    raises(RuntimeError, "dim 1 appears multiple times in the list of dims",
           lambda: x.amax((1, -1)))
    raises(RuntimeError, "dim 0 appears multiple times in the list of dims",
           lambda: x.sum((0, 0)))
    raises(RuntimeError, "dim 0 appears multiple times in the list of dims",
           lambda: t(2.0, device).amax((0, -1)))
    raises(TypeError, "argmax(): argument 'dim' (position 2) must be int, not tuple",
           lambda: x.argmax((0, 1)))
    raises(TypeError, "argmin(): argument 'dim' (position 2) must be int, not list",
           lambda: gpugrad.argmin(x, [0]))
    raises(TypeError, "prod() received an invalid combination of arguments - got (Tensor, "
                      "tuple), but expected one of:", lambda: x.prod((0, 1)))
    raises(TypeError, "prod(): argument 'dim' (position 2) must be int, not tuple",
           lambda: gpugrad.prod(x, (0, 1), keepdim=False))
    raises(TypeError, "linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                      "tuple", lambda: gpugrad.norm(x, (0, 1)))
    raises(RuntimeError, "std and var only support floating point and complex dtypes",
           lambda: gpugrad.tensor([1, 2], device=device).var())
    raises(RuntimeError, "argmax(): does not support bool input",
           lambda: gpugrad.tensor([True, False], device=device).argmax())
    raises(RuntimeError, "argmin(): does not support bool input",
           lambda: gpugrad.tensor([True, False], device=device).argmin(0))
    empty = t(np.zeros((0, 3)), device)
    raises(RuntimeError, "amax(): Expected reduction dim to be specified for input.numel() == 0.",
           lambda: empty.amax())
    raises(RuntimeError, "amin(): Expected reduction dim to be specified", lambda: empty.amin(()))
    raises(IndexError, "amax(): Expected reduction dim 0 to have non-zero size.",
           lambda: empty.amax((0, 1)))
    assert tuple(empty.amax(1, keepdim=True).shape) == (0, 1)
    raises(IndexError, "argmax(): Expected reduction dim to be specified for input.numel() == 0.",
           lambda: t(np.zeros(0), device).argmax())
    raises(IndexError, "argmin(): Expected reduction dim 0 to have non-zero size.",
           lambda: empty.argmin(0))
    assert to_numpy(empty.argmax(1)).tolist() == []
    raises(RuntimeError, "max(): Expected reduction dim to be specified for input.numel() == 0.",
           lambda: empty.max())
    raises(IndexError, "min(): Expected reduction dim 0 to have non-zero size.",
           lambda: empty.min(0))


# -- median / nanmedian ---------------------------------------------------------------------------
def test_full_median_ties_share_the_gradient(device):
    value, g = grad_of(lambda x: x.median(), [1.0, 2.0, 2.0, 2.0, 3.0], device)
    assert value == 2.0
    np.testing.assert_allclose(g, [0.0, 1 / 3, 1 / 3, 1 / 3, 0.0], rtol=1e-15)
    assert grad_of(lambda x: x.median(), [[2.0, 1.0], [2.0, 3.0]], device)[1] == \
        [[0.5, 0.0], [0.5, 0.0]]
    assert grad_of(lambda x: x.nanmedian(), [1.0, 2.0, NAN, 2.0, 3.0], device)[1] == \
        [0.0, 0.5, 0.0, 0.5, 0.0]
    x = t([1.0, 2.0], device, True)
    assert x.median().grad_fn.name() == "MedianBackward0"
    assert x.nanmedian().grad_fn.name() == "NanmedianBackward0"
    assert x.median(0).values.grad_fn.name() == "MedianBackward1"
    assert x.nanmedian(0).values.grad_fn.name() == "NanmedianBackward1"


def test_median_propagates_nan_and_nanmedian_skips_it(device):
    value, g = grad_of(lambda x: x.median(), [1.0, NAN, NAN, 2.0], device)
    assert math.isnan(value) and g == [0.0, 0.5, 0.5, 0.0]
    assert grad_of(lambda x: x.nanmedian(), [1.0, NAN, NAN, 2.0], device) == \
        (1.0, [1.0, 0.0, 0.0, 0.0])
    value, g = grad_of(lambda x: x.nanmedian(), [NAN, NAN], device)
    assert math.isnan(value) and g == [0.5, 0.5]
    x = t([[1.0, NAN, 3.0, NAN], [3.0, 1.0, 2.0, 0.0]], device)
    values, indices = x.median(1)
    same(to_numpy(values), [NAN, 1.0])
    assert to_numpy(indices).tolist() == [1, 1]   # the first nan of the row
    values, indices = x.nanmedian(1)
    assert to_numpy(values).tolist() == [1.0, 1.0] and to_numpy(indices).tolist() == [0, 1]
    values, indices = t([[NAN, 1.0, NAN, 2.0, 3.0]], device).nanmedian(1, keepdim=True)
    assert to_numpy(values).tolist() == [[2.0]] and to_numpy(indices).tolist() == [[3]]


def test_median_of_nothing(device):
    assert math.isnan(t(np.zeros(0), device).median().item())
    assert math.isnan(t(np.zeros((0, 3)), device).nanmedian().item())
    x = t(np.zeros(0), device, True)
    x.median().backward()
    assert to_numpy(x.grad).tolist() == []
    # integers: PyTorch's cast of that nan
    for dtype, expected in ((gpugrad.int64, -2 ** 63), (gpugrad.int32, -2 ** 31),
                            (gpugrad.int16, 0), (gpugrad.uint8, 0)):
        y = gpugrad.zeros(0, dtype=dtype, device=device).median()
        assert y.dtype == dtype and y.item() == expected
    raises(IndexError, "median(): Expected reduction dim 0 to have non-zero size.",
           lambda: t(np.zeros((0, 3)), device).median(0))
    values, indices = t(np.zeros((0, 3)), device).median(1, keepdim=True)
    assert tuple(values.shape) == tuple(indices.shape) == (0, 1)
    assert indices.dtype == gpugrad.int64
    values, indices = t(2.0, device).median(0)
    assert values.item() == 2.0 and indices.item() == 0 and tuple(indices.shape) == ()


def test_median_dtype_errors(device):
    flags = gpugrad.tensor([True, False, True], device=device)
    raises(NotImplementedError, "\"median_cpu\" not implemented for 'Bool'", flags.median)
    raises(NotImplementedError, "\"median_out\" not implemented for 'Bool'",
           lambda: flags.median(0))
    raises(NotImplementedError, "\"median_cpu\" not implemented for 'Bool'", flags.nanmedian)
    assert gpugrad.tensor([3, 1, 2, 2], device=device).median().item() == 2


# -- var_mean / std_mean / norm -------------------------------------------------------------------
def test_var_mean_std_mean_arguments(device):
    x = t([[1.0, 2.0], [3.0, 4.0]], device)

    def pair(r):
        return [to_numpy(v).tolist() for v in r]
    assert pair(gpugrad.var_mean(x, unbiased=False)) == [1.25, 2.5]
    assert pair(gpugrad.var_mean(x, 0, False)) == [[1.0, 1.0], [2.0, 3.0]]
    assert pair(gpugrad.var_mean(x, False)) == [1.25, 2.5]
    assert pair(gpugrad.var_mean(x, dim=1, unbiased=False, keepdim=True)) == \
        [[[0.25], [0.25]], [[1.5], [3.5]]]
    assert pair(gpugrad.var_mean(x, None, keepdim=True))[1] == [[2.5]]
    std, mean = gpugrad.std_mean(x, unbiased=True)
    assert std.item() == pytest.approx(math.sqrt(5 / 3), rel=1e-15) and mean.item() == 2.5
    std, mean = gpugrad.std_mean(x, dim=(0, 1), correction=0)
    assert std.item() == pytest.approx(math.sqrt(1.25), rel=1e-15)
    raises(RuntimeError, "var_mean only support floating point and complex dtypes",
           lambda: gpugrad.var_mean(gpugrad.tensor([1, 2], device=device)))
    raises(RuntimeError, "std_mean only support floating point and complex dtypes",
           lambda: gpugrad.std_mean(gpugrad.tensor([1, 2], device=device)))
    with pytest.warns(UserWarning, match=re.escape("std_mean(): degrees of freedom is <= 0.")):
        std, mean = gpugrad.std_mean(x, 1, correction=2, keepdim=True)
    assert to_numpy(std).tolist() == [[math.inf], [math.inf]]


def test_var_mean_std_mean_one_node_and_gradients(device):
    w = t([[1.0, 2.0], [3.0, 5.0]], device, True)
    v, m = gpugrad.var_mean(w, 0)
    assert v.grad_fn is m.grad_fn and v.grad_fn.name() == "VarMeanBackward0"
    (v.sum() + 2 * m.sum()).backward()
    assert to_numpy(w.grad).tolist() == [[-1.0, -2.0], [3.0, 4.0]]
    w = t([[1.0, 1.0], [1.0, 5.0]], device, True)
    s, m = gpugrad.std_mean(w, 0)
    assert s.grad_fn.name() == "StdMeanBackward0"
    (s.sum() + 2 * m.sum()).backward()
    r = math.sqrt(0.5)
    np.testing.assert_allclose(to_numpy(w.grad), [[1.0, 1 - r], [1.0, 1 + r]], rtol=1e-15)
    w = t([1.0, 1.0], device, True)
    gpugrad.std_mean(w)[0].backward()   # a zero std: zero gradient
    assert to_numpy(w.grad).tolist() == [0.0, 0.0]


def test_variance_degrees_of_freedom(device):
    x = t([1.0, 2.0, 4.0], device, True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = x.var(correction=4)
    assert [str(w.message) for w in caught] == [
        "var(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "reduction factor (input numel divided by output numel)."]
    assert caught[0].category is UserWarning and y.item() == math.inf
    x = t([[1.0, 2.0, 4.0]], device, True)
    with pytest.warns(UserWarning, match=re.escape("var(): degrees of freedom")):
        y = x.var(1, correction=4)
    y.backward(t([-2.0], device))   # along a dim PyTorch divides by N - correction = -1
    np.testing.assert_allclose(to_numpy(x.grad), [[-16 / 3, -4 / 3, 20 / 3]], rtol=1e-15)
    with pytest.warns(UserWarning, match=re.escape("std(): degrees of freedom")):
        assert math.isnan(t([1.0], device).std().item())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(t(np.zeros(0), device).mean().item())


def test_torch_norm_forms(device):
    a = t([[1.0, 2.0], [3.0, 5.0]], device, True)
    y = gpugrad.norm(a, p="nuc")
    assert y.item() == pytest.approx(6.4031242374328485, rel=1e-12)
    assert a.norm("nuc").item() == pytest.approx(y.item(), rel=1e-15)
    assert gpugrad.norm(a, p="fro", dim=(0, 1)).item() == pytest.approx(math.sqrt(39), rel=1e-15)
    np.testing.assert_allclose(to_numpy(gpugrad.norm(a, "fro", 1, keepdim=True)),
                               [[math.sqrt(5)], [math.sqrt(34)]], rtol=1e-15)
    nuc = gpugrad.norm(a[None], p="nuc", dim=(1, 2), keepdim=True)
    assert tuple(nuc.shape) == (1, 1, 1)
    for p, dim, expected in ((1, None, 11.0), (math.inf, None, 5.0), (-math.inf, None, 1.0),
                             (0, None, 4.0), (-math.inf, 0, [1.0, 2.0]),
                             (None, None, math.sqrt(39))):
        y = gpugrad.norm(a, p, dim)
        np.testing.assert_allclose(to_numpy(y.detach()), expected, rtol=1e-15)
        assert y.grad_fn.name() == "LinalgVectorNormBackward0"
    gpugrad.norm(a, -math.inf).backward()
    assert to_numpy(a.grad).tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert gpugrad.norm(a, dtype=gpugrad.float32).dtype == gpugrad.float32
    raises(RuntimeError, "linalg.matrix_norm: Order inf not supported.",
           lambda: gpugrad.norm(a, p="inf"))
    raises(RuntimeError, "linalg.matrix_norm: dim must be a 2-tuple. Got 0 1 2",
           lambda: gpugrad.norm(t(np.ones((2, 2, 2)), device), p="nuc"))
    raises(RuntimeError, "linalg.matrix_norm: The input tensor A must have at least 2 "
                         "dimensions.", lambda: gpugrad.norm(t([3.0, 4.0], device), "nuc"))
    raises(RuntimeError, "linalg.vector_norm: Expected a floating point or complex tensor as "
                         "input. Got Long", lambda: gpugrad.norm(gpugrad.tensor([3, 4])))
    assert gpugrad.norm(t(np.ones((2, 2, 2)), device)).item() == pytest.approx(math.sqrt(8))


# -- result dtypes --------------------------------------------------------------------------------
def test_integer_inputs_promote_as_pytorch(device):
    ints = gpugrad.tensor([[1, 2], [3, 4]], device=device)
    y = gpugrad.logsumexp(ints, 1)
    assert y.dtype == gpugrad.float32
    np.testing.assert_allclose(to_numpy(y), [2.3132617, 4.3132617], rtol=1e-6)
    y = gpugrad.logsumexp(gpugrad.tensor([1, 2], dtype=gpugrad.uint8, device=device), 0)
    assert y.dtype == gpugrad.float32 and y.item() == pytest.approx(2.3132617, rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_numpy(gpugrad.logsumexp(t(np.zeros((0, 2)), device), 0)).tolist() == \
            [-math.inf, -math.inf]
    for dtype in (gpugrad.uint8, gpugrad.bool, gpugrad.int32, gpugrad.int8, gpugrad.int16):
        y = gpugrad.tensor([1, 1, 0], device=device).to(dtype).cumsum(0)
        assert y.dtype == gpugrad.int64 and to_numpy(y).tolist() == [1, 2, 2]
    y = gpugrad.tensor([200, 100], dtype=gpugrad.uint8, device=device).cumsum(0)
    assert to_numpy(y).tolist() == [200, 300]
    y = gpugrad.tensor([1, 2], dtype=gpugrad.uint8, device=device).cumsum(0, dtype=gpugrad.int32)
    assert y.dtype == gpugrad.int32 and to_numpy(y).tolist() == [1, 3]
    u8 = gpugrad.tensor([200, 100], dtype=gpugrad.uint8, device=device)
    assert u8.sum().dtype == gpugrad.int64 and u8.sum().item() == 300
    assert u8.prod(0).dtype == gpugrad.int64


def test_softmax_of_integers_raises_as_pytorch(device):
    ints = gpugrad.tensor([[1, 2], [3, 4]], device=device)
    raises(NotImplementedError, "\"softmax_lastdim_kernel_impl\" not implemented for 'Long'",
           lambda: gpugrad.softmax(ints, 1))
    raises(NotImplementedError, "\"softmax_kernel_impl\" not implemented for 'Long'",
           lambda: ints.softmax(0))
    raises(NotImplementedError, "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Int'",
           lambda: gpugrad.log_softmax(ints.int(), -1))
    raises(NotImplementedError, "\"softmax_lastdim_kernel_impl\" not implemented for 'Bool'",
           lambda: gpugrad.nn.functional.softmax(gpugrad.tensor([True], device=device), 0))
    y = gpugrad.softmax(ints, 1, dtype=gpugrad.float64)
    assert y.dtype == gpugrad.float64
    np.testing.assert_allclose(to_numpy(y)[0], [0.2689414213699951, 0.7310585786300049])


# -- PyTorch as the oracle ------------------------------------------------------------------------
CASES = [
    ("amax tuple", lambda T, x: x.amax((0, 2)), [[[3.0, 1.0], [3.0, 0.0]], [[2.0, 3.0], [1., 1.]]]),
    ("amin keepdim", lambda T, x: x.amin((1,), keepdim=True), [[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]]),
    ("amax all", lambda T, x: x.amax(), [[1.0, 4.0], [4.0, 2.0]]),
    ("median", lambda T, x: x.median(), [3.0, 1.0, 3.0, 2.0, 3.0, 1.0]),
    ("median nan", lambda T, x: x.median(), [3.0, NAN, 1.0]),
    ("nanmedian", lambda T, x: x.nanmedian(), [NAN, 2.0, 1.0, 2.0]),
    ("median dim", lambda T, x: x.median(1).values, [[2.0, NAN, 1.0], [4.0, 1.0, 0.0]]),
    ("nanmedian dim", lambda T, x: x.nanmedian(0).values, [[2.0, NAN], [1.0, 0.0], [NAN, 5.]]),
    ("sort desc", lambda T, x: x.sort(descending=True).values, [1.0, NAN, 3.0, 2.0]),
    ("topk", lambda T, x: x.topk(2).values, [1.0, NAN, 3.0, 2.0]),
    ("var_mean", lambda T, x: T.var_mean(x, 1, unbiased=False)[0] * 3 +
        T.var_mean(x, 1, unbiased=False)[1], [[1.0, 2.0, 4.0], [0.0, 0.5, 0.5]]),
    ("std_mean", lambda T, x: sum(T.std_mean(x, (0, 1), correction=0)),
        [[1.0, 2.0, 4.0], [0.0, 0.5, 0.5]]),
    ("norm nuc", lambda T, x: T.norm(x, "nuc"), [[1.0, 2.0], [3.0, 5.0]]),
    ("norm -inf", lambda T, x: T.norm(x, -math.inf, 1), [[1.0, -1.0], [3.0, 5.0]]),
    ("max nan", lambda T, x: x.max(), [1.0, NAN, 2.0, NAN]),
]


@pytest.mark.parametrize("name, fn, data", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_pytorch(name, fn, data):
    torch = pytest.importorskip("torch")
    results = []
    for T in (torch, gpugrad):
        x = T.tensor(data, dtype=T.float64, requires_grad=True)
        y = fn(T, x)
        y.sum().backward()
        results.append((np.asarray(y.detach().numpy()), np.asarray(x.grad.numpy())))
    (want_y, want_g), (got_y, got_g) = results
    np.testing.assert_allclose(got_y, want_y, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(got_g, want_g, rtol=1e-12, equal_nan=True)


INDEX_CASES = [
    ("sort", lambda T, x: x.sort(descending=True).indices, [2.0, NAN, 1.0, NAN, 2.0]),
    ("argsort", lambda T, x: x.argsort(), [2.0, NAN, 1.0, NAN, -1.0]),
    ("median dim", lambda T, x: x.median(1).indices, [[2.0, NAN, 1.0, NAN], [3.0, 1.0, 2., 0.]]),
    ("nanmedian dim", lambda T, x: x.nanmedian(1).indices, [[NAN, 1.0, NAN, 2.0, 3.0]]),
    ("argmax keepdim", lambda T, x: x.argmax(keepdim=True), [[1.0, 4.0], [4.0, 2.0]]),
    ("amax keepdim", lambda T, x: x.amax(keepdim=True), [[1.0, 4.0], [4.0, 2.0]]),
    ("sum empty dims", lambda T, x: x.sum((), keepdim=True), [[1.0, 4.0], [4.0, 2.0]]),
    ("logsumexp int", lambda T, x: T.logsumexp(x.long(), 0), [1.0, 2.0]),
    ("cumsum int32", lambda T, x: x.int().cumsum(0), [1.0, 2.0]),
]


@pytest.mark.parametrize("name, fn, data", INDEX_CASES, ids=[c[0] for c in INDEX_CASES])
def test_results_match_pytorch(name, fn, data):
    torch = pytest.importorskip("torch")
    want = fn(torch, torch.tensor(data, dtype=torch.float64))
    got = fn(gpugrad, gpugrad.tensor(data, dtype=gpugrad.float64))
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_sign_of_nan_is_zero_and_integer_cumprod_is_int64(device):
    x = gpugrad.tensor([float("nan"), -2.0, 0.0, 3.0], device=device)
    assert x.sign().tolist() == [0.0, -1.0, 0.0, 1.0] == x.sgn().tolist()
    b = gpugrad.tensor([True, False], device=device)
    assert b.sign().dtype == gpugrad.bool and b.sign().tolist() == [True, False]
    for dtype in (gpugrad.int32, gpugrad.uint8, gpugrad.bool):
        c = gpugrad.tensor([1, 2, 3] if dtype != gpugrad.bool else [True, True], dtype=dtype,
                           device=device).cumprod(0)
        assert c.dtype == gpugrad.int64
    assert gpugrad.tensor([1, 2, 3], dtype=gpugrad.int32, device=device).cumprod(0).tolist() == \
        [1, 2, 6]


# -- half precision accumulates in float32, as PyTorch (values printed by torch 2.13) ------------
def test_half_precision_norm_std_var_and_cumsum_do_not_overflow_midway(device):
    f16 = gpugrad.float16
    big = gpugrad.full((100000,), 100.0, dtype=f16, device=device)   # sum of squares: 1e9
    assert big.norm().item() == 31616.0 and big.norm().dtype == f16
    assert gpugrad.full((100000,), 300.0, dtype=f16, device=device).std().item() == 0.0
    two = gpugrad.tensor([300.0, 310.0] * 5000, dtype=f16, device=device)
    assert two.var().item() == 25.0
    run = gpugrad.tensor([60000.0, 60000.0, -60000.0, -60000.0], dtype=f16, device=device)
    assert run.cumsum(0).tolist() == [60000.0, float("inf"), 60000.0, 0.0]


def test_clip_grad_norm_of_half_gradients_is_finite_and_scales(device):
    p = gpugrad.nn.Parameter(gpugrad.zeros(100000, dtype=gpugrad.float16, device=device))
    p.grad = gpugrad.full((100000,), 100.0, dtype=gpugrad.float16, device=device)
    total = gpugrad.nn.utils.clip_grad_norm_([p], 1.0)
    assert total.item() == 31616.0
    assert p.grad[0].item() == 0.0031642913818359375   # scaled, not zeroed
