"""In-place random sampling: bernoulli_, exponential_, random_; and poisson."""
from __future__ import annotations

import math

import numpy as np

from .._backend import xp_of
from .._exports import export, tensor_method
from ..tensor import Tensor
from ..tensor_inplace import inplace


def _random_fill(self, sample, generator):
    """Write ``sample(shape, device, generator)`` (a float64 tensor) into self, no grad
    recorded."""
    from ..tensor_inplace import inplace
    z = sample(tuple(self.shape), self.device, generator)
    return inplace(self, lambda t: t * 0 + z.to(t.dtype), raw=lambda a: a.__setitem__(
        Ellipsis, z._data.astype(a.dtype)))


def _uniform(shape, device, generator):
    from .._creation import rand
    return rand(shape, dtype=np.float64, device=device, generator=generator)


@tensor_method("bernoulli_")
def bernoulli_(self, p=0.5, *, generator=None):
    def sample(s, dev, g):
        q = p.to(dev).double() if isinstance(p, Tensor) else p
        return (_uniform(s, dev, g) < q).double()
    return _random_fill(self, sample, generator)


@tensor_method("exponential_")
def exponential_(self, lambd=1.0, *, generator=None):
    from .pointwise.unary import log
    return _random_fill(self, lambda s, d, g: -log(1 - _uniform(s, d, g)) / lambd, generator)


@tensor_method("random_")
def random_(self, from_=0, to=None, *, generator=None):
    if to is None:
        if from_ == 0 or self.dtype.kind == "f":
            from_, to = 0, (2 ** {"float16": 11, "float32": 24}.get(self.dtype.name, 53)
                            if self.dtype.kind == "f" else np.iinfo(self.dtype).max)
        else:
            from_, to = 0, from_
    if from_ >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} "
                           f">= to={to}")
    return _random_fill(self, lambda s, d, g: (_uniform(s, d, g) * (to - from_)).floor() + from_,
                        generator)


@export("poisson")
def poisson(input, generator=None):
    """A Poisson draw with rate ``input`` per entry, in input's dtype."""
    from .._creation import default_generator
    a = input._data
    if a.size and not bool((a >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = (generator or default_generator)._rng(xp_of(a))
    return Tensor._make(rng.poisson(a.astype(np.float64)).astype(a.dtype))


OPS: list = []


# -- Tensor methods: more random fills, and sampling from the tensor ------------------------------
@tensor_method("normal_")
def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    from .._creation import randn
    z = randn(self._data.shape, dtype=self._data.dtype, device=self.device, generator=generator)
    return inplace(self, lambda t: t * 0 + (z * std + mean), raw=lambda a: a.__setitem__(
        Ellipsis, z._data * a.dtype.type(std) + a.dtype.type(mean)))


@tensor_method("uniform_")
def _uniform_(self, a=0.0, b=1.0, *, generator=None):
    from .._creation import rand
    u = rand(self._data.shape, dtype=self._data.dtype, device=self.device, generator=generator)
    return inplace(self, lambda t: t * 0 + (u * (b - a) + a), raw=lambda x: x.__setitem__(
        Ellipsis, u._data * x.dtype.type(b - a) + x.dtype.type(a)))


@tensor_method("geometric_")
def _geometric_(self, p, *, generator=None):
    from .pointwise import unary as un
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    # the number of Bernoulli(p) trials up to the first success: ceil(log(u) / log(1 - p))
    return _random_fill(self, lambda s, d, g: (un.log(1 - _uniform(s, d, g)) / math.log1p(-p))
                        .ceil().clamp(min=1), generator)


@tensor_method("cauchy_")
def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    from .pointwise import unary as un
    return _random_fill(self, lambda s, d, g: median + sigma * un.tan(
        math.pi * (_uniform(s, d, g) - 0.5)), generator)


@tensor_method("log_normal_")
def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    from .._creation import randn
    from .pointwise import unary as un
    return _random_fill(self, lambda s, d, g: un.exp(
        randn(s, dtype=np.float64, device=d, generator=g) * std + mean), generator)


def _creation_fn(name):
    from .. import _creation
    return getattr(_creation, name)


tensor_method("bernoulli")(lambda s, p=None, *, generator=None: _creation_fn("bernoulli")(
    s, p, generator=generator))
tensor_method("multinomial")(lambda s, n, replacement=False, *, generator=None: _creation_fn(
    "multinomial")(s, n, replacement, generator=generator))
