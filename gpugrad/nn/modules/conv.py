"""Convolutions in 1, 2 and 3-D, their transposes and their lazy forms; each calls the function
of the same name in ``functional``, keeping PyTorch's attributes and reprs."""
from __future__ import annotations

from ... import _creation
from .. import functional as F
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin, _placeholders
from .linear import _reset_weight_and_bias
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


class _ConvNd(Module):
    """Shared by Conv1d and Conv2d: weight (out, in, *kernel) and bias, PyTorch's init."""
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        n = self._dims
        as_tuple = lambda v: (v,) * n if isinstance(v, int) else tuple(v)   # noqa: E731
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {{'zeros', 'replicate', 'reflect', "
                             f"'circular'}}, but got padding_mode='{padding_mode}'")
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("valid", "same"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of "
                                 "{'valid', 'same'}")
            if padding == "same" and any(s != 1 for s in as_tuple(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        self.in_channels, self.out_channels, self.transposed = in_channels, out_channels, False
        self.kernel_size, self.stride = as_tuple(kernel_size), as_tuple(stride)
        self.padding = padding if isinstance(padding, str) else as_tuple(padding)
        self.dilation, self.groups, self.padding_mode = as_tuple(dilation), groups, padding_mode
        kw = dict(device=device, dtype=dtype)
        self.weight = Parameter(_creation.empty(
            (out_channels, in_channels // groups) + self.kernel_size, **kw))
        self.register_parameter("bias", Parameter(_creation.empty(out_channels, **kw))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input):
        conv = F.conv1d if self._dims == 1 else F.conv2d
        if self.padding_mode != "zeros":   # pad first (PyTorch's order of pairs), then convolve
            input = F.pad(input, self._reversed_padding_repeated_twice(), _PADDING_MODES[
                self.padding_mode])
            return conv(input, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def _reversed_padding_repeated_twice(self):
        """F.pad's pairs, last dimension first ('same': the odd pixel goes after)."""
        pairs = []
        for d, k, p in zip(self.dilation, self.kernel_size, (
                (None,) * self._dims if isinstance(self.padding, str) else self.padding)):
            if self.padding == "same":
                total = d * (k - 1)
                pairs.append((total // 2, total - total // 2))
            else:
                pairs.append((0, 0) if self.padding == "valid" else (p, p))
        return tuple(v for pair in reversed(pairs) for v in pair)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


_PADDING_MODES = {"zeros": "constant", "reflect": "reflect", "replicate": "replicate",
                  "circular": "circular"}


class Conv1d(_ConvNd):
    """1-D convolution (cross-correlation) over (N, C, L) inputs."""
    _dims = 1


class Conv2d(_ConvNd):
    """2-D convolution (cross-correlation) over (N, C, H, W) inputs."""
    _dims = 2


class Conv3d(_ConvNd):
    """3-D convolution (cross-correlation) over (N, C, D, H, W) inputs."""
    _dims = 3

    def forward(self, input):
        if self.padding_mode != "zeros":   # pad first (PyTorch's order of pairs), then convolve
            input = F.pad(input, self._reversed_padding_repeated_twice(),
                          _PADDING_MODES[self.padding_mode])
            return F.conv3d(input, self.weight, self.bias, self.stride, 0, self.dilation,
                            self.groups)
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


class _ConvTransposeNd(Module):
    """Weight (in, out / groups, *kernel) and bias (out), PyTorch's initialisation."""
    _dims = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        n = self._dims
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {type(self).__name__}')
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = _ntuple(kernel_size, n), _ntuple(stride, n)
        self.padding, self.dilation = _ntuple(padding, n), _ntuple(dilation, n)
        self.output_padding, self.groups = _ntuple(output_padding, n), groups
        self.transposed, self.padding_mode = True, padding_mode
        kw = dict(device=device, dtype=dtype)
        self.weight = Parameter(_creation.empty(
            (in_channels, out_channels // groups) + self.kernel_size, **kw))
        self.register_parameter("bias", Parameter(_creation.empty(out_channels, **kw))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_weight_and_bias(self.weight, self.bias)

    def _output_padding(self, input, output_size):
        """``output_padding``, or the one that makes the output ``output_size`` (spatial, or
        with the leading dimensions)."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        lead = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must have "
                             f"{n} or {lead + n} elements (got {len(output_size)})")
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [a + s - 1 for a, s in zip(lo, self.stride)]
        for size, a, b in zip(output_size, lo, hi):
            if size < a or size > b:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of "
                                 f"{input.shape[lead:]})")
        return tuple(size - a for size, a in zip(output_size, lo))

    def forward(self, input, output_size=None):
        conv = F.conv_transpose1d if self._dims == 1 else F.conv_transpose2d
        return conv(input, self.weight, self.bias, self.stride, self.padding,
                    self._output_padding(input, output_size), self.groups, self.dilation)

    def extra_repr(self):
        n = self._dims
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + (", bias=False" if self.bias is None else "")


class ConvTranspose1d(_ConvTransposeNd):
    """The adjoint of Conv1d in its input, over (N, C, L) inputs."""
    _dims = 1


class ConvTranspose2d(_ConvTransposeNd):
    """The adjoint of Conv2d in its input, over (N, C, H, W) inputs."""
    _dims = 2


class ConvTranspose3d(_ConvTransposeNd):
    """The adjoint of Conv3d in its input, over (N, C, D, H, W) inputs."""
    _dims = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class _LazyConvMixin(LazyModuleMixin):
    """Conv / ConvTranspose whose in_channels is the first input's channel dimension."""

    def __init__(self, out_channels, kernel_size, *args, device=None, dtype=None, **kw):
        super().__init__(0, 0, kernel_size, *args, device=device, dtype=dtype, **kw)
        self.out_channels = out_channels
        _placeholders(self, ("weight", "bias"), UninitializedParameter, device, dtype)

    def initialize_parameters(self, input, *args, **kwargs):
        n = self.cls_to_become._dims
        self.in_channels = input.shape[1] if input.ndim == n + 2 else input.shape[0]
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if not self.has_uninitialized_params():
            return
        g = self.groups
        lead = ((self.in_channels, self.out_channels // g) if self.transposed else
                (self.out_channels, self.in_channels // g))
        self.weight.materialize(lead + tuple(self.kernel_size))
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))
        self.reset_parameters()


class _LazyConv(_LazyConvMixin):
    transposed = False

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(out_channels, kernel_size, stride, padding, output_padding, groups,
                         bias, dilation, padding_mode, device=device, dtype=dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
