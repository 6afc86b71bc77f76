"""3-D convolutions, pools and batch norm; max unpooling and Lp pooling in 1, 2 and 3-D. Each
module calls the function of the same name in ``functional``, keeping PyTorch's attributes
and reprs."""
from __future__ import annotations

from . import functional as F
from .conv_layers import AdaptiveMaxPool1d, _ConvTransposeNd
from .layers import _PADDING_MODES, AvgPool2d, MaxPool2d, _BatchNorm, _ConvNd
from .module import Module
from .more_layers import AdaptiveAvgPool1d

__all__ = ["Conv3d", "ConvTranspose3d", "MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d",
           "AdaptiveMaxPool3d", "BatchNorm3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d"]


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


class ConvTranspose3d(_ConvTransposeNd):
    """The adjoint of Conv3d in its input, over (N, C, D, H, W) inputs."""
    _dims = 3

    def forward(self, input, output_size=None):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding,
                                  self._output_padding(input, output_size), self.groups,
                                  self.dilation)


class MaxPool3d(MaxPool2d):
    """The max of each (kd, kh, kw) window (stride defaults to the kernel size)."""

    def forward(self, input):
        return F.max_pool3d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool3d(AvgPool2d):
    """The mean of each (kd, kh, kw) window (stride defaults to the kernel size)."""

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool3d(AdaptiveMaxPool1d):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs."""
    _dims = (5,)


def _ntuple(v, n):
    return (v,) * n if isinstance(v, int) else tuple(v)


class _MaxUnpoolNd(Module):
    """The partial inverse of MaxPool{n}d: values back at their indices, zeros elsewhere."""
    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, n)
        self.padding = _ntuple(padding, n)

    def forward(self, input, indices, output_size=None):
        fn = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[self._dims - 1]
        return fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}")


class MaxUnpool1d(_MaxUnpoolNd):
    _dims = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _dims = 2


class MaxUnpool3d(_MaxUnpoolNd):
    _dims = 3


class _LPPoolNd(Module):
    """(sum over each window of x^p)^(1 / p), p = ``norm_type``."""
    _dims = 2

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        fn = (F.lp_pool1d, F.lp_pool2d, F.lp_pool3d)[self._dims - 1]
        return fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _dims = 1


class LPPool2d(_LPPoolNd):
    _dims = 2


class LPPool3d(_LPPoolNd):
    _dims = 3
