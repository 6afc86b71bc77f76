"""SparseAdam: built as PyTorch's, its step refuses dense gradients; argument errors with
PyTorch's messages."""
from __future__ import annotations

import re

import pytest

import gpugrad
import gpugrad.optim as optim


def test_sparse_adam_refuses_dense_gradients():
    p = gpugrad.zeros(2, requires_grad=True)
    opt = optim.SparseAdam([p])
    assert isinstance(opt, optim.Optimizer)
    opt.step()   # no gradient yet: nothing to do
    p.grad = gpugrad.ones(2)
    with pytest.raises(RuntimeError, match="^SparseAdam does not support dense gradients, please "
                                           "consider Adam instead$"):
        opt.step()
    for kw, msg in [(dict(lr=0.0), "Invalid learning rate: 0.0"),
                    (dict(eps=0.0), "Invalid epsilon value: 0.0"),
                    (dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
                    (dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1")]:
        with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
            optim.SparseAdam([p], **kw)
