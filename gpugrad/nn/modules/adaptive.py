"""The remaining layers and losses: CTCLoss, AdaptiveLogSoftmaxWithLoss, FractionalMaxPool2d/3d,
SyncBatchNorm (one process: a BatchNorm), DataParallel (one device or none: the module itself),
and the deprecated NLLLoss2d and Container. Each is composed from existing ops."""
from __future__ import annotations

import warnings
from collections import namedtuple

from .. import _creation
from ..ops.ctc import ctc_loss
from ..ops.fractional import (
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d_with_indices,
)
from ..ops.reduce import log_softmax
from ..ops.shape import cat
from .containers import ModuleList, Sequential
from .layers import Linear, _BatchNorm
from .loss import NLLLoss, _Loss
from .module import Module

__all__ = ["CTCLoss", "AdaptiveLogSoftmaxWithLoss", "FractionalMaxPool2d", "FractionalMaxPool3d",
           "SyncBatchNorm", "DataParallel", "NLLLoss2d", "Container"]


class CTCLoss(_Loss):
    """The connectionist temporal classification loss (``F.ctc_loss``)."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                        self.reduction, self.zero_infinity)


class NLLLoss2d(NLLLoss):
    """Deprecated: ``NLLLoss`` (which takes (N, C, H, W) input)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
                      "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss "
                      "for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """Deprecated: a Module holding the modules given as keywords."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented "
                      "in `nn.Module`. Subclass that instead.", FutureWarning, stacklevel=2)
        for key, value in kwargs.items():
            self.add_module(key, value)


# -- fractional max pooling -------------------------------------------------------------------
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


# -- batch norm across processes ----------------------------------------------------------------
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


# -- data parallelism -------------------------------------------------------------------------
class DataParallel(Module):
    """Runs ``module`` on the first of ``device_ids``. With no GPU it simply calls the module, as
    PyTorch does; with one it moves the inputs there first. (PyTorch splits the batch across
    several GPUs; gpugrad runs it whole on the first.)"""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        from .. import cuda
        self.module, self.dim = module, dim
        if not cuda.is_available():
            self.device_ids, self.output_device = [], None
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        self.device_ids = [d if isinstance(d, int) else d.index for d in device_ids]
        self.output_device = self.device_ids[0] if output_device is None else output_device
        first = f"cuda:{self.device_ids[0]}"
        for t in list(module.parameters()) + list(module.buffers()):
            if str(t.device) != first:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{first} (device_ids[0]) but found one of them on device: "
                                   f"{t.device}")

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        device = f"cuda:{self.device_ids[0]}"

        def move(v):
            from ..tensor import Tensor
            if isinstance(v, Tensor):
                return v.to(device)
            if isinstance(v, (list, tuple)):
                return type(v)(move(a) for a in v)
            if isinstance(v, dict):
                return {k: move(a) for k, a in v.items()}
            return v
        return self.module(*move(inputs), **move(kwargs))


# -- adaptive softmax ---------------------------------------------------------------------------
_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax for many classes (Grave et al., 2016): the ``cutoffs[0]`` most frequent
    classes and one entry per tail cluster share a head; cluster i's classes get log p(cluster)
    + log p(class | cluster) from a low-rank projection of size in_features // div_value^(i+1)."""

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in "
                             "an increasing order, where each value is between 1 and "
                             "n_classes-1")
        kw = dict(device=device, dtype=dtype)
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs, self.div_value, self.head_bias = cutoffs + [n_classes], div_value, head_bias
        self.shortlist_size, self.n_clusters = self.cutoffs[0], len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs "
                                   f"with size {tuple(input_.shape)}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs "
                                   f"with size {tuple(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        n = target.size(0)
        output = _creation.zeros(n, dtype=input.dtype, device=input.device)
        gather = target.clone()   # the head column each row reads: its class or its cluster
        used = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i > 0:
                local = target.index_select(0, rows) - low
                logp = log_softmax(self.tail[i - 1](input.index_select(0, rows)), 1)
                picked = logp.gather(1, local.unsqueeze(1)).squeeze(1)
                output = output.index_add(0, rows, picked)
                gather = gather.masked_fill(mask, self.shortlist_size + i - 1)
            used += rows.numel()
        if used != n:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = log_softmax(self.head(input), 1)
        output = output + head_logprob.gather(1, gather.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logprob = log_softmax(head_output, 1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            logp = log_softmax(self.tail[i](input), 1)
            parts.append(logp + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input):
        """(N, n_classes) log-probabilities of every class (or (n_classes,) unbatched)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """The most likely class of each row: the head's argmax when it is a shortlist class,
        else the argmax of the full distribution."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        output = head_output.argmax(1)
        outside = output >= self.shortlist_size
        if bool(outside.any()):
            full = self._full_log_prob(x, head_output).argmax(1)
            output = full.where(outside, output)
        return output if batched else output.squeeze(0)
