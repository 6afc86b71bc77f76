"""``Optimizer``: parameter groups, per-parameter state, zero_grad, state dicts and hooks.

Subclasses implement ``step``: they update the raw arrays of the parameters in place through a
fused kernel (``gpugrad.kernels``; its numpy reference on CPU) and bump each parameter's version
counter, so a graph that saved the old value notices the change. Every subclass's ``step`` is
wrapped once, when the class is defined, to run the step hooks (PyTorch patches it on first use).
"""
from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Mapping

from ..autograd.grad_mode import enable_grad
from ..autograd.graph import RemovableHandle
from ..tensor import Tensor, zero_grads

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks: list = []
_global_optimizer_post_hooks: list = []
_HOOK_LISTS = ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
               "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
               "_optimizer_load_state_dict_pre_hooks", "_optimizer_load_state_dict_post_hooks")


def register_optimizer_step_pre_hook(hook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` before every
    optimizer's ``step`` (``args`` starts with the optimizer)."""
    _global_optimizer_pre_hooks.append(hook)
    return RemovableHandle(_global_optimizer_pre_hooks, hook)


def register_optimizer_step_post_hook(hook) -> RemovableHandle:
    """``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    _global_optimizer_post_hooks.append(hook)
    return RemovableHandle(_global_optimizer_post_hooks, hook)


def _add_hook(hooks, hook, prepend=False) -> RemovableHandle:
    hooks.insert(0, hook) if prepend else hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _hooked_step(step):
    """``step`` running the global and the optimizer's pre hooks (which may replace its
    arguments), then the post hooks. A nested call (a subclass's step calling super().step())
    runs them once. It also tells the LR schedulers that the optimizer has stepped."""

    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        if self.__dict__.get("_in_hooked_step"):
            return step(*args, **kwargs)
        if "_opt_called" in self.__dict__:     # a scheduler watches this optimizer
            self._opt_called = True
        self._in_hooked_step = True
        try:
            for hook in _global_optimizer_pre_hooks + self._optimizer_step_pre_hooks:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
            out = step(*args, **kwargs)
            for hook in self._optimizer_step_post_hooks + _global_optimizer_post_hooks:
                hook(self, args, kwargs)
            return out
        finally:
            self._in_hooked_step = False

    wrapper.hooked = True
    return wrapper


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__ and not getattr(cls.__dict__["step"], "hooked", False):
            cls.step = _hooked_step(cls.__dict__["step"])

    def __init__(self, params, defaults):
        self.defaults = defaults
        for name in _HOOK_LISTS:
            setattr(self, name, [])
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {params.type()}")
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __getstate__(self):
        # hooks are functions of this process, not state (PyTorch drops them too)
        return {k: v for k, v in self.__dict__.items() if k not in _HOOK_LISTS}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in _HOOK_LISTS:
            self.__dict__.setdefault(name, [])
        self.defaults.setdefault("differentiable", False)

    def add_param_group(self, param_group):
        """Append ``param_group`` (the dict itself, as PyTorch does) after filling in the
        defaults; ``(name, tensor)`` pairs, as ``named_parameters()`` yields, also store the
        names under ``'param_names'``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        if "params" not in param_group:
            raise ValueError("a parameter group needs a 'params' entry (the tensors it "
                             "optimizes)")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. Please "
                            "use a list instead.")
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is "
                                f"{type(p).__name__}")
            if not self.defaults.get("differentiable") and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                kind = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {kind} to the optimizer")
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

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

    # -- hooks --------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs) -> None | (new_args, new_kwargs)`` before ``step``
        (``args`` starts with the optimizer)."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook) -> RemovableHandle:
        """``hook(optimizer, args, kwargs)`` after ``step``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False) -> RemovableHandle:
        """``hook(optimizer)`` before ``state_dict`` builds its result."""
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | new_state_dict`` on ``state_dict``'s result."""
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False) -> RemovableHandle:
        """``hook(optimizer, state_dict) -> None | new_state_dict`` before loading."""
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False) -> RemovableHandle:
        """``hook(optimizer)`` after loading."""
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dict ---------------------------------------------------------------------------
    def state_dict(self):
        """{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}, with each
        parameter named by its position across the groups (PyTorch's layout)."""
        for hook in list(self._optimizer_state_dict_pre_hooks):
            hook(self)
        index, groups, start = {}, [], 0
        for g in self.param_groups:
            ids = list(range(start, start + len(g["params"])))
            for p, i in zip(g["params"], ids):
                index.setdefault(id(p), i)
            groups.append(dict({k: v for k, v in g.items() if k != "params"},
                               params=[index[id(p)] for p in g["params"]]))
            start += len(ids)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        out = {"state": state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks):
            result = hook(self, out)
            if result is not None:
                out = result
        return out

    def load_state_dict(self, state_dict):
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = dict(state_dict)
        for hook in list(self._optimizer_load_state_dict_pre_hooks):
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        for key in ("state", "param_groups"):
            if key not in state_dict:
                raise ValueError(f"loaded state dict has no '{key}' entry: not an optimizer's "
                                 f"state_dict()")
        groups = copy.deepcopy(state_dict["param_groups"])
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
        for mine, theirs in zip(self.param_groups, groups):   # the saved groups, our params
            theirs["params"] = mine["params"]
            if "param_names" in mine and "param_names" not in theirs:
                theirs["param_names"] = mine["param_names"]
        self.param_groups = groups
        for hook in list(self._optimizer_load_state_dict_post_hooks):
            hook(self)

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
