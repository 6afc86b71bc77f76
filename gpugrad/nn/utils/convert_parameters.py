"""Parameters to one flat vector and back, as ``torch.nn.utils.convert_parameters``."""
from __future__ import annotations

from ...autograd.grad_mode import no_grad
from ...ops.shape.joining import cat
from ...ops.shape.views import reshape
from ...tensor import Tensor


def parameters_to_vector(parameters):
    """All parameters flattened into one vector (the order of ``parameters``)."""
    return cat([reshape(p, -1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into ``parameters`` (the inverse of the above)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected gpugrad.Tensor, but got: {type(vec).__name__}")
    i = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.copy_(vec[i:i + n].reshape(p.shape))
            i += n
