"""The orthogonal polynomials of ``gpugrad.special`` (Chebyshev T, U, V, W and their shifted
forms, Hermite H and He, Laguerre L, Legendre P), evaluated as PyTorch evaluates them: the degree
n is truncated to an integer, negative degrees give 0, the end points take their exact values,
high degrees of the Chebyshev family inside (-1, 1) use the trigonometric forms, and everything
else runs the three-term recurrence up to each element's n. PyTorch defines no gradient for
them, so their results never require grad. ``evaluate`` is the shared front end (PyTorch's
dtype promotion, broadcasting and errors) of these and the other gradient-free special
functions."""
from __future__ import annotations

import numpy as np

from ..._backend import xp_of
from ..._promotion import result_type
from ...tensor import DEFAULT, Tensor
from .._op import broadcast_error

_KIND = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
         "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long",
         "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def kind_name(dtype) -> str:
    """PyTorch's name of a scalar type in 'not implemented for' messages."""
    return _KIND.get(np.dtype(dtype).name, np.dtype(dtype).name)


def not_implemented(name, dtype, array):
    where = "cpu" if isinstance(array, np.ndarray) else "cuda"
    return NotImplementedError(f'"{name}_{where}" not implemented for \'{kind_name(dtype)}\'')


def _number_type(v):
    return type(v).__name__


