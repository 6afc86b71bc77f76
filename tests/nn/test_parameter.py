"""nn.Parameter and nn.Buffer."""
from __future__ import annotations

import gpugrad
import gpugrad.nn as nn


def test_parameter_is_a_tensor_with_pytorch_repr():
    p = nn.Parameter(gpugrad.tensor([1.0, 2.0]))
    assert isinstance(p, gpugrad.Tensor) and p.requires_grad and p.is_leaf
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert type(p * 2) is gpugrad.Tensor and type(p.detach()) is gpugrad.Tensor
    assert not nn.Parameter(gpugrad.ones(1), requires_grad=False).requires_grad


def test_parameter_shares_storage_with_its_data():
    t = gpugrad.zeros(2)
    p = nn.Parameter(t)
    with gpugrad.no_grad():
        p.add_(1)
    assert t.tolist() == [1.0, 1.0]


def test_buffer_registers_with_its_persistence():
    m = nn.Module()
    m.a = nn.Buffer(gpugrad.ones(2))
    m.b = nn.Buffer(gpugrad.zeros(3), persistent=False)
    assert list(m.state_dict()) == ["a"]
    assert [n for n, _ in m.named_buffers()] == ["a", "b"]
    assert isinstance(m.b, nn.Buffer) and not m.b.persistent and m.a.persistent
    assert not list(m.parameters())
