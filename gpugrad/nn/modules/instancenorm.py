"""Instance normalisation in 1, 2 and 3-D and its lazy forms."""
from __future__ import annotations

import warnings

from ..functional.normalization import instance_norm
from .batchnorm import _BatchNorm, _LazyNorm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_BatchNorm):
    """Shared by InstanceNorm1d/2d/3d: no affine parameters and no running statistics unless
    asked; an unbatched input (one dimension fewer) is taken as a batch of one."""
    _no_batch = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias)

    def forward(self, input):
        dims = (self._no_batch, self._no_batch + 1)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D "
                             "input)")
        feature_dim = input.dim() - self._no_batch
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        unbatched = input.dim() == self._no_batch
        x = input.unsqueeze(0) if unbatched else input
        y = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                          self.training or not self.track_running_stats,
                          self.momentum if self.momentum is not None else 0.0, self.eps)
        return y.squeeze(0) if unbatched else y


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or unbatched (C, L) input."""
    _no_batch = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or unbatched (C, H, W) input."""
    _no_batch = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or unbatched (C, D, H, W) input."""
    _no_batch = 4


class _LazyInstanceNorm(_LazyNorm):
    """InstanceNorm whose num_features is the first input's channel dimension (dim 1, or dim 0
    of an unbatched input); no affine parameters and no running statistics unless asked."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None):
        super().__init__(eps, momentum, affine, track_running_stats, device, dtype)

    def initialize_parameters(self, input):
        dims = (self._no_batch, self._no_batch + 1)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D "
                             "input)")
        # NOTE: PyTorch reads dim 1 even for unbatched input; the channel dimension is meant
        channels = input.shape[input.dim() - self._no_batch]
        super().initialize_parameters(input.unsqueeze(0) if input.dim() == self._no_batch
                                      else input)
        self.num_features = channels


class LazyInstanceNorm1d(_LazyInstanceNorm, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyInstanceNorm, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyInstanceNorm, InstanceNorm3d):
    cls_to_become = InstanceNorm3d
