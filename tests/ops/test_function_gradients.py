"""Gradients of top-level functions (cdist, cummax, quantile, cov ...) against finite
differences (gradcheck and gradgradcheck)."""
from __future__ import annotations

import pytest
from conftest import tensor

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck


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
