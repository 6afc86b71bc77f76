"""``gpugrad.nn.modules.module``: ``Module`` and the hooks every module runs, where PyTorch
keeps them (``torch.nn.modules.module.register_module_forward_hook`` ...)."""
from .._backward_hooks import (
    register_module_backward_hook,
    register_module_forward_hook,
    register_module_forward_pre_hook,
    register_module_full_backward_hook,
    register_module_full_backward_pre_hook,
)
from ..module import Module

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_backward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook"]
