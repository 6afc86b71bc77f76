"""Parameters with gradients set by hand and what the optim tests read back from them: float64
leaves (``param``, ``_one_param``), gradients and steps (``set_grad``, ``steps``, the gradients
``G1`` and ``G2``), a parameter's values (``values``), an SGD over zeros (``sgd``) and the texts
of recorded warnings (``messages``)."""
from __future__ import annotations

import numpy as np
from conftest import to_numpy

import gpugrad
import gpugrad.optim as optim

G1, G2 = [0.5, -1.0], [1.0, 1.0]


def param(values=(1.0, 2.0), device="cpu"):
    return gpugrad.nn.Parameter(gpugrad.tensor(np.asarray(values, np.float64), device=device))


def set_grad(p, values):
    p.grad = gpugrad.tensor(np.asarray(values, np.float64), device=p.device)


def steps(opt, p, grads):
    for g in grads:
        set_grad(p, g)
        opt.step()
    return p.tolist()


def values(p):
    return to_numpy(p.detach())


def _one_param(value, grad, device="cpu"):
    p = gpugrad.nn.Parameter(gpugrad.tensor(np.asarray(value, np.float64), device=device))
    p.grad = gpugrad.tensor(np.asarray(grad, np.float64), device=device)
    return p


def sgd(lr=1.0, **kw):
    return optim.SGD([gpugrad.zeros(2, requires_grad=True)], lr=lr, **kw)


def messages(record):
    return [str(w.message) for w in record]
