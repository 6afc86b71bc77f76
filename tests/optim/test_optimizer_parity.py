"""Optimizers as PyTorch's: messages for bad params and Adam's numerics (amsgrad with weight
decay) against PyTorch's values."""
from __future__ import annotations

import re

import numpy as np
import pytest

import gpugrad
from gpugrad import optim


# -- optimizers -----------------------------------------------------------------------------------
def test_a_tensor_as_params_names_its_type():
    with pytest.raises(TypeError, match=re.escape(
            "params argument given to the optimizer should be an iterable of Tensors or dicts, "
            "but got gpugrad.FloatTensor")):
        optim.SGD(gpugrad.zeros(2, requires_grad=True), lr=0.1)


def test_adam_amsgrad_with_weight_decay_matches_pytorch_values():
    w = gpugrad.tensor([0.5, -1.0, 2.0], dtype=gpugrad.float64, requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True, weight_decay=0.01)
    for k in range(5):
        opt.zero_grad()
        ((w ** 3).sum() * (1 if k % 2 else -1)).backward()
        opt.step()
    # values printed by torch 2.13 for the same steps
    np.testing.assert_allclose(w.tolist(), [0.598088139803425, -0.8309698771165656,
                                            2.1313629064939064], rtol=1e-12)
    np.testing.assert_allclose(opt.state[w]["max_exp_avg_sq"].tolist(),
                               [0.004931883387374039, 0.03030980475237974, 0.8500242052010174],
                               rtol=1e-12)