def evaluate(name, array_fn, *args, argnames=("input",), half=False):
    """A gradient-free special function of tensors (or a number and a tensor): PyTorch's result
    dtype, broadcasting and device rules; ``array_fn(xp, *float64 arrays)`` does the work."""
    tensors = [a for a in args if isinstance(a, Tensor)]
    if not tensors:
        if len(args) == 1:
            raise TypeError(f"special_{name}(): argument '{argnames[0]}' (position 1) must be "
                            f"Tensor, not {_number_type(args[0])}")
        got = ", ".join(_number_type(a) for a in args)
        x, n = argnames
        raise TypeError(
            f"special_{name}() received an invalid combination of arguments - got ({got}), but "
            f"expected one of:\n * (Tensor {x}, Tensor {n}, *, Tensor out = None)\n"
            f" * (Number {x}, Tensor {n}, *, Tensor out = None)\n"
            f" * (Tensor {x}, Number {n}, *, Tensor out = None)\n")
    first = tensors[0]
    for t in tensors[1:]:
        if t.device != first.device:
            raise RuntimeError(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{first.device} and {t.device}!")
    arrays = [a._data if isinstance(a, Tensor) else a for a in args]
    dtype = result_type(arrays)
    if dtype.kind in "biu":
        dtype = DEFAULT.float
    if dtype.kind == "c" or (dtype == np.float16 and not half):
        raise not_implemented(name, dtype, first._data)
    xp = xp_of(first._data)
    wide = [xp.asarray(a, dtype=np.float64) for a in arrays]
    if len(wide) > 1:
        try:
            wide = xp.broadcast_arrays(*wide)
        except ValueError as e:
            raise broadcast_error(e, arrays) from None
    y = array_fn(xp, *wide)
    return Tensor._make(xp.asarray(y).astype(dtype, copy=False))


# -- numerics on arrays ---------------------------------------------------------------------------
def _degree(xp, n):
    """n truncated to an integer (nan counts as negative)."""
    return xp.where(xp.isnan(n), -1, xp.trunc(xp.where(xp.isnan(n), 0.0, n))).astype(np.int64)


def _recurrence(xp, n, p0, p1, step, skip=None):
    """P_n by P_{k+1} = step(k, P_{k-1}, P_k) from P_0 = p0, P_1 = p1, each element stopping at
    its own n (elements in ``skip`` are not needed and set no bound on the loop)."""
    need = n if skip is None else xp.where(skip, 0, n)
    top = int(need.max()) if need.size else 0
    p = xp.zeros(n.shape) + p0
    q = xp.zeros(n.shape) + p1
    for k in range(1, top):
        r = step(k, p, q)
        go = k < n
        p, q = xp.where(go, q, p), xp.where(go, r, q)
    return xp.where(n == 0, p, q)


def _finish(xp, n, y, ends):
    """Negative degrees give 0; ``ends`` is a list of (mask, value) applied first to last."""
    for mask, value in ends:
        y = xp.where(mask, value, y)
    return xp.where(n < 0, 0.0, y)


def _odd(n):
    return n % 2 == 1


def _chebyshev(xp, kind, x, n, shifted):
    """T, U, V or W at x (or at 2x - 1 when shifted)."""
    n = _degree(xp, n)
    z = x + x - 1 if shifted else x
    start = {"t": z, "u": z + z, "v": z + z - 1, "w": z + z + 1}[kind]
    trig_from = {"t": 6, "u": 8, "v": 8, "w": 8}[kind] if not shifted else \
        {"t": 6, "u": 6, "v": 6, "w": 4}[kind]
    inside = xp.abs(z) < 1
    trig = (n > trig_from) & inside
    y = _recurrence(xp, n, 1.0, start, lambda k, p, q: (z + z) * q - p, trig)
    th = xp.arccos(xp.where(inside, z, 0.0))
    nf = n.astype(np.float64)
    sign = xp.where(_odd(n), -1.0, 1.0)
    if kind == "t":
        tv = xp.cos(nf * th)
        top, bottom = 1.0, sign
    elif kind == "u":
        st = xp.sin(th)
        tv = xp.where(st != 0, xp.sin((nf + 1) * th) / xp.where(st != 0, st, 1.0),
                      (nf + 1) * xp.cos((nf + 1) * th) / xp.where(z != 0, z, 1.0))
        top, bottom = nf + 1, sign * (nf + 1)
    elif kind == "v":
        h = xp.sin(th / 2) != 1
        tv = xp.where(h, xp.cos((nf + 0.5) * th) / xp.cos(th / 2), sign * (nf + nf + 1))
        top, bottom = 1.0, sign * (nf + nf + 1)
    else:
        h = xp.cos(th / 2) != 1
        tv = xp.where(h, xp.sin((nf + 0.5) * th) / xp.where(h, xp.sin(th / 2), 1.0),
                      xp.where(z > 0, nf + nf + 1, sign))
        top, bottom = nf + nf + 1, sign
    y = xp.where(trig, tv, y)
    hi, lo = (x == 1, x == 0) if shifted else ((xp.abs(x) == 1) & (x > 0), x == -1)
    return _finish(xp, n, y, [(hi, top), (lo, bottom)])


def hermite_h_array(xp, x, n):
    n = _degree(xp, n)
    return _finish(xp, n, _recurrence(xp, n, 1.0, x + x,
                                      lambda k, p, q: (x + x) * q - (2 * k) * p), [])


def hermite_he_array(xp, x, n):
    n = _degree(xp, n)
    return _finish(xp, n, _recurrence(xp, n, 1.0, x, lambda k, p, q: x * q - k * p), [])


def laguerre_l_array(xp, x, n):
    n = _degree(xp, n)
    y = _recurrence(xp, n, 1.0, 1 - x, lambda k, p, q: ((2 * k + 1 - x) * q - k * p) / (k + 1))
    return _finish(xp, n, y, [(x == 0, 1.0)])


def legendre_p_array(xp, x, n):
    n = _degree(xp, n)
    y = _recurrence(xp, n, 1.0, x, lambda k, p, q: ((2 * k + 1) * x * q - k * p) / (k + 1))
    minus = xp.where(_odd(n), -1.0, 1.0)
    return _finish(xp, n, y, [(x == 1, 1.0), (x == -1, minus)])


def _cheb(kind, shifted):
    return lambda xp, x, n: _chebyshev(xp, kind, x, n, shifted)


# -- public functions -----------------------------------------------------------------------------
def _poly(name, array_fn):
    def fn(input, n, *, out=None):
        y = evaluate(name, array_fn, input, n, argnames=("x", "n"))
        if out is not None:
            out.copy_(y)
            return out
        return y
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}(input, n): no gradient, as in PyTorch."
    return fn


chebyshev_polynomial_t = _poly("chebyshev_polynomial_t", _cheb("t", False))
chebyshev_polynomial_u = _poly("chebyshev_polynomial_u", _cheb("u", False))
chebyshev_polynomial_v = _poly("chebyshev_polynomial_v", _cheb("v", False))
chebyshev_polynomial_w = _poly("chebyshev_polynomial_w", _cheb("w", False))
shifted_chebyshev_polynomial_t = _poly("shifted_chebyshev_polynomial_t", _cheb("t", True))
shifted_chebyshev_polynomial_u = _poly("shifted_chebyshev_polynomial_u", _cheb("u", True))
shifted_chebyshev_polynomial_v = _poly("shifted_chebyshev_polynomial_v", _cheb("v", True))
shifted_chebyshev_polynomial_w = _poly("shifted_chebyshev_polynomial_w", _cheb("w", True))
hermite_polynomial_h = _poly("hermite_polynomial_h", hermite_h_array)
hermite_polynomial_he = _poly("hermite_polynomial_he", hermite_he_array)
laguerre_polynomial_l = _poly("laguerre_polynomial_l", laguerre_l_array)
legendre_polynomial_p = _poly("legendre_polynomial_p", legendre_p_array)

POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p")


OPS: list = []
