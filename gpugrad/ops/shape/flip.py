"""Reordering along dimensions: flip, fliplr, flipud, roll, rot90."""
from __future__ import annotations

from ..._exports import export, tensor_method
from .._op import Op


class FlipBackward0(Op):
    """y = x reversed along dims"""
    __slots__ = ("axes",)

    def forward(self, xp, x, dims=()):
        self.axes = dims
        return xp.flip(x, dims).copy()   # a new array, as PyTorch's flip gives

    def backward(self, F, gy):
        g = F.flip(gy, self.axes)
        return g.copy() if F.fast else g   # a fresh array, not a view of gy


class RollBackward0(Op):
    """y = x rolled by shifts along dims (the flattened x when dims is None)"""
    __slots__ = ("shifts", "axes")

    def forward(self, xp, x, shifts=0, dims=None):
        self.shifts, self.axes = shifts, dims
        return xp.roll(x, shifts, dims)

    def backward(self, F, gy):
        back = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return F.roll(gy, back, self.axes)


def _dims(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return tuple(input._dim(d) for d in dims)


@export("flip")
def flip(input, dims):
    return FlipBackward0.apply(input, dims=_dims(input, dims))


@export("roll", method=True)
def roll(input, shifts, dims=None):
    if dims is None:
        return RollBackward0.apply(input, shifts=shifts, dims=None)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = _dims(input, dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    return RollBackward0.apply(input, shifts=shifts, dims=dims)


@export("fliplr", method=True)
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@export("flipud", method=True)
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@export("rot90", method=True)
def rot90(input, k=1, dims=(0, 1)):
    from .views import clone, transpose
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = input._dim(dims[0]), input._dim(dims[1])
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (d1,)), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(transpose(input, d0, d1), (d1,))
    return clone(input)


OPS = [FlipBackward0, RollBackward0]


@tensor_method("flip")
def _flip(self, *dims, **kw):
    """``t.flip(0, 1)``, ``t.flip((0, 1))`` or ``t.flip(dims=(0, 1))``."""
    if "dims" in kw:
        dims = (kw.pop("dims"),)
    if not dims or kw:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    return flip(self, dims[0] if len(dims) == 1 else dims)
