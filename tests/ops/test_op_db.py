"""One generic test over every registered op (driven by ``op_db.OP_DB``): forward against a numpy
reference, gradcheck and gradgradcheck in float64, on every device; plus registry coverage and
agreement of the fused-kernel backward with the differentiable one."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import to_numpy
from op_db import OP_DB

import gpugrad
from gpugrad.autograd import gradcheck, gradgradcheck
from gpugrad.ops import REGISTRY


def _sample(rng, shape, domain, avoid):
    """float64 values uniform in ``domain``, each at least 0.1 away from every ``avoid`` point."""
    lo, hi = domain
    x = rng.uniform(lo, hi, size=shape)
    for _ in range(100):
        bad = np.zeros(x.shape, dtype=bool)
        for p in avoid:
            bad |= np.abs(x - p) < 0.1
        if not bad.any():
            return x
        x = np.where(bad, rng.uniform(lo, hi, size=shape), x)
    raise AssertionError(f"cannot sample {shape} in {domain} away from {avoid}")


def _inputs(entry, shapes, device, seed=0):
    rng = np.random.default_rng(seed)
    domains = entry.domain if isinstance(entry.domain[0], tuple) else (entry.domain,) * len(shapes)
    return [gpugrad.tensor(_sample(rng, s, d, entry.avoid), dtype=gpugrad.float64, device=device,
                           requires_grad=True) for s, d in zip(shapes, domains)]


def _outputs(out):
    return tuple(out) if isinstance(out, tuple) else (out,)


def _nodes(outputs):
    """Class names of every node reachable from ``outputs`` (iteratively)."""
    stack = [o.grad_fn for o in outputs if o.grad_fn is not None]
    seen = set()
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        stack.extend(c for c, _ in n.next_functions if c is not None)
    return {type(n).__name__ for n in seen}


def _samples():
    return [pytest.param(e, s, id=f"{e.name}-{'x'.join(map(str, s)).replace(' ', '')}")
            for e in OP_DB for s in e.shapes]


@pytest.mark.parametrize("entry, shapes", _samples())
def test_op_forward_and_gradients(entry, shapes, device):
    inputs = _inputs(entry, shapes, device)
    outs = _outputs(entry.fn(*inputs))
    arrays = [to_numpy(t) for t in inputs]
    refs = _outputs(entry.ref(*arrays))
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs):
        assert out.device == inputs[0].device
        assert out.dtype == gpugrad.float64
        assert tuple(out.shape) == np.shape(ref)
        np.testing.assert_allclose(to_numpy(out), ref, rtol=1e-7, atol=1e-12)
    recorded = _nodes(outs)
    missing = set(entry.exercises) - recorded
    assert not missing, f"{entry.name} does not record {missing} (recorded {recorded})"
    tols = {"atol": 1e-5, "rtol": 1e-3, **entry.grad_tols}
    assert gradcheck(entry.fn, inputs, eps=entry.eps, **tols)
    if entry.double_backward:
        assert gradgradcheck(entry.fn, inputs, eps=entry.eps, **tols)
    else:
        with pytest.raises(NotImplementedError, match="double backward"):
            gradgradcheck(entry.fn, inputs, eps=entry.eps, **tols)


@pytest.mark.parametrize("entry, shapes", [p for p in _samples() if p.values[0].double_backward])
def test_op_fused_backward_matches_differentiable_backward(entry, shapes, device):
    inputs = _inputs(entry, shapes, device, seed=1)
    rng = np.random.default_rng(2)
    results = []
    for create_graph in (False, True):
        outs = [o for o in _outputs(entry.fn(*inputs)) if o.requires_grad]
        seeds = [gpugrad.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype,
                                device=o.device) for o in outs]
        rng = np.random.default_rng(2)
        grads = gpugrad.autograd.grad(outs, inputs, seeds, create_graph=create_graph,
                                      allow_unused=True)
        assert create_graph or not any(g is not None and g.requires_grad for g in grads)
        results.append(grads)
    for plain, graph in zip(*results):
        assert (plain is None) == (graph is None)
        if plain is not None:
            np.testing.assert_allclose(to_numpy(plain), to_numpy(graph), rtol=1e-10, atol=1e-12)


def _grads(entry, shapes, device, wanted):
    """Gradients (plain backward, fixed seeds) w.r.t. the inputs in ``wanted``; only those
    require grad, the other inputs are constants."""
    inputs = _inputs(entry, shapes, device, seed=3)
    for i, x in enumerate(inputs):
        x.requires_grad = i in wanted
    outs = [o for o in _outputs(entry.fn(*inputs)) if o.requires_grad]
    rng = np.random.default_rng(4)
    seeds = [gpugrad.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype, device=o.device)
             for o in outs]
    return gpugrad.autograd.grad(outs, [inputs[i] for i in wanted], seeds, allow_unused=True)


@pytest.mark.parametrize("entry, shapes", [p for p in _samples() if len(p.values[1]) > 1])
def test_op_gradient_with_constant_inputs(entry, shapes, device):
    # an op may skip saving what only a constant input's gradient would read: check each input
    # alone against the gradient computed with every input requiring grad
    everything = _grads(entry, shapes, device, list(range(len(shapes))))
    for i in range(len(shapes)):
        alone, = _grads(entry, shapes, device, [i])
        if everything[i] is None:
            assert alone is None
        else:
            np.testing.assert_allclose(to_numpy(alone), to_numpy(everything[i]), rtol=1e-12)


def test_op_db_covers_every_registered_op():
    exercised = {name for e in OP_DB for name in e.exercises}
    unknown = exercised - set(REGISTRY)
    assert not unknown, f"op_db names classes missing from REGISTRY: {sorted(unknown)}"
    missing = sorted(name for name in REGISTRY if name not in exercised)
    assert not missing, f"add an op_db entry exercising: {missing}"


def test_op_db_entries_are_uniquely_named():
    names = [e.name for e in OP_DB]
    assert len(names) == len(set(names))
