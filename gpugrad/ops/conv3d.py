"""3-D convolutions and transposed convolutions: conv.py's ConvolutionBackward0 over three
spatial dimensions (N, C, D, H, W), with PyTorch's checks and messages."""
from __future__ import annotations

from .conv import _conv, _conv_transpose


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, t, i, j] = sum_{c, a, b, e} x[n, c, s t + d a, s i + d b, s j + d e]
    w[o, c, a, b, e] + bias[o] (x zero-padded, c over o's group)"""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The adjoint of conv3d in its input (weight (in, out / groups, kd, kh, kw))."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3)


OPS: list = []
