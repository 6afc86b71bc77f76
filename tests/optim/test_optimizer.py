"""The Optimizer base: version counters, zero_grad, parameter groups, repr, state dicts,
optimizers built from named parameters, step and state-dict hooks, PyTorch's param-group key
order."""
from __future__ import annotations

import re

import pytest

import gpugrad
import gpugrad.optim as optim
from gpugrad.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)

from .params import G1, param, set_grad, sgd, steps


def test_step_bumps_the_version_counter():
    p = param()
    y = (p * p).sum()
    opt = optim.SGD([p], lr=0.1)
    v = p._version
    set_grad(p, G1)
    opt.step()
    assert p._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_zero_grad_both_ways():
    p = param()
    opt = optim.SGD([p], lr=0.1)
    set_grad(p, G1)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_param_groups():
    a, b = param(), param()
    opt = optim.SGD([{"params": [a]}, {"params": b, "lr": 1.0}], lr=0.1, momentum=0.5)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 1.0]
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["params"] == [b]
    set_grad(a, G1)
    set_grad(b, G1)
    opt.step()
    assert a.tolist() == pytest.approx([0.95, 2.1]) and b.tolist() == pytest.approx([0.5, 3.0])
    c = param()
    opt.add_param_group({"params": [c], "lr": 0.5})
    assert opt.param_groups[2]["momentum"] == 0.5
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter "
                                         "group"):
        opt.add_param_group({"params": [a]})


def test_optimizer_repr():
    opt = optim.SGD([param()], lr=0.1, momentum=0.9)
    assert repr(opt) == ("SGD (\nParameter Group 0\n    dampening: 0\n    differentiable: False\n"
                         "    foreach: None\n    fused: None\n    lr: 0.1\n    maximize: False\n"
                         "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)")


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1),
                                  lambda ps: optim.AdamW(ps, lr=0.1)],
                         ids=["sgd", "adam", "adamw"])
def test_optimizer_state_dict_round_trip(make):
    gpugrad.manual_seed(0)
    grads = [gpugrad.randn(2, dtype=gpugrad.float64).tolist() for _ in range(4)]
    p = param()
    opt = make([p])
    steps(opt, p, grads[:2])
    sd = opt.state_dict()
    assert list(sd) == ["state", "param_groups"] and sd["param_groups"][0]["params"] == [0]
    q = param(p.tolist())
    other = make([q])
    other.load_state_dict(sd)
    assert other.state[q] and all(v is not w for v, w in zip(other.state[q].values(),
                                                             opt.state[p].values()))
    assert steps(opt, p, grads[2:]) == steps(other, q, grads[2:])
    with pytest.raises(ValueError, match="different number of parameter groups"):
        other.load_state_dict({"state": {}, "param_groups": []})


# -- named parameters, hooks, key order ------------------------------------------------------------
def test_named_parameters_store_param_names():
    model = gpugrad.nn.Linear(2, 1)
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    assert list(opt.param_groups[0])[:3] == ["params", "param_names", "lr"]
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == [model.weight, model.bias]
    saved = opt.state_dict()["param_groups"][0]
    assert saved["param_names"] == ["weight", "bias"] and saved["params"] == [0, 1]
    group = {"params": model.named_parameters(), "lr": 0.5}
    opt = optim.SGD([group], lr=0.1)
    assert opt.param_groups[0] is group and list(group)[:3] == ["params", "lr", "param_names"]
    with pytest.raises(ValueError, match="^all optimizer params should be with/without names. "
                                         "Some param names are missing$"):
        optim.SGD([("w", model.weight), model.bias], lr=0.1)
    with pytest.raises(ValueError, match="^all optimizer param groups should be with/without "
                                         "names. cannot add param group without names to the "
                                         "optimizer$"):
        optim.SGD(model.named_parameters()).add_param_group(
            {"params": [gpugrad.zeros(1, requires_grad=True)]})
    unnamed = optim.SGD([model.weight, model.bias], lr=0.3)
    named = optim.SGD(model.named_parameters(), lr=0.1)
    named.load_state_dict(unnamed.state_dict())   # the names stay
    assert named.param_groups[0]["lr"] == 0.3
    assert named.param_groups[0]["param_names"] == ["weight", "bias"]


