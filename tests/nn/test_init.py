"""nn.init.dirac_ / sparse_ and the deprecated init aliases."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from conftest import tensor, to_numpy

import gpugrad
from gpugrad import nn
from gpugrad.nn import init


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
