"""Pooling layers: max, average and adaptive pooling in 1, 2 and 3-D, max unpooling, Lp pooling
and fractional max pooling. Each module calls the function of the same name in
``functional``, keeping PyTorch's attributes and reprs."""
from __future__ import annotations

from ...ops.nn.pooling import fractional_max_pool2d_with_indices, fractional_max_pool3d_with_indices
from .. import functional as F
from ..functional.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d
from .module import Module

__all__ = ["MaxPool2d", "AvgPool2d", "MaxPool1d", "AvgPool1d", "MaxPool3d", "AvgPool3d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
           "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"]


class MaxPool2d(Module):
    """The max of each kernel window (stride defaults to the kernel size)."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """The mean of each kernel window (stride defaults to the kernel size)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(MaxPool2d):
    """The max of each kernel window of (N, C, L) (stride defaults to the kernel size)."""

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            self.ceil_mode, self.return_indices)


class AvgPool1d(AvgPool2d):
    """The mean of each kernel window of (N, C, L) (stride defaults to the kernel size); the
    sizes are kept as 1-tuples, as PyTorch's module keeps them."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__(_ntuple(kernel_size, 1),
                         _ntuple(stride if stride is not None else kernel_size, 1),
                         _ntuple(padding, 1), ceil_mode, count_include_pad)
        del self.divisor_override   # PyTorch's AvgPool1d has none

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


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


class AdaptiveMaxPool1d(Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool2d(AdaptiveMaxPool1d):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(AdaptiveMaxPool1d):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return adaptive_avg_pool1d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(AdaptiveAvgPool1d):
    def forward(self, input):
        return adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(AdaptiveAvgPool1d):
    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


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


class _FractionalMaxPoolNd(Module):
    """Max pooling over pseudo-randomly placed windows (``F.fractional_max_pool2d/3d``)."""
    _ndim, _name = 2, "FractionalMaxPool2d"

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        self.kernel_size, self.return_indices = kernel_size, return_indices
        self.output_size, self.output_ratio = output_size, output_ratio
        self.register_buffer("_random_samples", _random_samples)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{self._name} requires specifying either an output size, or "
                             "a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None:
            ratio = ((output_ratio,) * self._ndim if isinstance(output_ratio, (int, float))
                     else tuple(output_ratio))
            self.output_ratio = ratio
            if not all(0 < r < 1 for r in ratio):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = (fractional_max_pool2d_with_indices if self._ndim == 2
                else fractional_max_pool3d_with_indices)
        out = pool(input, self.kernel_size, self.output_size, self.output_ratio,
                   self.return_indices, self._random_samples)
        return out if self.return_indices else out[0]


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Max pooling over pseudo-randomly placed windows (``F.fractional_max_pool2d``)."""
    _ndim, _name = 2, "FractionalMaxPool2d"


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D max pooling over pseudo-randomly placed windows (``F.fractional_max_pool3d``)."""
    _ndim, _name = 3, "FractionalMaxPool3d"
