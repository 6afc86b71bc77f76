"""Transforms: invertible (or not) maps between constrained spaces, with the log |det J| a
``TransformedDistribution`` needs (PyTorch's ``torch.distributions.transforms``).

In order: the base Transform and its composition, elementwise maps (exp, sigmoid, power,
affine, ...), transforms built from other transforms or distributions, and transforms onto
structured spaces (the simplex, Cholesky factors, positive definite matrices)."""
from __future__ import annotations

import math
import numbers

import numpy as np

import gpugrad

from ..nn.functional import logsigmoid, pad
from ..ops.nn.activation import softplus
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


# ***** transforms built from other transforms or distributions *****

class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims in its event:
    the map is unchanged, log |det J| is summed over those dims."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                             self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class ReshapeTransform(Transform):
    """The rightmost ``in_shape`` dims reshaped to ``out_shape``; log |det J| = 0."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = tuple(x.shape[:x.dim() - len(self.in_shape)])
        return x.reshape(batch_shape + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = tuple(y.shape[:y.dim() - len(self.out_shape)])
        return y.reshape(batch_shape + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(tuple(x.shape[:x.dim() - len(self.in_shape)]))

    @staticmethod
    def _swap(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if tuple(shape[cut:]) != tuple(old):
            raise ValueError(f"Shape mismatch: expected {Size(shape[cut:])} but got {old}")
        return Size(tuple(shape[:cut]) + tuple(new))

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


def _check_blocks(name, t, dim, length):
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")
    if t.shape[dim] != length:
        raise AssertionError(f"{name}.size({dim}) = {t.shape[dim]} must equal length {length}")


class CatTransform(Transform):
    """``tseq[i]`` applied to the i-th block (``lengths[i]`` long) along ``dim``, the results
    joined as ``cat`` would; log |det J| likewise, each summed up to the largest event_dim."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _blocks(self, *tensors):
        start = 0
        for t, length in zip(self.transforms, self.lengths):
            yield (t,) + tuple(v.narrow(self.dim, start, length) for v in tensors)
            start += length

    def _call(self, x):
        _check_blocks("tensor", x, self.dim, self.length)
        return gpugrad.cat([t(xs) for t, xs in self._blocks(x)], self.dim)

    def _inverse(self, y):
        _check_blocks("tensor", y, self.dim, self.length)
        return gpugrad.cat([t.inv(ys) for t, ys in self._blocks(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_blocks("x", x, self.dim, self.length)
        _check_blocks("y", y, self.dim, self.length)
        terms = []
        for t, xs, ys in self._blocks(x, y):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim += self.event_dim
        if dim < 0:   # the blocks' dim survives the event sum: join the terms along it
            return gpugrad.cat(terms, dim)
        return sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """``tseq[i]`` applied to the i-th slice along ``dim``, the results joined as ``stack``
    would; log |det J| is stacked the same way."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _check(self, name, z, what):
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for {what} with {z.dim()} "
                                 "dimensions")
        if z.shape[self.dim] != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {z.shape[self.dim]} must equal "
                                 f"len(transforms) {len(self.transforms)}")

    def _call(self, x):
        self._check("x", x, "tensor")
        return gpugrad.stack([t(v) for v, t in zip(self._slice(x), self.transforms)], self.dim)

    def _inverse(self, y):
        self._check("y", y, "tensor")
        return gpugrad.stack([t.inv(v) for v, t in zip(self._slice(y), self.transforms)],
                             self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check("x", x, "x")
        self._check("y", y, "y")
        terms = [t.log_abs_det_jacobian(a, b)
                 for a, b, t in zip(self._slice(x), self._slice(y), self.transforms)]
        return gpugrad.stack(terms, self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = F(x), the CDF of a univariate ``distribution``, onto [0, 1]; x = F^-1(y) (its icdf);
    log |dy/dx| = log p(x)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = 1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)


# ***** transforms onto structured spaces *****

def _too_few(shape, n):
    if len(shape) < n:
        raise ValueError("Too few dimensions on input")


def vec_to_tril_matrix(vec, diag=0):
    """The (..., n) vector laid row by row into the entries j <= i + diag (diag <= 0) of a
    (..., D, D) matrix, zeros elsewhere."""
    n = vec.shape[-1]
    d = 1
    while len(np.tril_indices(d, diag)[0]) < n:
        d += 1
    if len(np.tril_indices(d, diag)[0]) != n:
        raise ValueError("Input is not a flattened lower-diagonal number")
    rows, cols = np.tril_indices(d, diag)
    index = np.full(d * d, n, dtype=np.int64)   # n points at the zero appended below
    index[rows * d + cols] = np.arange(n)
    padded = gpugrad.cat([vec, vec.new_zeros(tuple(vec.shape[:-1]) + (1,))], -1)
    index = gpugrad.tensor(index, device=vec.device)
    return padded.index_select(-1, index).reshape(tuple(vec.shape[:-1]) + (d, d))


def tril_matrix_to_vec(mat, diag=0):
    """The entries j <= i + diag of the (..., D, D) matrix, row by row, as a (..., n) vector."""
    d = mat.shape[-1]
    rows, cols = np.tril_indices(d, diag)
    index = gpugrad.tensor(rows * d + cols, device=mat.device)
    return mat.reshape(tuple(mat.shape[:-2]) + (d * d,)).index_select(-1, index)


def _stick_offset(x, k):
    """log(K - i) for i = 1..K-1: centres the sticks so x = 0 maps to the uniform simplex"""
    return gpugrad.arange(k, 0, -1, dtype=x.dtype, device=x.device).log()


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex: z_i = sigmoid(x_i - log(K - i)), y_i = z_i prod_{j<i}(1 - z_j),
    y_K = prod_j (1 - z_j); log |det J| = sum_i log y_i + log(1 - z_i) (triangular Jacobian)."""
    bijective = True
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        fi = finfo(x.dtype)
        z = gpugrad.sigmoid(x - _stick_offset(x, x.shape[-1]))
        z = z.clamp(min=float(fi.tiny), max=1.0 - float(fi.eps))
        return pad(z, (0, 1), value=1.0) * pad((1 - z).cumprod(-1), (1, 0), value=1.0)

    def _inverse(self, y):
        """x_i = log y_i - log(1 - sum_{j<=i} y_j) + log(K - i)"""
        y_crop = y[..., :-1]
        rest = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - rest.log() + _stick_offset(y, y_crop.shape[-1])

    def log_abs_det_jacobian(self, x, y):
        shifted = x - _stick_offset(x, x.shape[-1])
        return (-shifted + logsigmoid(shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _too_few(shape, 1)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _too_few(shape, 1)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices -> lower Cholesky factors: y = tril(x, -1) + diag(exp(diag x)).
    (Not a bijection of the whole space: the upper triangle is dropped, as PyTorch does.)"""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices -> positive definite ones: y = L L^T, L = LowerCholeskyTransform()(x);
    the inverse goes through the Cholesky factor of y."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        L = LowerCholeskyTransform()(x)
        return L @ L.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(gpugrad.linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """R^(D(D-1)/2) -> Cholesky factors of D x D correlation matrices. r = tanh(x) fills the
    strict lower triangle row by row; each row is a signed stick breaking on the unit sphere:
    y_ij = r_ij sqrt(s_ij), y_ii = sqrt(s_ii), s_ij = 1 - sum_{k<j} y_ik^2 = prod_{k<j}(1 - r_ik^2).
    log |det J| = sum_{j<i} (log(1 - r_ij^2) + log(s_ij) / 2)."""
    bijective = True
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        s_sqrt = (1 - r * r).sqrt().cumprod(-1)
        eye = gpugrad.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return (r + eye) * pad(s_sqrt[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y):
        """r_ij = y_ij / sqrt(1 - sum_{k<j} y_ik^2); x = atanh(r)"""
        s = pad((1 - (y * y).cumsum(-1))[..., :-1], (1, 0), value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(s, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        s = 1 - (y * y).cumsum(-1)   # s[i, j] here is s_i(j+1) above
        stick = 0.5 * tril_matrix_to_vec(s, diag=-2).log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape):
        _too_few(shape, 1)
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        _too_few(shape, 2)
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)
