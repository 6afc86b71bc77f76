"""nn.init: every initialiser's law and shape rules, trunc_normal_, fan computation, the
parameter-vector helpers, dirac_ / sparse_ and the deprecated init aliases."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
import gpugrad.nn as nn
from gpugrad.nn import init
from tests.nn._errors import _raises
from tests.nn._tensors import arr


def test_init_functions():
    init = nn.init
    gpugrad.manual_seed(0)
    w = nn.Parameter(gpugrad.empty(200, 300))
    init.xavier_uniform_(w)
    a = math.sqrt(6 / 500)
    assert np.abs(arr(w)).max() <= a and np.abs(arr(w)).max() > 0.95 * a
    init.xavier_normal_(w)
    assert abs(arr(w).std() - math.sqrt(2 / 500)) < 0.05 * math.sqrt(2 / 500)
    init.kaiming_uniform_(w, nonlinearity="relu")
    b = math.sqrt(2) * math.sqrt(3 / 300)
    assert np.abs(arr(w)).max() <= b and np.abs(arr(w)).max() > 0.95 * b
    init.kaiming_normal_(w, mode="fan_out")
    assert abs(arr(w).std() - math.sqrt(2 / 1 / (1 + 0.0 ** 2)) / math.sqrt(200)) < 0.005
    assert w.grad_fn is None and w.requires_grad   # filled in place, still a leaf
    init.zeros_(w)
    assert not arr(w).any()
    init.ones_(w)
    assert (arr(w) == 1).all()
    init.constant_(w, 0.5)
    assert (arr(w) == 0.5).all()
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(gpugrad.empty(3))


def test_more_init_and_parameter_vector_helpers():
    gpugrad.manual_seed(0)
    w = gpugrad.empty(20, 30)
    nn.init.orthogonal_(w, gain=2.0)
    q = w.numpy()
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(20), atol=1e-4)
    t = gpugrad.empty(20000, dtype=gpugrad.float64)
    nn.init.trunc_normal_(t, mean=0.5, std=1.0, a=-1.0, b=1.5)
    a = t.numpy()
    assert a.min() >= -1.0 and a.max() <= 1.5
    # mean of N(0.5, 1) truncated to [-1, 1.5]: 0.5 + (pdf(-1.5) - pdf(1)) / (cdf(1) - cdf(-1.5))
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)   # noqa: E731
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))   # noqa: E731
    assert abs(a.mean() - (0.5 + (pdf(-1.5) - pdf(1.0)) / (cdf(1.0) - cdf(-1.5)))) < 0.02
    e = gpugrad.empty(2, 3)
    assert nn.init.eye_(e).tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    m = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (8,) and v.grad_fn.name() == "CatBackward0"
    nn.utils.vector_to_parameters(gpugrad.arange(8.0), m.parameters())
    assert m.weight.detach().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert m.bias.detach().tolist() == [6.0, 7.0]


def test_trunc_normal_fills_the_whole_range(device):
    """N(0, 1) cut at [-2, 2]: std sqrt(1 - 4 phi(2) / (Phi(2) - Phi(-2))) = 0.87962, and the
    tails reach the bounds (the old inverse-erf start stopped near +-1.92)."""
    gen = gpugrad.Generator().manual_seed(0)
    w = gpugrad.empty(200_000, device=device)
    out = init.trunc_normal_(w, generator=gen)
    assert out is w and not w.requires_grad
    x = to_numpy(w).astype(np.float64)
    assert x.min() >= -2.0 and x.max() <= 2.0
    assert x.min() < -1.99 and x.max() > 1.99
    assert abs(x.std() - 0.87962) < 0.005 and abs(x.mean()) < 0.01


def test_trunc_normal_shifted_bounds_and_leaf():
    w = gpugrad.empty(100_000, requires_grad=True)
    init.trunc_normal_(w, mean=1.0, std=2.0, a=0.5, b=1.5)
    x = to_numpy(w)
    assert w.is_leaf and w.grad_fn is None
    assert x.min() >= 0.5 and x.max() <= 1.5 and x.min() < 0.51 and x.max() > 1.49
    # a narrow window around the mean is nearly uniform: std (b - a) / sqrt(12) shrunk a little
    assert 0.28 < x.std() < 0.2887


def test_calculate_correct_fan():
    w = gpugrad.empty(5, 3, 2)
    assert init._calculate_correct_fan(w, "fan_in") == 6
    assert init._calculate_correct_fan(w, "fan_out") == 10
    with _raises(ValueError, "Mode foo not supported, please use one of ['fan_in', 'fan_out']"):
        init._calculate_correct_fan(w, "foo")


# -- nn.init.dirac_ / sparse_ ---------------------------------------------------------------------
@pytest.mark.parametrize("shape,groups", [((4, 3, 5), 1), ((6, 2, 3, 3), 2), ((3, 5, 1, 2, 3), 1),
                                          ((4, 4, 3, 3), 4)])
def test_dirac_puts_ones_at_the_kernel_centre(device, shape, groups):
    w = init.dirac_(gpugrad.full(shape, 7.0, device=device), groups)
    expect = np.zeros(shape)
    per = shape[0] // groups
    for g in range(groups):
        for d in range(min(per, shape[1])):
            expect[(g * per + d, d) + tuple(n // 2 for n in shape[2:])] = 1
    np.testing.assert_array_equal(to_numpy(w), expect)


def test_dirac_weight_makes_a_convolution_the_identity(device):
    x = tensor(np.random.default_rng(0).standard_normal((2, 3, 8)), device)
    w = init.dirac_(gpugrad.empty(3, 3, 3, dtype=gpugrad.float64, device=device))
    np.testing.assert_allclose(to_numpy(nn.functional.conv1d(x, w, padding=1)), to_numpy(x))


def test_dirac_matches_torch():
    torch = pytest.importorskip("torch")
    for shape, groups in (((6, 4, 3, 2), 3), ((5, 2, 4), 1)):
        ours = init.dirac_(gpugrad.empty(*shape), groups)
        theirs = torch.nn.init.dirac_(torch.empty(*shape), groups)
        np.testing.assert_array_equal(to_numpy(ours), theirs.numpy())


def test_dirac_and_sparse_errors():
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(gpugrad.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(gpugrad.empty(3, 3, 3), groups=2)
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(gpugrad.empty(3, 3, 3), 0.5)


def test_sparse_zeros_a_fraction_of_each_column_of_normal_draws(device):
    rows, cols, sparsity, std = 7, 5, 0.3, 0.05
    w = gpugrad.empty(rows, cols, dtype=gpugrad.float64, device=device)
    init.sparse_(w, sparsity, std=std, generator=gpugrad.Generator().manual_seed(4))
    dense = gpugrad.empty(rows, cols, dtype=gpugrad.float64, device=device)
    dense.normal_(0, std, generator=gpugrad.Generator().manual_seed(4))
    a, d = to_numpy(w), to_numpy(dense)
    assert ((a == 0).sum(axis=0) == math.ceil(sparsity * rows)).all()
    np.testing.assert_array_equal(a[a != 0], d[a != 0])   # the rest: the generator's normals
    again = init.sparse_(gpugrad.empty(rows, cols, dtype=gpugrad.float64, device=device),
                         sparsity, std=std, generator=gpugrad.Generator().manual_seed(4))
    np.testing.assert_array_equal(to_numpy(again), a)


@pytest.mark.parametrize("old,args", [
    ("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("eye", ()), ("xavier_uniform", ()),
    ("xavier_normal", ()), ("kaiming_uniform", ()), ("kaiming_normal", ()), ("orthogonal", ()),
    ("sparse", (0.5,)), ("dirac", ())])
def test_deprecated_init_aliases_warn_and_do_the_same(old, args):
    shape = (3, 3, 3) if old == "dirac" else (4, 3)
    with pytest.warns(FutureWarning, match=re.escape(
            f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`.")):
        got = getattr(init, old)(gpugrad.empty(*shape), *args,
                                 **({} if old in ("constant", "eye", "dirac") else
                                    {"generator": gpugrad.Generator().manual_seed(1)}))
    kwargs = {} if old in ("constant", "eye", "dirac") else \
        {"generator": gpugrad.Generator().manual_seed(1)}
    expect = getattr(init, old + "_")(gpugrad.empty(*shape), *args, **kwargs)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(expect))
    assert getattr(init, old).__name__ == old
