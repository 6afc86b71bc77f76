"""``gpugrad.nn.init``: in-place initialisers (run under no_grad, so leaves may be filled)."""
from __future__ import annotations

import math
import warnings

from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "eye_", "orthogonal_", "dirac_", "sparse_"]


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                        "conv_transpose2d", "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))"""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2), std = gain * sqrt(2 / (fan_in + fan_out))"""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-b, b), b = gain * sqrt(3 / fan)"""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2), std = gain / sqrt(fan)"""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std) restricted to [a, b] (absolute bounds, as PyTorch), drawn by inverting the
    normal CDF over the allowed range: U(2 cdf(a) - 1, 2 cdf(b) - 1), then erfinv."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        cdf = lambda v: 0.5 * (1 + math.erf((v - mean) / (std * math.sqrt(2))))   # noqa: E731
        tensor.uniform_(2 * cdf(a) - 1, 2 * cdf(b) - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0)).add_(mean)
        return tensor.clamp_(min=a, max=b)


def eye_(tensor):
    """The identity in a 2-D tensor (ones on the diagonal)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._creation import eye
    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype, device=tensor.device))


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix from the QR factorisation of a normal one (rows flattened
    beyond the first dimension), scaled by ``gain``."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    import numpy as np

    from .. import _backend
    from .._creation import float64, randn
    if tensor.numel() == 0:
        return tensor
    rows, cols = tensor.shape[0], tensor.numel() // tensor.shape[0]
    a = randn(rows, cols, dtype=float64, generator=generator)._data
    a = a.T if rows < cols else a
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))            # a unique, uniformly distributed q
    q = q.T if rows < cols else q
    xp = _backend.xp_of(tensor._data)
    with no_grad():
        tensor._data[...] = xp.asarray((gain * q).reshape(tensor.shape), dtype=tensor.dtype)
        tensor._version_box().v += 1
    return tensor



def dirac_(tensor, groups=1):
    """The identity of a {3, 4, 5}-D convolution weight: w[g*out + d, d, centre...] = 1 for
    every group g and d < min(out channels per group, in channels), zero elsewhere."""
    dims = tensor.ndim
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if tensor.shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = tensor.shape[0] // groups
    centre = tuple(n // 2 for n in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(out_per_group, tensor.shape[1])):
                tensor[(g * out_per_group + d, d) + centre] = 1
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D matrix of N(0, std^2) entries with ceil(sparsity * rows) zeros in every column, at
    rows drawn by a random permutation (from ``generator`` as well, unlike PyTorch, which
    draws them from the global generator)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    from .._creation import randperm
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for col in range(cols):
            zero_rows = randperm(rows, generator=generator, device=tensor.device)[:num_zeros]
            tensor[zero_rows, col] = 0
    return tensor


# -- the old names PyTorch still keeps, deprecated --------------------------------------------
def _make_deprecate(fn):
    new_name = fn.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    deprecated_init.__name__ = deprecated_init.__qualname__ = old_name
    deprecated_init.__doc__ = f"{old_name}(...): deprecated, use ``nn.init.{new_name}``."
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
