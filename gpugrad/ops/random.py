"""In-place random sampling: bernoulli_, exponential_, random_; and poisson."""
from __future__ import annotations

import numpy as np

from .._backend import xp_of
from ..tensor import Tensor


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


def bernoulli_(self, p=0.5, *, generator=None):
    def sample(s, dev, g):
        q = p.to(dev).double() if isinstance(p, Tensor) else p
        return (_uniform(s, dev, g) < q).double()
    return _random_fill(self, sample, generator)


def exponential_(self, lambd=1.0, *, generator=None):
    from .pointwise.unary import log
    return _random_fill(self, lambda s, d, g: -log(1 - _uniform(s, d, g)) / lambd, generator)


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


def poisson(input, generator=None):
    """A Poisson draw with rate ``input`` per entry, in input's dtype."""
    from .._creation import default_generator
    a = input._data
    if a.size and not bool((a >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    rng = (generator or default_generator)._rng(xp_of(a))
    return Tensor._make(rng.poisson(a.astype(np.float64)).astype(a.dtype))


OPS: list = []
