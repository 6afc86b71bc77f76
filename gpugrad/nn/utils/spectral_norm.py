"""Spectral normalisation by a forward pre-hook, as ``torch.nn.utils.spectral_norm``:
``w = w_orig / sigma`` with ``sigma = u^T W v`` estimated by power iteration on ``W``, the weight
reshaped to a (size of ``dim``, rest) matrix. The vectors ``u``, ``v`` are the buffers
``{name}_u``, ``{name}_v``, refined in place (``n_power_iterations`` steps) in training mode
only; gradients flow through ``W`` alone."""
from __future__ import annotations

from ... import _creation
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter
from .weight_norm import _hooks_of


def _as_matrix(weight, dim):
    """``weight`` with ``dim`` moved first, flattened to (size of dim, rest)."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.shape[0], -1)


class SpectralNorm:
    """The pre-hook: recomputes ``module.{name}`` from ``{name}_orig``, ``{name}_u``,
    ``{name}_v``."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.name, self.n_power_iterations, self.dim, self.eps = (name, n_power_iterations,
                                                                  dim, eps)

    def reshape_weight_to_matrix(self, weight):
        return _as_matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        w = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(F.normalize(w.t().mv(u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(w.mv(v), dim=0, eps=self.eps))
        # NOTE: clones, so the next in-place refinement does not touch what backward saved
        sigma = u.clone().dot(w.mv(v.clone()))
        return weight / sigma

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for _, hook in _hooks_of(module, SpectralNorm):
            if hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            kw = dict(dtype=weight.dtype, device=weight.device)
            u = F.normalize(_creation.randn(h, **kw), dim=0, eps=fn.eps)
            v = F.normalize(_creation.randn(w, **kw), dim=0, eps=fn.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Replace ``module.{name}`` by ``{name}_orig / sigma`` recomputed before every forward.
    ``dim`` defaults to 1 for transposed convolutions, else 0."""
    if dim is None:
        dim = 1 if getattr(module, "transposed", False) else 0   # ConvTranspose1d-3d
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``: ``module.{name}`` becomes a parameter holding the current
    normalised value (no further power iteration)."""
    for i, hook in _hooks_of(module, SpectralNorm):
        if hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[i]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
