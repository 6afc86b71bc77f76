"""Transforms: invertible (or not) maps between constrained spaces, with the log |det J| a
``TransformedDistribution`` needs (PyTorch's ``torch.distributions.transforms``)."""
from __future__ import annotations

import math
import numbers

import numpy as np

import gpugrad

from ..ops.activation import softplus
from ..tensor import Size, Tensor
from . import constraints
from .utils import broadcast_all, finfo, sum_rightmost

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


class Transform:
    """y = T(x) from ``domain`` to ``codomain``; ``inv`` is T^-1 and
    ``log_abs_det_jacobian(x, y)`` is log |dy/dx|, summed over ``domain.event_dim`` dims.
    ``cache_size=1`` remembers the last (x, y) pair, so ``inv(T(x))`` returns ``x`` itself."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        return _InverseTransform(self)

    @property
    def sign(self):
        """+1 or -1 as T is increasing or decreasing (monotone bijections only)."""
        raise NotImplementedError

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __repr__(self):
        return self.__class__.__name__ + "()"


class _InverseTransform(Transform):
    """T^-1 of a transform T: domain and codomain swapped, log |det J| negated."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


def _event_real(event_dim):
    return constraints.real if event_dim == 0 else constraints.independent(constraints.real,
                                                                           event_dim)


class ComposeTransform(Transform):
    """parts[-1] o ... o parts[0]; the empty composition is the identity."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        return ComposeTransform([p.inv for p in reversed(self.parts)])

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return gpugrad.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        result = 0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = sum_rightmost(part.log_abs_det_jacobian(a, b),
                                 event_dim - part.domain.event_dim)
            result = result + term
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{self.__class__.__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


class _Stateless(Transform):
    """A transform with no parameters: any two instances are equal."""
    bijective = True
    sign = 1

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = object.__hash__


class ExpTransform(_Stateless):
    """y = exp(x); log |dy/dx| = x"""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(_Stateless):
    """y = sigmoid(x), clamped to [tiny, 1 - eps]; log |dy/dx| = -softplus(-x) - softplus(x)"""
    domain = constraints.real
    codomain = constraints.unit_interval

    def _call(self, x):
        fi = finfo(x.dtype)
        return gpugrad.sigmoid(x).clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))

    def _inverse(self, y):
        fi = finfo(y.dtype)
        y = y.clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class SoftplusTransform(_Stateless):
    """y = log(1 + exp(x)); x = y + log(-expm1(-y)); log |dy/dx| = -softplus(-x)"""
    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(_Stateless):
    """y = tanh(x); log |dy/dx| = 2 (log 2 - x - softplus(-2x))"""
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return 0.5 * (y.log1p() - (-y).log1p())   # atanh

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(_Stateless):
    """y = |x| (not bijective: the inverse picks the positive root)."""
    bijective = False
    domain = constraints.real
    codomain = constraints.positive

    @property
    def sign(self):
        raise NotImplementedError

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


def _broadcast_shape(*shapes):
    return Size(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def _shape_of(v):
    return v.shape if isinstance(v, Tensor) else ()


class PowerTransform(Transform):
    """y = x^exponent on the positive reals; log |dy/dx| = log |exponent y / x|"""
    bijective = True
    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, PowerTransform)
                and bool(self.exponent.eq(other.exponent).all()))

    __hash__ = object.__hash__

    @property
    def sign(self):
        return self.exponent.sign()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast_shape(shape, self.exponent.shape)

    def inverse_shape(self, shape):
        return _broadcast_shape(shape, self.exponent.shape)


class AffineTransform(Transform):
    """y = loc + scale x, over ``event_dim`` rightmost dims; log |dy/dx| = log |scale|
    (summed over the event dims)."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return _event_real(self._event_dim)

    @property
    def codomain(self):
        return _event_real(self._event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform) or self._event_dim != other._event_dim:
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif isinstance(a, Tensor) and isinstance(b, Tensor):
                if a.shape != b.shape or not bool((a == b).all()):
                    return False
            else:
                return False
        return True

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, numbers.Real):
            result = gpugrad.full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = result.reshape(tuple(result.shape[:-self._event_dim]) + (-1,)).sum(-1)
            shape = shape[:-self._event_dim]
        return result.expand(tuple(shape))

    def forward_shape(self, shape):
        return _broadcast_shape(shape, _shape_of(self.loc), _shape_of(self.scale))

    def inverse_shape(self, shape):
        return _broadcast_shape(shape, _shape_of(self.loc), _shape_of(self.scale))


class SoftmaxTransform(_Stateless):
    """y = softmax(x) over the last dim (not bijective: the inverse is log y, up to a
    constant shift of x)."""
    bijective = False
    domain = constraints.real_vector
    codomain = constraints.simplex

    @property
    def sign(self):
        raise NotImplementedError

    def _call(self, x):
        return gpugrad.softmax(x, dim=-1)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


# NOTE: imported last: these modules subclass Transform from this one
from ._functor_transforms import (  # noqa: E402
    CatTransform,
    CumulativeDistributionTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
)
from ._matrix_transforms import (  # noqa: E402
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    StickBreakingTransform,
)
