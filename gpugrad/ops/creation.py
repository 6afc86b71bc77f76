"""Creation functions that are compositions of ops: logspace."""
from __future__ import annotations


# -- creation and sampling ------------------------------------------------------------------------
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False, out=None):
    """base ** linspace(start, end, steps), computed in float64."""
    from .. import _backend
    from .._creation import _finish, as_dtype, get_default_dtype
    d = as_dtype(dtype) or get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")

    def make(xp):
        return xp.power(float(base), xp.linspace(float(start), float(end), steps)).astype(d)
    return _finish(_backend.on_device(device, make), requires_grad)


OPS: list = []
