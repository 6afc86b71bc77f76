"""Running the same computation in gpugrad and PyTorch: twin modules, gradients, comparisons."""
from __future__ import annotations

import numpy as np
from conftest import to_numpy

from tests.nn._tensors import T


def _oracle(torch, ours, theirs, arrays, device, seed=0, exact_grad=True):
    """Forward and backward (a fixed random output gradient) of both libraries on copies of the
    same float64 arrays: values, gradients and node names must agree."""
    mine = [T(a, device, True) for a in arrays]
    ref = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, yt = ours(*mine), theirs(*ref)
    if isinstance(yt, tuple):
        np.testing.assert_array_equal(to_numpy(y[1]), yt[1].numpy())
        y, yt = y[0], yt[0]
    assert y.grad_fn.name() == yt.grad_fn.name()
    np.testing.assert_allclose(to_numpy(y), yt.detach().numpy(), rtol=1e-11, atol=1e-12)
    gy = np.random.default_rng(seed).standard_normal(tuple(yt.shape))
    y.backward(T(gy, device))
    yt.backward(torch.tensor(gy))
    if exact_grad:
        for a, b in zip(mine, ref):
            np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-11, atol=1e-12)


def _grads(torch, fn, arrays):
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    y = fn(*ts)
    y.backward(torch.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))))
    return y.detach().numpy(), [t.grad.numpy() for t in ts]


def _torch_twin(torch, ours, theirs):
    theirs = theirs.double()
    theirs.load_state_dict({k: torch.tensor(to_numpy(v)) for k, v in ours.state_dict().items()})
    return theirs


def _assert_grads_match(ours, theirs, pairs):
    for a, b in pairs:
        np.testing.assert_allclose(to_numpy(a.grad), b.grad.numpy(), rtol=1e-9, atol=1e-11)
    for (n, p), (n2, p2) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == n2
        np.testing.assert_allclose(to_numpy(p.grad), p2.grad.numpy(), rtol=1e-9, atol=1e-11)
