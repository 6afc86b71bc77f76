"""``Optimizer``: parameter groups, per-parameter state, zero_grad and state dicts.

Subclasses implement ``step``: they update the raw arrays of the parameters in place through a
fused kernel (``gpugrad.kernels``; its numpy reference on CPU) and bump each parameter's version
counter, so a graph that saved the old value notices the change.
"""
from __future__ import annotations

import copy
import warnings
from collections import defaultdict

from ..autograd.grad_mode import enable_grad
from ..tensor import Tensor


def zero_grads(params, set_to_none=True):
    """Reset the ``.grad`` of ``params``: drop it (None), or zero it in place, cut from any graph
    (Optimizer.zero_grad and Module.zero_grad)."""
    for p in params:
        g = p._grad
        if g is None:
            continue
        if set_to_none:
            p._grad = None
        else:
            if g.grad_fn is not None:
                g.detach_()
            else:
                g.requires_grad_(False)
            g.zero_()


class Optimizer:
    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = defaultdict(dict)
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. Please "
                            "use a list instead.")
        params = list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", stacklevel=3)
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self, closure=None):  # pragma: no cover - every optimizer defines it
        raise NotImplementedError

    @staticmethod
    def _closure(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- state dict ---------------------------------------------------------------------------
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}, with each
        parameter named by its position across the groups (PyTorch's layout)."""
        index, groups, start = {}, [], 0
        for g in self.param_groups:
            ids = list(range(start, start + len(g["params"])))
            index.update((id(p), i) for p, i in zip(g["params"], ids))
            groups.append(dict({k: v for k, v in g.items() if k != "params"}, params=ids))
            start += len(ids)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, theirs in zip(self.param_groups, groups):
            if len(mine["params"]) != len(theirs["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't "
                                 "match the size of optimizer's group")
        by_index = {i: p for mine, theirs in zip(self.param_groups, groups)
                    for i, p in zip(theirs["params"], mine["params"])}
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index.get(int(i))
            if p is None:
                continue
            self.state[p] = {k: _cast_state(k, v, p) for k, v in s.items()}
        for mine, theirs in zip(self.param_groups, groups):
            mine.update({k: copy.deepcopy(v) for k, v in theirs.items() if k != "params"})

    def __repr__(self):
        s = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"


def _cast_state(key, value, p):
    """A loaded state value as a private tensor on the parameter's device (and its dtype, for
    floating buffers other than the step count)."""
    if not isinstance(value, Tensor):
        return value
    if key == "step":
        return value.to(device="cpu").clone()
    dtype = p.dtype if value.is_floating_point() else None
    return value.to(device=p.device, dtype=dtype).clone()
