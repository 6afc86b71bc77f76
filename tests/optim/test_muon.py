"""Muon: argument errors with PyTorch's messages, the first step by hand (Newton-Schulz in
bfloat16), and (when PyTorch is installed) ten steps and the Newton-Schulz iteration against
torch.optim.Muon."""
from __future__ import annotations

import math
import re
import struct

import numpy as np
import pytest
from conftest import to_numpy

import gpugrad
import gpugrad.optim as optim


def test_muon_validation():
    w = gpugrad.zeros(2, 2, requires_grad=True)
    for kw, msg in [(dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
                    (dict(momentum=-1.0), "momentum should be >= 0 but is: -1.0"),
                    (dict(weight_decay=-1.0), "weight decay should be >= 0 but is: -1.0"),
                    (dict(adjust_lr_fn="x"), "Adjust learning rate function x is not supported")]:
        with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
            optim.Muon([w], **kw)
    with pytest.raises(ValueError, match=re.escape("Muon only supports 2D parameters whereas we "
                                                   "found a parameter with size: ")):
        optim.Muon([gpugrad.zeros(3, requires_grad=True)])


def bf16(v):
    """v rounded to the nearest bfloat16 (ties to even)."""
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def test_muon_first_step_by_hand(device):
    """g = 2 I: buf = lerp(0, g, 0.05) = 0.1 I and the Nesterov update lerp(g, buf, 0.95) =
    0.195 I has equal singular values, so Newton-Schulz (in bfloat16) maps x = u / |u|_F to
    a x + (b x^2 + c x^4) x five times."""
    w = gpugrad.nn.Parameter(gpugrad.ones(2, 2, device=device))
    opt = optim.Muon([w], lr=0.1, weight_decay=0.5)
    w.grad = gpugrad.tensor(2 * np.eye(2, dtype=np.float32), device=device)
    opt.step()
    u = bf16(0.195)
    x = bf16(u / bf16(math.sqrt(2 * u * u)))
    for _ in range(5):
        gram = bf16(x * x)
        x = bf16(3.4445 * x + bf16(-4.7750 * gram + 2.0315 * gram * gram) * x)
    assert x == 1.125   # not 1.108 as in exact arithmetic
    want = (1 - 0.1 * 0.5) * np.ones((2, 2)) - 0.1 * x * np.eye(2)
    np.testing.assert_allclose(to_numpy(w.detach()), want, rtol=1e-7)
    np.testing.assert_allclose(to_numpy(opt.state[w]["momentum_buffer"]), 0.1 * np.eye(2),
                               rtol=1e-7)


@pytest.mark.parametrize("kw, shape", [({}, (5, 3)), ({}, (3, 8)),
                                       (dict(nesterov=False, lr=0.02, weight_decay=0.0,
                                             adjust_lr_fn="match_rms_adamw"), (4, 4)),
                                       (dict(lr=0.1, momentum=0.5), (6, 2))])
def test_muon_matches_torch(torch, kw, shape):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal(shape).astype(np.float32)
    ours = gpugrad.nn.Parameter(gpugrad.tensor(w0))
    theirs = torch.nn.Parameter(torch.from_numpy(w0.copy()))
    a, b = optim.Muon([ours], **kw), torch.optim.Muon([theirs], **kw)
    for _ in range(10):
        g = rng.standard_normal(shape).astype(np.float32)
        ours.grad, theirs.grad = gpugrad.tensor(g), torch.from_numpy(g.copy())
        a.step()
        b.step()
        # the Newton-Schulz iterations run in bfloat16: a rounding may flip by one bf16 ulp
        np.testing.assert_allclose(to_numpy(ours.detach()), theirs.detach().numpy(), rtol=0,
                                   atol=1e-3)
    np.testing.assert_array_equal(to_numpy(a.state[ours]["momentum_buffer"]),
                                  b.state[theirs]["momentum_buffer"].numpy())


def test_newton_schulz_matches_torch_bit_for_bit(torch):
    from torch.optim._muon import _zeropower_via_newtonschulz as theirs

    from gpugrad.optim.muon import zeropower_via_newtonschulz as ours
    rng = np.random.default_rng(1)
    for shape in [(4, 6), (7, 3), (16, 16)]:
        g = rng.standard_normal(shape).astype(np.float32)
        want = theirs(torch.from_numpy(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
        np.testing.assert_array_equal(ours(np, g, (3.4445, -4.7750, 2.0315), 5, 1e-7), want)
