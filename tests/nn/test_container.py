"""Containers: Sequential, ModuleList/ModuleDict, ParameterList/ParameterDict, their
operators and reprs."""
from __future__ import annotations

import pytest

import gpugrad
import gpugrad.nn as nn


def test_sequential_repr_and_container_ops():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1), nn.Sigmoid()))
    assert repr(seq) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Linear(in_features=3, out_features=1, bias=True)\n"
        "    (1): Sigmoid()\n"
        "  )\n"
        ")")
    assert len(seq) == 3 and isinstance(seq[-1], nn.Sequential)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    seq.append(nn.Tanh())
    del seq[1]
    assert [type(m).__name__ for m in seq] == ["Linear", "Sequential", "Tanh"]
    assert list(dict(seq.named_children())) == ["0", "1", "2"]
    ml = nn.ModuleList([nn.Linear(1, 1) for _ in range(3)])
    assert len(list(ml.parameters())) == 6 and len(ml[1:]) == 2


def test_dict_and_parameter_containers_register_what_they_hold():
    d = nn.ModuleDict({"enc": nn.Linear(2, 3), "act": nn.ReLU()})
    d["dec"] = nn.Linear(3, 1)
    assert list(d) == ["enc", "act", "dec"] and "act" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["enc.weight", "enc.bias", "dec.weight",
                                                    "dec.bias"]
    assert repr(d).splitlines()[1] == "  (enc): Linear(in_features=2, out_features=3, bias=True)"
    assert isinstance(d.pop("act"), nn.ReLU) and list(d.keys()) == ["enc", "dec"]
    pl = nn.ParameterList([gpugrad.ones(2, 3), nn.Parameter(gpugrad.zeros(4))])
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
    pl.append(gpugrad.ones(1))
    assert list(pl.state_dict()) == ["0", "1", "2"] and len(pl) == 3
    assert repr(pl).splitlines()[1] == (
        "    (0): Parameter containing: [gpugrad.float32 of size 2x3]")
    pd = nn.ParameterDict({"w": gpugrad.ones(2)})
    assert repr(pd) == "ParameterDict(  (w): Parameter containing: [gpugrad.FloatTensor of " \
                       "size 2])"   # one entry: PyTorch's one-line layout
    pd["b"] = gpugrad.zeros(1)
    assert list(pd) == ["w", "b"] and repr(pd) == (
        "ParameterDict(\n    (w): Parameter containing: [gpugrad.FloatTensor of size 2]\n"
        "    (b): Parameter containing: [gpugrad.FloatTensor of size 1]\n)")
    assert list(nn.ParameterDict({"w": gpugrad.ones(1), "a": gpugrad.ones(1)})) == ["a", "w"]
    holder = nn.Module()
    holder.heads, holder.scales = d, pl
    assert len(list(holder.parameters())) == 7   # 4 from the dict of modules, 3 from the list
    opt = gpugrad.optim.SGD(holder.parameters(), lr=0.1)
    (d["enc"](gpugrad.ones(1, 2)).sum() + pl[2].sum()).backward()
    opt.step()
    assert pl[2].detach().tolist() == pytest.approx([0.9])


def test_container_operators_and_collapsed_repr():
    relu, tanh = nn.ReLU(), nn.Tanh()
    s = nn.Sequential(relu, nn.Linear(2, 2), tanh)
    assert s.pop(1).out_features == 2 and list(s._modules) == ["0", "1"] and s[1] is tanh
    assert list(s + nn.Sequential(relu)) == [relu, tanh, relu]
    assert list(s * 2) == [relu, tanh, relu, tanh] and list(2 * s) == list(s * 2)
    with pytest.raises(ValueError, match=r"^add operator supports only objects of Sequential "
                                         r"class, but <class 'list'> is given\.$"):
        s + [relu]
    with pytest.raises(ValueError, match=r"^Non-positive multiplication factor 0 for <class "
                                         r"'gpugrad\.nn\.modules\.container\.Sequential'>$"):
        s * 0
    s *= 2
    assert list(s._modules) == ["0", "1", "2", "3"]
    ml = nn.ModuleList([nn.ReLU(), nn.ReLU(), nn.ReLU(), nn.Tanh(), nn.Linear(2, 2),
                        nn.Linear(2, 2), nn.Linear(2, 3)])
    assert repr(ml) == (
        "ModuleList(\n  (0-2): 3 x ReLU()\n  (3): Tanh()\n"
        "  (4-5): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
        "  (6): Linear(in_features=2, out_features=3, bias=True)\n)")
    assert repr(nn.ModuleList()) == "ModuleList()"
    assert isinstance(ml.pop(3), nn.Tanh) and len(ml + [nn.ReLU()]) == 7
    pd = nn.ParameterDict({"b": gpugrad.ones(1), "a": gpugrad.ones(2)})
    key, p = pd.popitem()
    assert key == "b" and list(pd | nn.ParameterDict({"c": gpugrad.ones(1)})) == ["a", "c"]
    assert pd.get("missing", 5) == 5 and pd.setdefault("z", gpugrad.ones(3)).shape == (3,)
