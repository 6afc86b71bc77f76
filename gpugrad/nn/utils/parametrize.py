"""Parametrizations, as ``torch.nn.utils.parametrize``: ``register_parametrization(m, "weight",
P)`` makes ``m.weight`` a property computing ``P(original)``, the unconstrained tensor stored as
``m.parametrizations.weight.original`` (or ``original0``, ``original1``, ... when
``P.right_inverse`` returns several).

The property lives on a subclass made for the module (``ParametrizedLinear`` for a ``Linear``),
so other instances of the class are untouched; removing the last parametrization restores the
module's own class. Assigning to ``m.weight`` stores ``right_inverse(value)``.
"""
from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ...autograd.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Within this context each parametrized tensor is computed once, on first access, and
    reused until the outermost ``cached()`` exits."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(original, new):
    """Give ``original`` the value of ``new`` keeping the object (so an optimizer holding it
    keeps working), as ``Tensor.set_`` does in PyTorch."""
    with no_grad():
        original.data = new.detach()


def _check_like(what, z, dtype, shape):
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    if z.dtype != dtype:
        raise ValueError(f"{what} may not change the dtype of the tensor, unless `unsafe` flag "
                         f"is enabled.\nunparametrized dtype: {dtype}\nparametrized dtype: "
                         f"{z.dtype}")
    if z.shape != shape:
        raise ValueError(f"{what} may not change the shape of the tensor, unless `unsafe` flag "
                         f"is enabled.\nunparametrized shape: {shape}\nparametrized shape: "
                         f"{z.shape}")


def _check_appended(msg, name, y, z, label):
    """The checks made when a parametrization is appended: ``z`` must keep ``y``'s dtype and
    shape; ``label`` names ``z`` in the message (``{}`` stands for dtype or shape)."""
    for what in ("dtype", "shape"):
        if getattr(z, what) != getattr(y, what):
            raise ValueError(f"{msg.format(what)}\nmodule.{name}.{what}: {getattr(y, what)}\n"
                             f"{label.format(what)}: {getattr(z, what)}")


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order: ``forward()`` is
    ``P_n(...P_1(P_0(original)))``; holds ``original`` (or ``original0``, ``original1``, ...)."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        dtype, shape = original.dtype, original.shape
        new = original
        with no_grad():
            for module in reversed(self):
                if hasattr(module, "right_inverse"):
                    new = module.right_inverse(new)
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, part in enumerate(new):
                if not isinstance(part, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(part).__name__}.")
                part = part.detach()
                if isinstance(original, Parameter):
                    part = Parameter(part, original.requires_grad)
                part.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", part)
        if not self.unsafe:
            _check_like("Registering a parametrization", self(), dtype, shape)

    def right_inverse(self, value):
        """Store ``right_inverse(value)`` of every parametrization (last first) as the
        original(s)."""
        with no_grad():
            for module in reversed(self):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       "implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_in_place(self.original, value)
            else:
                if not isinstance(value, Sequence) or len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got an object of type "
                                     f"{type(value).__name__}")
                for i, part in enumerate(value):
                    _set_in_place(getattr(self, f"original{i}"), part)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in list(self)[1:]:
            x = module(x)
        return x


def _inject_new_class(module):
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})


def _inject_property(module, tensor_name):
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has any parametrization (or one on ``tensor_name``)."""
    parametrizations = module.__dict__["_modules"].get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.{tensor_name}`` the output of ``parametrization`` applied to the stored
    original (or append it to the parametrizations already there); returns ``module``.
    Unless ``unsafe``, the parametrization may change neither dtype nor shape."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got "
                                 f"{type(x).__name__}.")
            _check_appended("Registering a parametrization may not change the {} of the "
                            "tensor, unless the `unsafe` flag is enabled.", tensor_name, y, x,
                            f"parametrization(module.{tensor_name}).{{}}")
            if hasattr(parametrization, "right_inverse"):
                z = parametrization.right_inverse(x)
                if not isinstance(z, Tensor):
                    raise ValueError(f"parametrization.right_inverse must return a tensor. Got: "
                                     f"{type(z).__name__}")
                _check_appended("The tensor returned by parametrization.right_inverse must have "
                                f"the same {{}} as module.{tensor_name}, unless the `unsafe` flag "
                                "is enabled.", tensor_name, y, z, "returned {}")
        plist.append(parametrization)
        plist.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        _inject_property(module, tensor_name)
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Remove the parametrizations on ``module.{tensor_name}``: it becomes a parameter (or
    buffer) again holding the parametrized value (``leave_parametrized``) or the original."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                _set_in_place(original, getattr(module, tensor_name))
    elif leave_parametrized:
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
