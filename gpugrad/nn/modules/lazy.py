"""LazyModuleMixin: the base of lazy modules, layers whose input size (in_features,
in_channels, num_features) is read from the first input. Until then their parameters and
buffers are ``UninitializedParameter`` / ``UninitializedBuffer`` placeholders; the first call
(or loading a state dict) materialises them with the right shapes and PyTorch's
initialisation, and the call turns the module into its plain class (LazyLinear -> Linear).
The lazy classes sit beside their eager ones (LazyLinear in linear.py, LazyConv* in conv.py...)."""
from __future__ import annotations

from ...tensor import Tensor
from ..parameter import UninitializedParameter, _Uninitialized

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Materialise the placeholders from the first input, then become ``cls_to_become``."""
    cls_to_become: type = None

    def has_uninitialized_params(self):
        return any(isinstance(v, _Uninitialized) for store in (self._parameters, self._buffers)
                   for v in store.values())

    def forward(self, *args, **kwargs):
        from ...autograd.grad_mode import no_grad
        with no_grad():   # reads the input's size; materialises what is still a placeholder
            self.initialize_parameters(*args, **kwargs)
        self.__class__ = self.cls_to_become
        return self.forward(*args, **kwargs)

    def _load(self, sd, prefix, missing, errors, expected, assign):
        # an uninitialised entry takes the checkpoint's shape before the copy
        for store in (self._parameters, self._buffers):
            for name, v in store.items():
                key = prefix + name
                if isinstance(v, _Uninitialized) and isinstance(sd.get(key), Tensor):
                    v.materialize(sd[key].shape)
        super()._load(sd, prefix, missing, errors, expected, assign)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self._size() != 0:
            super().reset_parameters()

    def _size(self):
        return self.in_channels


def _placeholders(module, names, kind, device, dtype):
    for name in names:
        if getattr(module, name, None) is not None:
            value = kind(device=device, dtype=dtype)
            (module.register_parameter if kind is UninitializedParameter
             else module.register_buffer)(name, value)