def test_step_hooks_run_in_order_and_may_replace_the_arguments():
    opt = sgd()
    log = []
    handles = [
        register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre")),
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", a[0] is o, k))),
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), k))),
        register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
    ]
    try:
        opt.step()
        opt.step(closure=None)
    finally:
        for h in handles:
            h.remove()
    assert log == ["global pre", ("pre", True, {}), ("post", 1, {}), "global post",
                   "global pre", ("pre", True, {"closure": None}),
                   ("post", 1, {"closure": None}), "global post"]
    opt.step()
    assert len(log) == 8   # removed
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: calls.append(1) or 3.0}))
    assert opt.step() == 3.0 and calls == [1]
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match=r"^<function SGD.step at 0x[0-9a-f]+> must return None "
                                           r"or a tuple of \(new_args, new_kwargs\), but got 5.$"):
        opt.step()


def test_hooks_run_once_when_a_subclass_step_calls_super():
    class Logged(optim.SGD):
        def step(self, closure=None):
            return super().step(closure)

    opt = Logged([gpugrad.zeros(1, requires_grad=True)], lr=0.1)
    log = []
    opt.register_step_post_hook(lambda o, a, k: log.append(1))
    opt.step()
    assert log == [1]


def test_state_dict_hooks():
    opt = optim.Adam([gpugrad.zeros(2, requires_grad=True)], lr=0.1)
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
    opt.register_state_dict_post_hook(lambda o, sd: log.append("post") or {**sd, "extra": 1})
    opt.register_state_dict_post_hook(lambda o, sd: log.append("first"), prepend=True)
    opt.register_load_state_dict_pre_hook(
        lambda o, sd: log.append(sorted(sd)) or {k: v for k, v in sd.items() if k != "extra"})
    h = opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
    sd = opt.state_dict()
    assert sorted(sd) == ["extra", "param_groups", "state"]
    opt.load_state_dict(sd)
    assert log == ["pre", "first", "post", ["extra", "param_groups", "state"], "loaded"]
    h.remove()
    opt.load_state_dict(sd)
    assert log[-1] == ["extra", "param_groups", "state"]


@pytest.mark.parametrize("name, keys", [
    ("RMSprop", ["lr", "momentum", "alpha", "eps", "centered", "weight_decay", "capturable",
                 "foreach", "maximize", "differentiable"]),
    ("Adagrad", ["lr", "lr_decay", "eps", "weight_decay", "initial_accumulator_value",
                 "foreach", "maximize", "differentiable", "fused"]),
    ("Adadelta", ["lr", "rho", "eps", "weight_decay", "maximize", "capturable", "foreach",
                  "differentiable"]),
    ("NAdam", ["lr", "betas", "eps", "weight_decay", "momentum_decay", "decoupled_weight_decay",
               "maximize", "foreach", "capturable", "differentiable"]),
    ("RAdam", ["lr", "betas", "eps", "weight_decay", "maximize", "foreach", "capturable",
               "decoupled_weight_decay", "differentiable"]),
    ("Muon", ["lr", "weight_decay", "momentum", "nesterov", "ns_coefficients", "eps",
              "ns_steps", "adjust_lr_fn"]),
    ("SparseAdam", ["lr", "betas", "eps", "maximize"]),
])
def test_param_group_key_order(name, keys):
    opt = getattr(optim, name)([gpugrad.zeros(2, 2, requires_grad=True)])
    assert list(opt.defaults) == keys and list(opt.param_groups[0]) == ["params"] + keys


def test_a_tensor_as_params_names_its_type():
    with pytest.raises(TypeError, match=re.escape(
            "params argument given to the optimizer should be an iterable of Tensors or dicts, "
            "but got gpugrad.FloatTensor")):
        optim.SGD(gpugrad.zeros(2, requires_grad=True), lr=0.1)
