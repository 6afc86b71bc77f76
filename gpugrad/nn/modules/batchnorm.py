"""Batch normalisation in 1, 2 and 3-D, SyncBatchNorm and the lazy batch norms."""
from __future__ import annotations

from ... import _creation
from .. import functional as F
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin, _placeholders
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class _BatchNorm(Module):
    """Normalise each channel (dim 1) by the batch's statistics in training, by running ones
    (updated in training) in eval; then scale and shift."""
    _dims: tuple = ()
    _version = 2   # PyTorch's, recorded in state_dict()._metadata

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        kw = dict(device=device, dtype=dtype)
        self.register_parameter(
            "weight", Parameter(_creation.ones(num_features, **kw)) if affine else None)
        self.register_parameter(
            "bias", Parameter(_creation.zeros(num_features, **kw)) if affine and bias else None)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, **kw))
            self.register_buffer("running_var", _creation.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 _creation.tensor(0, dtype=_creation.long, device=device))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def forward(self, input):
        if input.ndim not in self._dims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._dims)} input (got "
                             f"{input.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:   # a cumulative average of every batch so far
                factor = 1.0 / self.num_batches_tracked.item()
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) inputs."""
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) inputs."""
    _dims = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) inputs."""
    _dims = (5,)


class _LazyNorm(LazyModuleMixin):
    """BatchNorm whose num_features is the first input's channel dimension."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None):
        super().__init__(0, eps, momentum, affine, track_running_stats, device, dtype)
        _placeholders(self, ("weight", "bias"), UninitializedParameter, device, dtype)
        _placeholders(self, ("running_mean", "running_var"), UninitializedBuffer, device, dtype)

    def _size(self):
        return self.num_features

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            self.reset_running_stats()
            if self.affine:
                self.weight.fill_(1)
                self.bias.zero_()

    def initialize_parameters(self, input):
        self.num_features = input.shape[1]
        if not self.has_uninitialized_params():
            return
        for name in ("weight", "bias", "running_mean", "running_var"):
            v = getattr(self, name)
            if v is not None:
                v.materialize((self.num_features,))
        self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    cls_to_become = BatchNorm3d


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation whose statistics span every process of a group; in one process (the
    only case gpugrad runs) it is exactly a BatchNorm over any (N, C, *) input."""
    _dims = tuple(range(2, 64))

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias)
        self.process_group = process_group

    def forward(self, input):
        if input.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
        if input.shape[1] == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d in it replaced by a SyncBatchNorm sharing its
        parameters and running statistics."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
