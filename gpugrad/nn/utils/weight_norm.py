"""Weight normalisation by a forward pre-hook, as ``torch.nn.utils.weight_norm`` (the API that
predates ``parametrizations.weight_norm``): ``w = g * v / ||v||``, the norm taken over every
dimension but ``dim``; ``g`` and ``v`` are the parameters ``{name}_g`` and ``{name}_v``."""
from __future__ import annotations

import warnings

from ..parameter import Parameter


def norm_except_dim(v, pow=2, dim=0):
    """||v|| over every dimension except ``dim``, kept with size 1; the norm of all of ``v`` (a
    0-dim tensor) when ``dim`` is -1."""
    if dim == -1:
        return v.norm(pow)
    dim = dim % v.dim()
    return v.norm(pow, dim=[d for d in range(v.dim()) if d != dim], keepdim=True)


def _weight_norm(v, g, dim=0):
    """w = v * (g / ||v||)"""
    return v * (g / norm_except_dim(v, 2, dim))


def _hooks_of(module, kind):
    return [(i, hook) for i, (hook, _) in enumerate(module._forward_pre_hooks)
            if isinstance(hook, kind)]


class WeightNorm:
    """The pre-hook: recomputes ``module.{name}`` from ``{name}_g`` and ``{name}_v``."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module, name, dim):
        for _, hook in _hooks_of(module, WeightNorm):
            if hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replace ``module.{name}`` by ``g * v / ||v||`` recomputed before every forward;
    ``dim=None`` normalises over the whole tensor (``g`` is then a scalar)."""
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm``: ``module.{name}`` becomes a parameter again, holding the current
    normalised value."""
    for i, hook in _hooks_of(module, WeightNorm):
        if hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[i]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
