"""Creation functions that are compositions of ops: logspace; and Tensor's ``new_*`` methods,
tensors like self."""
from __future__ import annotations

from .._exports import export, tensor_method
from ..tensor import Size, Tensor


# -- creation and sampling ------------------------------------------------------------------------
@export("logspace")
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


# -- Tensor methods: tensors like self (its dtype and device unless given) ------------------------
def _new(kind, s, size, dtype, device, requires_grad):
    from .. import _creation
    return getattr(_creation, kind)(*size, dtype=dtype or s.dtype, device=device or s.device,
                                    requires_grad=requires_grad)


def _new_tensor(s, data, dtype, device, requires_grad):
    from .._creation import tensor
    return tensor(data, dtype=dtype or s.dtype, device=device or s.device,
                  requires_grad=requires_grad)


tensor_method("new_full")(
    lambda s, size, fill_value, dtype=None, device=None, requires_grad=False:
    _new("full", s, (size, fill_value), dtype, device, requires_grad))
tensor_method("new_empty")(lambda s, *size, dtype=None, device=None, requires_grad=False: _new(
    "empty", s, size, dtype, device, requires_grad))
tensor_method("new_zeros")(lambda s, *size, dtype=None, device=None, requires_grad=False: _new(
    "zeros", s, size, dtype, device, requires_grad))
tensor_method("new_ones")(lambda s, *size, dtype=None, device=None, requires_grad=False: _new(
    "ones", s, size, dtype, device, requires_grad))
tensor_method("new_tensor")(lambda s, data, dtype=None, device=None, requires_grad=False:
                            _new_tensor(s, data, dtype, device, requires_grad))


@tensor_method("new")
def _new_legacy(self, *args, dtype=None, device=None, requires_grad=False):
    """PyTorch's legacy constructor: ``t.new()`` (empty), ``t.new(2, 3)`` / ``t.new(size)``
    (uninitialised), ``t.new(data)`` (a copy of data), ``t.new(tensor)`` (that tensor); self's
    dtype and device."""
    from .._creation import empty, tensor
    dtype, device = dtype or self.dtype, device or self.device
    if len(args) == 1 and isinstance(args[0], Tensor):
        return args[0]
    if not args or all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
            len(args) == 1 and isinstance(args[0], Size)):
        size = args[0] if len(args) == 1 and isinstance(args[0], Size) else (args or (0,))
        return empty(*size, dtype=dtype, device=device, requires_grad=requires_grad)
    return tensor(args[0], dtype=dtype, device=device, requires_grad=requires_grad)


@tensor_method("new_empty_strided")
def _new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                       requires_grad=False, pin_memory=False):
    from .._creation import empty_strided
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device or self.device,
                         requires_grad=requires_grad)
